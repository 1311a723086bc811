/**
 * Time-zone helpers: the check of an IANA zone name (with Intl, as croner uses Intl) and whether a
 * zone has a fixed offset.
 */
import { InvalidScheduleError } from '../errors.js';

/** Rule 9: an unknown IANA zone is rejected (checked with Intl, as croner uses Intl). */
export function validateTimeZone(timeZone: string | undefined, schedule: string | undefined, expression: string): string {
  if (timeZone === undefined) return 'UTC';
  if (typeof timeZone !== 'string' || !/^[A-Za-z]/.test(timeZone) || resolvedZone(timeZone) === null) {
    throw new InvalidScheduleError(
      schedule,
      String(timeZone),
      `unknown IANA time zone for ${JSON.stringify(expression)} (expected a name such as "Europe/Budapest" or "UTC")`,
    );
  }
  return timeZone;
}

const zoneCache = new Map<string, string | null>();

/** Intl's canonical name of a zone ('Etc/UTC', 'GMT' -> 'UTC'), or null if unknown. */
export function resolvedZone(timeZone: string): string | null {
  let resolved = zoneCache.get(timeZone);
  if (resolved === undefined) {
    try {
      resolved = new Intl.DateTimeFormat('en-US', { timeZone }).resolvedOptions().timeZone;
    } catch {
      resolved = null;
    }
    zoneCache.set(timeZone, resolved);
  }
  return resolved;
}

/** Whether Intl knows the zone (the scheduler's `timeZone` option check). */
export function isKnownTimeZone(timeZone: string): boolean {
  return resolvedZone(timeZone) !== null;
}

/** Whether the zone never changes its offset (UTC and the `Etc/GMT±n` zones). */
export function isFixedOffsetZone(timeZone: string): boolean {
  const z = resolvedZone(timeZone);
  return z === 'UTC' || (z !== null && /^Etc\/GMT[+-]\d{1,2}$/.test(z));
}
