/**
 * The text of a stored schedule definition (the value of its shard's `schedules` hash, field = its
 * name): written in the **full form** unless the app opts into the **compact form**
 * (`compactSchedules`), read in both forms.
 *
 * - The **full form** (every version before this one): `JSON.stringify` of the whole registry form,
 *   `name` first, every field present. Read as it is.
 * - The **compact form** (written with `compactSchedules: true`): no `name` (it is the hash field), and each field equal to
 *   its {@link STORED_FILL} value left out, as are `type` when it is the name, `runtime` when false,
 *   `paused` when false, and `changedAt` and `generation` when equal to `registeredAt` (the Lua
 *   snippet `stored-form` leaves those out when a script stores it). A value without `name` is in
 *   the compact form; {@link decodeStored} fills in what it leaves out.
 *
 * The fingerprints (`fp`, `tfp`) are those of the full form's text (definition-check.ts finishStored),
 * whatever form is stored: an unchanged definition has the same fingerprint in both, so declaring or
 * upserting it again writes nothing, across the change of form.
 *
 * A version before this one reads a compact value wrongly (it takes `name`, `queue`, `maxRetry`… from
 * the JSON): hence the opt-in, to turn on once every instance of the namespace runs this version or
 * a later one (README "How a schedule is stored").
 */
import type { StoredSchedule } from './definition.js';
import type { CheckedBody } from './definition-check.js';

/**
 * The value a compact stored definition means by a field it leaves out. Frozen: they are not the
 * library's defaults (`DEFAULTS`, which may change) but part of the stored form — changing one would
 * change what definitions already in Redis mean. (They equal the defaults of the version that
 * introduced the form, so a definition that keeps the defaults stores none of them.)
 */
export const STORED_FILL = Object.freeze({
  timeZone: 'UTC',
  offsetMs: 0,
  queue: 'default',
  payload: 'null',
  maxRetry: 25,
  timeoutMs: 1_800_000,
  catchUp: 'all',
  catchUpWindowMs: 3_600_000,
  catchUpCap: 100,
  overlap: 'allow',
} as const);

/** The fields {@link STORED_FILL} covers, in the order the compact form writes them. */
const FILLED = [
  'timeZone',
  'offsetMs',
  'queue',
  'payload',
  'maxRetry',
  'timeoutMs',
  'catchUp',
  'catchUpWindowMs',
  'catchUpCap',
  'overlap',
] as const satisfies readonly (keyof typeof STORED_FILL)[];

/** The optional fields of a body, copied when present, in this order. */
const OPTIONAL = ['group', 'jitterMs', 'startAt', 'endAt', 'maxRuns'] as const;

/**
 * The compact JSON text of a definition's body (no labels, fingerprints or registry state), without
 * its closing brace. Key order: `expression`, `timeZone`, `offsetMs`, `queue`, `runtime` (the
 * timing, then a key every runtime definition has: put-schedules.lua compares the timing by prefix),
 * `type`, then the rest.
 */
function compactBody(b: Omit<CheckedBody, 'runtime'> & { runtime?: boolean }): string {
  let text = `{"expression":${JSON.stringify(b.expression)}`;
  for (const k of FILLED.slice(0, 3)) if (b[k] !== STORED_FILL[k]) text += `,"${k}":${JSON.stringify(b[k])}`;
  if (b.runtime === true) text += ',"runtime":true';
  if (b.type !== b.name) text += `,"type":${JSON.stringify(b.type)}`;
  for (const k of FILLED.slice(3)) if (b[k] !== STORED_FILL[k]) text += `,"${k}":${JSON.stringify(b[k])}`;
  for (const k of OPTIONAL) if (b[k] !== undefined) text += `,"${k}":${JSON.stringify(b[k])}`;
  return text;
}

/**
 * The compact JSON a definition is sent to the registry scripts as: its body, then `labels`, `fp`
 * and `tfp` last, in that order (put-schedules.lua reads the labels and `tfp` by their position
 * from the end). Without registeredAt, changedAt, paused, resumedAt and generation (the scripts add
 * them). Throws nothing.
 */
export function storedJson(s: Omit<CheckedBody, 'runtime'> & Pick<StoredSchedule, 'runtime' | 'fp' | 'tfp' | 'labels'>): string {
  let text = compactBody(s);
  if (s.labels !== undefined) text += `,"labels":${JSON.stringify(s.labels)}`;
  text += `,"fp":"${s.fp}"`;
  if (s.tfp !== undefined) text += `,"tfp":"${s.tfp}"`;
  return text + '}';
}

/**
 * The JSON a definition is sent to the registry scripts as: the compact form ({@link storedJson})
 * when `compact`, else the full form (`JSON.stringify` of the registry form, as every version
 * before the compact form wrote it, and still readable by them). The compact form is written only
 * when the app asks for it (`compactSchedules`): a version before this one cannot read it.
 */
export function encodeStored(
  s: Omit<CheckedBody, 'runtime'> & Pick<StoredSchedule, 'runtime' | 'fp' | 'tfp' | 'labels'>,
  compact: boolean,
): string {
  return compact ? storedJson(s) : JSON.stringify(s);
}

/**
 * A stored definition, decoded from either form (see the module doc); `name` is its hash field.
 * @throws SyntaxError when the text is not JSON
 */
export function decodeStored(name: string, json: string): StoredSchedule {
  const s = JSON.parse(json) as Partial<StoredSchedule> & Record<string, unknown>;
  if (s.name !== undefined) return s as StoredSchedule; // the full form: as a version before this one wrote it
  s.name = name;
  const filled = s as unknown as Record<string, unknown>;
  for (const k of FILLED) if (filled[k] === undefined) filled[k] = STORED_FILL[k];
  s.type ??= name;
  s.runtime ??= false;
  if (s.registeredAt !== undefined) {
    s.changedAt ??= s.registeredAt;
    s.generation ??= s.registeredAt;
  }
  return s as StoredSchedule;
}
