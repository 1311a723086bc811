/**
 * Time-zone helpers: the one check of an IANA zone name (with Intl, as croner uses Intl) and whether
 * a zone has a fixed offset.
 */
import { InvalidScheduleError } from '../runtime/errors.js';

/** What a time zone must be: the expectation in every message about one. */
export const TIME_ZONE_RULE = 'an IANA time zone such as "Europe/Budapest" or "UTC"';

/**
 * The one time-zone rule (the `timeZone` options of the scheduler and the Nest module, and every
 * schedule's zone): a string that starts with a letter and that Intl knows (croner computes with
 * Intl). The leading letter refuses offsets such as '+01:00', which newer Intl versions accept but
 * which cannot follow DST.
 */
export function isTimeZone(timeZone: unknown): timeZone is string {
  return typeof timeZone === 'string' && /^[A-Za-z]/.test(timeZone) && resolvedZone(timeZone) !== null;
}

/**
 * Rule 9: the zone of a schedule, 'UTC' when absent, in its canonical spelling ({@link canonicalZone}:
 * `'europe/paris'` is `'Europe/Paris'`, so both store the same definition).
 * @throws InvalidScheduleError naming the schedule and the zone when {@link isTimeZone} refuses it.
 */
export function validateTimeZone(timeZone: string | undefined, schedule: string | undefined, expression: string): string {
  if (timeZone === undefined) return 'UTC';
  if (!isTimeZone(timeZone)) {
    throw new InvalidScheduleError(schedule, String(timeZone), `timeZone: expected ${TIME_ZONE_RULE} (for ${JSON.stringify(expression)})`);
  }
  return canonicalZone(timeZone);
}

/** Canonical spellings by lower-cased name: the zones Intl lists (`Europe/Kiev`, which Intl renames to no other). */
let spellings: Map<string, string> | undefined;

/**
 * The canonical spelling of a zone Intl knows (zones are matched in any case): Intl's own name
 * when it differs only in case (`'europe/paris'` -> `'Europe/Paris'`, `'utc'` -> `'UTC'`), else
 * the listed zone of that name in any case, else the name as written. An alias Intl renames
 * (`'US/Eastern'` -> `'America/New_York'`, `'Asia/Kolkata'` -> `'Asia/Calcutta'`) keeps its own
 * name: its spelling is not known here, and the name the user wrote is not replaced by another zone's.
 */
export function canonicalZone(timeZone: string): string {
  const lower = timeZone.toLowerCase();
  const resolved = resolvedZone(timeZone);
  if (resolved !== null && resolved.toLowerCase() === lower) return resolved;
  spellings ??= new Map(Intl.supportedValuesOf('timeZone').map((z) => [z.toLowerCase(), z]));
  return spellings.get(lower) ?? timeZone;
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

/** Whether the zone never changes its offset (UTC and the `Etc/GMT±n` zones). */
export function isFixedOffsetZone(timeZone: string): boolean {
  const z = resolvedZone(timeZone);
  return z === 'UTC' || (z !== null && /^Etc\/GMT[+-]\d{1,2}$/.test(z));
}
