// The one option checker (lib/core/runtime/options.ts): its messages, and that the name rule and the
// time-zone rule are the same in every place that takes a name or a zone (server, scheduler and
// client options, schedule definitions, spec parsing, the Inspector, the Nest module options).
import { InvalidOptionsError, InvalidScheduleError, InvalidTaskStateError } from '../../lib/core/runtime/errors.js';
import { Inspector } from '../../lib/core/admin/inspector.js';
import {
  assertName,
  describeProblem,
  nameProblem,
  NAME_RULE,
  OptionProblems,
  show,
  TIMER_MAX_MS,
  type OptionProblem,
} from '../../lib/core/runtime/options.js';
import { QueueClient, checkClientOptions, type ClientOptions } from '../../lib/core/queue/client.js';
import { checkServerOptions, WEIGHT_MAX } from '../../lib/core/worker/server-options.js';
import type { ScheduleDefinition } from '../../lib/core/scheduler/definition.js';
import { toStored } from '../../lib/core/scheduler/definition-check.js';
import { checkSchedulerOptions } from '../../lib/core/scheduler/scheduler-options.js';
import { everySpec, parseSpec } from '../../lib/core/scheduler/spec.js';
import { isTimeZone, TIME_ZONE_RULE } from '../../lib/core/scheduler/time-zones.js';
import { ChronosConfigError } from '../../lib/nest/errors/chronos-config.error.js';
import { resolveOptions } from '../../lib/nest/options/resolve-options.js';
import { redisUrl } from '../helpers/redis.js';

describe('OptionProblems', () => {
  test('every check passes an absent value and reports `<key>: expected …, got <value>`', () => {
    const p = new OptionProblems();
    const absent = [p.int('a', undefined, 1), p.bool('b', undefined), p.name('c', undefined), p.timeZone('d', undefined)];
    expect([...absent, p.fn('e', undefined, ''), p.oneOf('f', undefined, ['x'])]).toEqual([true, true, true, true, true, true]);
    expect(p.list).toEqual([]);
    p.int('leaderTtl', 500, 1000, 'ms');
    p.int('concurrency', 1.5, 1);
    p.int('concurrency', '4', 1);
    p.bool('worker', 'yes');
    p.name('namespace', 'has space');
    p.name('queue', undefined, true);
    p.timeZone('timeZone', 'Mars/Olympus');
    p.fn('backoff', 1000, '(retried, error, task) => ms');
    p.oneOf('catchUp', 'sometimes', ['all', 'latest', 'none']);
    p.unknownKeys({ concurency: 4, ok: 1 }, new Set(['ok']));
    p.unknownKeys({ eligble: false }, new Set(['eligible']), 'scheduler');
    expect(p.issues).toEqual([
      'leaderTtl: expected an integer >= 1000 (ms), got 500',
      'concurrency: expected an integer >= 1, got 1.5',
      'concurrency: expected an integer >= 1, got "4"',
      'worker: expected true or false, got "yes"',
      'namespace: expected 1-200 characters of [A-Za-z0-9_.:-], not "." or "..", got "has space"',
      'queue: expected 1-200 characters of [A-Za-z0-9_.:-], not "." or "..", got undefined',
      'timeZone: expected an IANA time zone such as "Europe/Budapest" or "UTC", got "Mars/Olympus"',
      'backoff: expected a function (retried, error, task) => ms, got 1000',
      "catchUp: expected 'all', 'latest' or 'none', got \"sometimes\"",
      'unknown option "concurency"',
      'scheduler: unknown option "eligble"',
    ]);
    expect(() => p.throwIfAny('test options')).toThrow(InvalidOptionsError);
    expect(() => p.throwIfAny('test options')).toThrow(/^Invalid test options \(11 problems\):\n {2}- leaderTtl: /);
  });
});

describe("timer options: at most Node's longest timer (trial 8: a leaderTtl of 2^32 failed every lease call, a heartbeat of 2^31 spun)", () => {
  const issues = (c: { problems: readonly OptionProblem[] }) => c.problems.map((x) => describeProblem(x));
  const rule = (min: number) => `an integer from ${min} to ${TIMER_MAX_MS} (ms; Node's longest timer, about 24.8 days)`;
  test('the scheduler and server timers refuse a value above 2^31 - 1, naming it; the longest accepted is kept', () => {
    const big = 2 ** 32;
    expect(issues(checkSchedulerOptions({ leaderTtl: big, heartbeatInterval: TIMER_MAX_MS + 1 }))).toEqual([
      `leaderTtl: expected ${rule(1000)}, got ${big}`,
      `heartbeatInterval: expected ${rule(100)}, got ${TIMER_MAX_MS + 1}`,
    ]);
    const server = checkServerOptions({
      shutdownTimeout: big,
      visibilityTimeout: big,
      recoverInterval: big,
      forwardInterval: big,
      blockTimeout: big,
    });
    expect(issues(server).map((i) => i.split(':')[0])).toEqual([
      'shutdownTimeout',
      'visibilityTimeout',
      'recoverInterval',
      'forwardInterval',
      'blockTimeout',
    ]);
    expect(issues(checkServerOptions({ visibilityTimeout: TIMER_MAX_MS }))).toEqual([]);
    // a Redis TTL is no Node timer: a dedup key may live longer
    expect(issues(checkServerOptions({ deadMaxAge: big }))).toEqual([]);
  });

  test('the Nest module refuses them as a ChronosConfigError naming the value', () => {
    expect(() => resolveOptions({ connection: redisUrl(), leaderTtl: 2 ** 32 })).toThrow(ChronosConfigError);
    expect(() => resolveOptions({ connection: redisUrl(), visibilityTimeout: 2 ** 32 })).toThrow(
      /visibilityTimeout: expected an integer from 100 to 2147483647/,
    );
  });
});

describe('integer options: at most 2^53 - 1 (trial 24: concurrency 1e300 reached XREADGROUP as COUNT 1e+300, and the server never fetched)', () => {
  const issues = (c: { problems: readonly OptionProblem[] }) => c.problems.map((x) => describeProblem(x));
  const max = Number.MAX_SAFE_INTEGER;
  test('server, client and enqueue refuse an integer past 2^53 - 1, naming it; 2^53 - 1 passes', async () => {
    expect(issues(checkServerOptions({ concurrency: 1e300, maxDeliveries: 2 ** 53, deadMaxCount: 1e21, deadMaxAge: 1e300 }))).toEqual([
      `concurrency: expected an integer from 1 to ${max}, got 1e+300`,
      `maxDeliveries: expected an integer from 1 to ${max}, got ${2 ** 53}`,
      `deadMaxCount: expected an integer from 0 to ${max}, got 1e+21`,
      `deadMaxAge: expected an integer from 0 to ${max} (ms), got 1e+300`,
    ]);
    expect(issues(checkServerOptions({ concurrency: max, maxDeliveries: max, deadMaxCount: max, deadMaxAge: max }))).toEqual([]);
    // a queue's weight was only an integer (trial 26: 1e300 was taken): the shared check, bounded at WEIGHT_MAX
    expect(issues(checkServerOptions({ queues: { mail: 1e300, sms: WEIGHT_MAX + 1, push: 0.5, ok: WEIGHT_MAX } }))).toEqual([
      `queues.mail: expected an integer from 1 to ${WEIGHT_MAX}, got 1e+300`,
      `queues.sms: expected an integer from 1 to ${WEIGHT_MAX}, got ${WEIGHT_MAX + 1}`,
      'queues.push: expected an integer >= 1, got 0.5',
    ]);
    expect(issues(checkClientOptions({ defaults: { maxRetry: 1e300, timeout: 1e300 } }))).toEqual([
      `defaults.maxRetry: expected an integer from 0 to ${max}, got 1e+300`,
      `defaults.timeout: expected an integer from 0 to ${max} (ms), got 1e+300`,
    ]);
    const client = new QueueClient({ connection: redisUrl(), namespace: 'never-written' });
    try {
      await expect(client.enqueue('t', {}, { maxRetry: 2 ** 60 })).rejects.toThrow(
        new RegExp(`maxRetry: expected an integer from 0 to ${max}, got ${2 ** 60}`),
      );
    } finally {
      await client.close();
    }
  });
});

const GOOD_NAMES = ['chronos', 'a', 'app-1_v2.x:y', 'x'.repeat(200)];
const BAD_NAMES: unknown[] = ['', 'has space', 'bad{name}', 'x'.repeat(201), 'tab\t', 'ünïcode', 42, null];

/** The message of the one name check, for `key`. */
describe('the logger option: false, or the ChronosLogger shape (a pino logger failed at start with "this.logger.log is not a function")', () => {
  const issues = (c: { problems: readonly OptionProblem[] }) => c.problems.map((x) => describeProblem(x));
  const pinoLike = { info() {}, warn() {}, error() {}, debug() {}, fatal() {} };
  test('server and scheduler refuse a logger without log(), naming what it lacks and what it has', () => {
    for (const check of [checkServerOptions, checkSchedulerOptions]) {
      const [msg] = issues(check({ logger: pinoLike as never }));
      expect(msg).toMatch(/^logger: expected false or a logger with log\(message\).*, no method log \(wrap it/);
      expect(msg).toContain('["info","warn","error","debug","fatal"]');
      expect(issues(check({ logger: 'console' as never }))[0]).toMatch(/^logger: expected false or a logger .*, got "console"$/);
      expect(issues(check({ logger: { log() {}, warn() {}, error() {}, debug: 1 } as never }))).toHaveLength(1);
    }
  });
  test('false silences, console and absent pass', () => {
    expect(issues(checkServerOptions({ logger: false }))).toEqual([]);
    expect(issues(checkServerOptions({ logger: console }))).toEqual([]);
    const resolved = checkSchedulerOptions({ logger: false });
    expect(resolved.problems).toEqual([]);
    const out: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string) => (out.push(chunk), true)) as typeof process.stdout.write;
    try {
      resolved.value.logger.log('dropped');
      resolved.value.logger.error('dropped too');
    } finally {
      process.stdout.write = write;
    }
    expect(out).toEqual([]);
    expect(checkSchedulerOptions({}).value.logger).not.toBe(resolved.value.logger);
  });
});

const nameMessage = (key: string, v: unknown) => {
  return `${key}: expected ${NAME_RULE}, got ${typeof v === 'string' ? JSON.stringify(v) : String(v)}`;
};

/** The problems of every core options check that takes a name, given `name` there. */
function nameIssues(name: unknown): string[][] {
  const issues = (c: { problems: readonly OptionProblem[] }) => c.problems.map((x) => describeProblem(x));
  const n = name as string;
  return [
    issues(checkServerOptions({ namespace: n })),
    issues(checkServerOptions({ queues: [n] })),
    issues(checkSchedulerOptions({ namespace: n })),
    issues(checkClientOptions({ namespace: n })),
    issues(checkClientOptions({ defaults: { queue: n } })),
  ];
}

describe('one name check', () => {
  test.each(GOOD_NAMES)('%j passes everywhere', (name) => {
    expect(nameIssues(name).flat()).toEqual([]);
    expect(nameProblem('queue', name)).toBeUndefined();
    expect(assertName('namespace', name, 'x')).toBe(name);
    expect(() => toStored({ name, spec: '@every 1m', queue: name }, 'UTC', false)).not.toThrow();
    expect(resolveOptions({ namespace: name, queue: name, queues: [name] }).namespace).toBe(name);
  });

  test.each(BAD_NAMES.map((n) => [n]))('%j is refused everywhere, with one message', (name) => {
    const keys = ['namespace', 'queues', 'namespace', 'namespace', 'defaults.queue'];
    expect(nameIssues(name)).toEqual(keys.map((k) => [nameMessage(k, name)]));
    expect(nameProblem('queue', name)).toBe(nameMessage('queue', name));
    expect(() => new QueueClient({ namespace: name as string })).toThrow(nameMessage('namespace', name));
    // the Inspector (not reworked here) still takes a null namespace as absent
    if (name !== null) expect(() => new Inspector({ namespace: name as string })).toThrow(nameMessage('namespace', name));
    const sched = (() => {
      try {
        toStored({ name: name as string, spec: '@every 1m' }, 'UTC', false);
      } catch (err) {
        return err as InvalidScheduleError;
      }
    })();
    expect(sched).toBeInstanceOf(InvalidScheduleError);
    expect(sched!.problem).toBe(`name: expected ${NAME_RULE}`);
    expect(() => toStored({ name: 'ok', spec: '@every 1m', queue: name as string }, 'UTC', false)).toThrow(`queue: expected ${NAME_RULE}`);
    expect(nestIssues({ namespace: name })).toEqual([nameMessage('namespace', name)]);
    expect(nestIssues({ queue: name })).toEqual([nameMessage('queue', name)]);
  });

  test('the Inspector accepts a valid namespace', async () => {
    const inspector = new Inspector({ connection: redisUrl(), namespace: 'ok.name' });
    expect(inspector.namespace).toBe('ok.name');
    await inspector.close();
  });
});

/** The issues of the Nest module options (empty when they are valid). */
function nestIssues(options: Record<string, unknown>): string[] {
  try {
    resolveOptions(options);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ChronosConfigError);
    return [...(err as ChronosConfigError).issues];
  }
}

const GOOD_ZONES = ['Europe/Budapest', 'UTC', 'Etc/UTC', 'GMT', 'America/Argentina/Buenos_Aires', 'Etc/GMT-14'];
const BAD_ZONES: unknown[] = ['Mars/Olympus', '', '+01:00', '-05:00', ' UTC', 'UTC ', 'not a zone', 42];

describe('one time-zone check', () => {
  test.each(GOOD_ZONES)('%j passes everywhere', (tz) => {
    expect(isTimeZone(tz)).toBe(true);
    expect(new OptionProblems().timeZone('timeZone', tz)).toBe(true);
    expect(checkSchedulerOptions({ timeZone: tz }).problems).toEqual([]);
    expect(resolveOptions({ timeZone: tz }).timeZone).toBe(tz);
    expect(parseSpec('0 9 * * *', { timeZone: tz }).timeZone).toBe(tz);
    expect(() => everySpec('1m', { timeZone: tz })).not.toThrow();
    expect(() => toStored({ name: 's', spec: '0 9 * * *', timeZone: tz }, 'UTC', false)).not.toThrow();
    expect(() => toStored({ name: 's', spec: '0 9 * * *' }, tz, false)).not.toThrow();
  });

  test.each(BAD_ZONES.map((z) => [z]))('%j is refused everywhere, with one message', (tz) => {
    const shown = typeof tz === 'string' ? JSON.stringify(tz) : String(tz);
    const message = `timeZone: expected ${TIME_ZONE_RULE}, got ${shown}`;
    expect(isTimeZone(tz)).toBe(false);
    const p = new OptionProblems();
    p.timeZone('timeZone', tz);
    expect(p.issues).toEqual([message]);
    expect(checkSchedulerOptions({ timeZone: tz as string }).problems.map((x) => x.key)).toEqual(['timeZone']);
    expect(nestIssues({ timeZone: tz })).toEqual([message]);
    // a schedule names the zone as its value and says the same expectation
    for (const make of [
      () => parseSpec('0 9 * * *', { timeZone: tz as string, schedule: 's1' }),
      () => parseSpec('@every 10s', { timeZone: tz as string, schedule: 's1' }),
      () => everySpec(10_000, { timeZone: tz as string, schedule: 's1' }),
      () => toStored({ name: 's1', spec: '0 9 * * *', timeZone: tz as string }, 'UTC', false),
      () => toStored({ name: 's1', spec: '0 9 * * *' }, tz as string, false),
    ]) {
      let err: InvalidScheduleError | undefined;
      try {
        make();
      } catch (e) {
        err = e as InvalidScheduleError;
      }
      expect(err).toBeInstanceOf(InvalidScheduleError);
      expect(err!.value).toBe(String(tz));
      expect(err!.problem).toMatch(new RegExp(`^timeZone: expected ${reEscape(TIME_ZONE_RULE)} \\(for `));
      expect(err!.message).toContain('"s1"');
    }
  });
});

function reEscape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('client options: an unknown key is refused (trial 21: BullMQ-style keys were ignored in silence)', () => {
  test.each([
    [{ defaultJobOptions: { attempts: 3 } }, 'unknown option "defaultJobOptions" (use `defaults: { queue, maxRetry, timeout }`)'],
    [
      { defaults: { attempts: 3 } },
      'defaults: unknown option "attempts" (use `maxRetry`, the retries after the first attempt: attempts - 1)',
    ],
    [
      { defaults: { removeOnComplete: true, maxRetry: 2 } },
      'defaults: unknown option "removeOnComplete" (finished tasks always leave Redis)',
    ],
    [{ defaults: 'fast' }, 'defaults: expected an object of queue, maxRetry and timeout, got "fast"'],
  ])('%j', (options, message) => {
    expect(checkClientOptions(options as ClientOptions).problems.map((x) => describeProblem(x))).toEqual([message]);
    expect(() => new QueueClient(options as ClientOptions)).toThrow(InvalidOptionsError);
  });
  test('every documented key passes', () => {
    const all = {
      connection: 'redis://x',
      namespace: 'n',
      defaults: { queue: 'q', maxRetry: 1, timeout: 5 },
      tracing: false,
      maxPayloadBytes: 0,
    };
    expect(checkClientOptions(all).problems).toEqual([]);
  });
});

describe('a refused value is shown cut after 300 characters, with its length (trial 21: a 1 MB value was printed whole)', () => {
  const huge = 'x'.repeat(1_048_576);
  const hugeObject = { rows: Array.from({ length: 50_000 }, (_, i) => ({ i })) };
  const shortEnough = (message: string) => expect(message.length).toBeLessThan(1000);

  test('show, describeProblem and InvalidOptionsError', () => {
    expect(show(huge)).toBe(`"${'x'.repeat(300)}"…(1048576 chars)`);
    expect(show(hugeObject)).toMatch(/^\{"rows":\[\{"i":0\},.*…\(\d+ chars\)$/);
    expect(show('x'.repeat(300))).toBe(JSON.stringify('x'.repeat(300)));
    const p = new OptionProblems();
    p.int('concurrency', huge, 1);
    p.expected('defaults', 'an object', hugeObject);
    expect(p.issues[0]).toBe(`concurrency: expected an integer >= 1, got "${'x'.repeat(300)}"…(1048576 chars)`);
    for (const issue of p.issues) shortEnough(issue);
    const err = (() => {
      try {
        new QueueClient({ namespace: huge });
      } catch (e) {
        return e as InvalidOptionsError;
      }
    })();
    expect(err).toBeInstanceOf(InvalidOptionsError);
    shortEnough(err!.message);
    expect(err!.message).toContain('…(1048576 chars)');
  });

  test.each([
    ['a spec', { spec: huge }],
    ['a queue', { spec: '@every 1m', queue: huge }],
    ['a timeout', { spec: '@every 1m', timeout: hugeObject }],
    ['a whole definition', huge],
  ])('InvalidScheduleError for %s', (_what, def) => {
    const make = () => toStored((typeof def === 'string' ? def : { name: 's', ...def }) as ScheduleDefinition, 'UTC', false);
    const err = (() => {
      try {
        make();
      } catch (e) {
        return e as InvalidScheduleError;
      }
    })();
    expect(err).toBeInstanceOf(InvalidScheduleError);
    shortEnough(err!.message);
    expect(err!.message).toMatch(/…\(\d+ chars\)/);
    if (typeof def !== 'string' && 'queue' in def) expect(err!.value).toBe(huge); // the error's value keeps it whole
  });

  test("a value shown once (show) and then quoted by InvalidScheduleError keeps its marker: the length is the value's, not the shown text's", () => {
    const whole = JSON.stringify(hugeObject).length;
    let message = '';
    try {
      toStored({ name: 's', spec: '@every 1m', timeout: hugeObject } as unknown as ScheduleDefinition, 'UTC', false);
    } catch (e) {
      message = (e as InvalidScheduleError).message;
    }
    expect(message).toContain(`…(${whole} chars)`);
    expect(message.match(/…\(\d+ chars\)/g)).toHaveLength(1);
  });

  test('InvalidTaskStateError keeps the state, shows it cut', () => {
    const err = new InvalidTaskStateError(huge, ['dead']);
    expect(err.state).toBe(huge);
    expect(err.message).toBe(`Unknown task state "${'x'.repeat(300)}"…(1048576 chars): expected one of dead`);
  });
});

describe("Inspector options: an unknown key is refused (trial 21: BullMQ's `prefix` was ignored, the default namespace read in silence)", () => {
  const PREFIX = 'unknown option "prefix" (use `namespace`: the key prefix of the app, default "chronos")';
  const issues = (c: { problems: readonly OptionProblem[] }) => c.problems.map((x) => describeProblem(x));

  test('prefix is refused, naming namespace; every other unknown key too', () => {
    const errorOf = (options: Record<string, unknown>) => {
      let inspector: Inspector;
      try {
        inspector = new Inspector({ connection: redisUrl(), ...options });
      } catch (err) {
        expect(err).toBeInstanceOf(InvalidOptionsError);
        return err as InvalidOptionsError;
      }
      void inspector.close(); // accepted: close what it opened, then fail
      throw new Error(`accepted ${JSON.stringify(options)}`);
    };
    expect(errorOf({ namespace: 'app', prefix: 'app' }).issues).toEqual([PREFIX]);
    expect(errorOf({ liveness: 5000, namespace: 'a b' }).issues).toEqual(['unknown option "liveness"', nameMessage('namespace', 'a b')]);
  });

  test('the same hint from the other options checks', () => {
    expect(issues(checkClientOptions({ prefix: 'app' } as ClientOptions))).toEqual([PREFIX]);
    expect(issues(checkSchedulerOptions({ prefix: 'app' } as never))).toEqual([PREFIX]);
    expect(nestIssues({ prefix: 'app' })).toEqual([PREFIX]);
    expect(nestIssues({ metrics: { prefix: 'app_' } })).toEqual(['metrics: unknown option "prefix"']); // not a namespace there
  });

  test('every documented key passes', async () => {
    const inspector = new Inspector({
      connection: redisUrl(),
      namespace: 'n',
      livenessWindow: 15_000,
      events: undefined,
      actor: 'a',
      origin: 'o',
      compactSchedules: false,
    });
    await inspector.close();
  });
});
