import { SCHEDULE_METADATA } from '../chronos.constants.js';
import { appendMetadata } from './append-metadata.js';
import type { IntervalOptions } from './schedule-options.interface.js';

/**
 * Runs the method every `every` (ms, or a duration `'10s'`, `'5m'`, `'1h'`, `'1h30m'`), once per
 * trigger across every instance. Intervals are **epoch-aligned** (a 10 s interval fires at
 * :00, :10, :20 … on every replica), never counted from a process's start, so every instance
 * computes the same triggers. Whole seconds, at least 1 s.
 *
 * ```ts
 * @Interval('10s')
 * healthCheck(task: Task) { … }
 * ```
 * @publicApi
 */
export function Interval(every: number | string, options?: IntervalOptions): MethodDecorator;
/**
 * The `@nestjs/schedule` form: `@Interval(name, everyMs)`.
 * @publicApi
 */
export function Interval(name: string, everyMs: number): MethodDecorator;
export function Interval(a: number | string, b?: number | IntervalOptions): MethodDecorator {
  const [spec, options]: [number | string, IntervalOptions] =
    typeof a === 'string' && typeof b === 'number' ? [b, { name: a }] : [a, (b as IntervalOptions | undefined) ?? {}];
  return (_target, _key, descriptor) => {
    appendMetadata(SCHEDULE_METADATA, { kind: 'interval', spec, options }, descriptor);
  };
}
