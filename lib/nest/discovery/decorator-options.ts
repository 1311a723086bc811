/**
 * The schedule a `@Cron`/`@Interval` method declares, its decorator options checked (split from
 * chronos.explorer.ts, which finds the methods and declares what they build): the options of
 * `@nestjs/schedule` Chronos does not take, each with why, and the module's defaults under unset ones.
 */
import { checkSpecKeys, REPEAT_KEY_HINTS, specOf, type ScheduleDefinition } from '../../core/scheduler/definition.js';
import { SHARED_SCHEDULE_KEYS } from '../../core/scheduler/definition-check.js';
import { MESSAGES } from '../chronos.messages.js';
import type { ScheduleMetadata, ScheduleOptions } from '../decorators/schedule-options.interface.js';
import { groupOf, plainPayload, queueOf, resolveType } from '../payload-class.js';

// every key of the decorators' options, once: the compiler refuses a key ScheduleOptions lacks and a missing one
const SCHEDULE_OPTION_KEYS = new Set(
  Object.keys({
    ...SHARED_SCHEDULE_KEYS,
    waitForCompletion: true,
    disabled: true,
    dispatch: true,
    distributed: true,
  } satisfies Record<keyof ScheduleOptions, true>),
);
/** Why an option of `@nestjs/schedule` is not accepted, for the message of an unknown key. */
const NOT_ACCEPTED: Record<string, string> = {
  utcOffset: 'use `timeZone` (an IANA zone): a fixed offset cannot follow DST',
  unrefTimeout: 'Chronos timers never keep the process alive beyond shutdown',
  threshold: 'use `catchUp`/`catchUpWindow` (missed triggers are caught up by the next leader)',
  initialDelay: 'triggers are instants every replica agrees on; one that came due before boot is caught up (`catchUp`)',
  lockKey: 'the dedup key of a trigger is always `<name>:<trigger-unix>`; set `name`',
  lockTtlMs: 'the leader lease is the module option `leaderTtl`; the time limit of a handler is `timeout`',
};

/** The module's defaults of a schedule's task (`queue`, `maxRetry`, `timeout`: ms). */
export interface ScheduleDefaults {
  readonly queue: string;
  readonly maxRetry: number;
  readonly timeout: number;
}

/**
 * The definition the decorated method `f` declares with `meta`: undefined when its options have a
 * problem (each reported through `issue`, naming `f.source`; a bad spec beside a bad option is reported
 * too). Its name and spec are checked when it is declared (`SchedulerService.register`).
 */
export function scheduleOf(
  f: { readonly className: string; readonly method: string; readonly source: string },
  meta: ScheduleMetadata,
  defaults: ScheduleDefaults,
  issue: (source: string, message: string, cause?: unknown) => void,
): ScheduleDefinition | undefined {
  const decorator = meta.kind === 'cron' ? 'Cron' : 'Interval';
  const o = meta.options ?? {};
  let ok = true;
  for (const key of Object.keys(o)) {
    if (!SCHEDULE_OPTION_KEYS.has(key)) {
      const hint = Object.hasOwn(NOT_ACCEPTED, key)
        ? NOT_ACCEPTED[key]
        : Object.hasOwn(REPEAT_KEY_HINTS, key)
          ? REPEAT_KEY_HINTS[key]
          : undefined;
      issue(f.source, MESSAGES.invalidOption(f.source, decorator, `option "${key}" is not supported${hint ? `: ${hint}` : ''}`));
      ok = false;
    }
  }
  let overlap = o.overlap;
  if (o.waitForCompletion !== undefined) {
    if (typeof o.waitForCompletion !== 'boolean') {
      issue(
        f.source,
        MESSAGES.invalidOption(
          f.source,
          decorator,
          `waitForCompletion: expected true or false, got ${JSON.stringify(o.waitForCompletion)}`,
        ),
      );
      ok = false;
    } else {
      const implied = o.waitForCompletion ? 'skip' : 'allow';
      if (overlap !== undefined && overlap !== implied) {
        issue(
          f.source,
          MESSAGES.invalidOption(f.source, decorator, `waitForCompletion: ${o.waitForCompletion} contradicts overlap: '${overlap}'`),
        );
        ok = false;
      }
      overlap = implied;
    }
  }
  // @nestjs/schedule's `distributed: true` is what Chronos always does: accepted as a no-op
  if (o.distributed !== undefined && o.distributed !== true) {
    issue(
      f.source,
      MESSAGES.invalidOption(
        f.source,
        decorator,
        'distributed: every Chronos schedule fires once per trigger across the fleet; only `true` (or leaving it out) is accepted',
      ),
    );
    ok = false;
  }
  if (o.disabled !== undefined && typeof o.disabled !== 'boolean') {
    issue(f.source, MESSAGES.invalidOption(f.source, decorator, `disabled: expected true or false, got ${JSON.stringify(o.disabled)}`));
    ok = false;
  }
  let type: string | undefined;
  if (o.dispatch !== undefined) {
    type = resolveType(o.dispatch);
    if (!type || type.length > 200) {
      issue(
        f.source,
        MESSAGES.invalidOption(f.source, decorator, `dispatch: expected a task type or a payload class, got ${String(o.dispatch)}`),
      );
      ok = false;
    }
  }
  const name = o.name ?? `${f.className}.${f.method}`;
  const spec = meta.kind === 'cron' ? meta.spec : { every: meta.spec };
  if (typeof meta.spec === 'object' && meta.spec !== null) {
    try {
      checkSpecKeys(meta.spec, name); // BullMQ's repeat options (`{ every, limit }`, `{ pattern }`) as the first argument
    } catch (err) {
      issue(f.source, MESSAGES.invalidSchedule(f.source, (err as Error).message), err);
      return undefined;
    }
  }
  if (meta.kind === 'cron' && typeof meta.spec !== 'string') {
    issue(f.source, MESSAGES.invalidOption(f.source, decorator, `expects a cron expression string, got ${JSON.stringify(meta.spec)}`));
    return undefined;
  }
  if (meta.kind === 'interval' && typeof meta.spec !== 'number' && typeof meta.spec !== 'string') {
    // BullMQ's `repeat: { every }` given as the period: everySpec said '"[object Object]": … got object'
    const every: unknown = typeof meta.spec === 'object' && meta.spec !== null ? (meta.spec as { every?: unknown }).every : undefined;
    const hint =
      typeof every === 'number' || typeof every === 'string' ? `: give the period itself, @Interval(${JSON.stringify(every)})` : '';
    const got = JSON.stringify(meta.spec) ?? String(meta.spec);
    issue(f.source, MESSAGES.invalidOption(f.source, decorator, `expects the period (ms, or a duration such as '10s'), got ${got}${hint}`));
    return undefined;
  }
  const def: ScheduleDefinition = {
    name,
    spec: spec as ScheduleDefinition['spec'],
    queue: o.queue ?? (o.dispatch && typeof o.dispatch === 'function' ? queueOf(o.dispatch) : undefined) ?? defaults.queue,
    type: type ?? name,
    maxRetry: o.maxRetry ?? defaults.maxRetry,
    timeout: o.timeout ?? defaults.timeout,
  };
  if (o.timeZone !== undefined) def.timeZone = o.timeZone;
  if (o.payload !== undefined) def.payload = plainPayload(typeof o.dispatch === 'function' ? o.dispatch : undefined, o.payload);
  if (o.catchUp !== undefined) def.catchUp = o.catchUp;
  if (o.catchUpWindow !== undefined) def.catchUpWindow = o.catchUpWindow;
  if (o.catchUpCap !== undefined) def.catchUpCap = o.catchUpCap;
  if (overlap !== undefined) def.overlap = overlap;
  for (const key of ['jitter', 'startAt', 'endAt', 'maxRuns'] as const) if (o[key] !== undefined) Object.assign(def, { [key]: o[key] });
  if (o.labels !== undefined) def.labels = o.labels;
  if (o.group !== undefined) def.group = o.group;
  else if (typeof o.dispatch === 'function' && o.payload !== undefined) {
    const g = groupOf(o.dispatch, o.payload); // a payload class's static group, of the fixed payload
    if (g !== undefined) def.group = g as string;
  }
  if (!ok) {
    // an option's problem stops the declaration, not the spec's check: every problem of the decorator in one error
    try {
      specOf({ name, spec: def.spec, timeZone: o.timeZone }, 'UTC');
    } catch (err) {
      issue(f.source, MESSAGES.invalidSchedule(f.source, (err as Error).message), err);
    }
    return undefined;
  }
  return def;
}
