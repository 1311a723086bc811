// toStored's JSON (lib/core/scheduler/definition-check.ts finishStored, stored-form.ts): what the registry
// scripts are sent and store, the full form by default and the compact form when asked for
// (`compactSchedules`); each decodes to exactly the registry form; the
// fingerprints are those of the full form's text (JSON.stringify of the registry form), as before
// the compact form, so an unchanged definition keeps its fingerprint.
import { createHash } from 'node:crypto';
import { type ScheduleDefinition } from '../../lib/core/scheduler/definition.js';
import { checkDefinition, finishStored, toStored } from '../../lib/core/scheduler/definition-check.js';
import { decodeStored, STORED_FILL } from '../../lib/core/scheduler/stored-form.js';

const sha = (text: string) => createHash('sha1').update(text).digest('hex').slice(0, 16);
/** The registry form and the JSON sent, in the compact form (`compactSchedules: true`) or the full one. */
const stored = (def: ScheduleDefinition, runtime: boolean, compact: boolean) => finishStored(checkDefinition(def, 'UTC', runtime), compact);

const defs: ScheduleDefinition[] = [
  { name: 'plain', spec: '0 3 * * *' },
  { name: 'labelled', spec: '5 3 1 * *', timeZone: 'Asia/Kolkata', labels: { region: 'eu', plan: 'pro "x" }' }, payload: { a: [1, 2] } },
  {
    name: 'bounded',
    spec: { every: 60_000, offset: 5_000 },
    startAt: 1_800_000_000_000,
    maxRuns: 3,
    jitter: 500,
    group: 'g',
    labels: { k: '' },
  },
  {
    name: 'every-option',
    spec: '*/5 * * * *',
    timeZone: 'Europe/Paris',
    queue: 'q.1',
    type: 'other.type',
    payload: 'text',
    maxRetry: 0,
    timeout: 0,
    catchUp: 'none',
    catchUpWindow: 0,
    catchUpCap: 1,
    overlap: 'skip',
    endAt: 1_900_000_000_000,
    labels: { runtime: 'x', type: 'y' },
  },
];

test.each(defs.map((d) => [d.name, d]))(
  '%s: fp and tfp are the fingerprints of the full form; the JSON sent, in either form, decodes to the registry form',
  (_, def) => {
    for (const [runtime, compact] of [
      [true, true],
      [false, true],
      [true, false],
      [false, false],
    ]) {
      const { stored: s, json } = stored(def as ScheduleDefinition, runtime, compact);
      const { fp, tfp, labels, ...body } = s;
      expect(fp).toBe(sha(JSON.stringify(labels === undefined ? body : { ...body, labels })));
      if (labels === undefined) expect(tfp).toBeUndefined();
      else {
        expect(tfp).toBe(sha(JSON.stringify(body)));
        expect(Object.keys(labels)).toEqual(Object.keys(labels).sort());
      }
      const sent = JSON.parse(json) as Record<string, unknown>;
      if (compact) expect(sent.name).toBeUndefined();
      else expect(json).toBe(JSON.stringify(s)); // the full form, as every earlier version wrote it
      expect(decodeStored(s.name, json)).toEqual({ ...s });
      // put-schedules.lua reads the labels and tfp by their position from the end
      expect(json.endsWith(tfp === undefined ? `,"fp":"${fp}"}` : `,"fp":"${fp}","tfp":"${tfp}"}`)).toBe(true);
      if (labels !== undefined) expect(json).toContain(`,"labels":${JSON.stringify(labels)},"fp":`);
    }
  },
);

test('the compact form leaves out every field at its fill value, the name, and type when it is the name; the default is the full form', () => {
  expect(JSON.parse(toStored({ name: 'n', spec: '0 3 * * *' }, 'UTC', false).json)).toMatchObject({
    name: 'n',
    maxRetry: 25,
    queue: 'default',
  });
  const { json } = stored({ name: 'n', spec: '0 3 * * *' }, false, true);
  expect(json).toMatch(/^\{"expression":"0 3 \* \* \*","fp":"[0-9a-f]{16}"\}$/);
  const { json: runtime } = stored({ name: 'n', spec: '0 3 * * *', queue: 'q', timeZone: 'Asia/Tokyo' }, true, true);
  // the timing first, then "runtime": put-schedules.lua compares the timing by that prefix
  expect(runtime).toMatch(/^\{"expression":"0 3 \* \* \*","timeZone":"Asia\/Tokyo","queue":"q","runtime":true,"fp":/);
});

test('decodeStored reads the full form of earlier versions as it is, and fills in what the compact form leaves out', () => {
  const full = {
    name: 'n',
    expression: '0 3 * * *',
    timeZone: 'UTC',
    offsetMs: 0,
    queue: 'default',
    type: 'n',
    payload: 'null',
    maxRetry: 25,
    timeoutMs: 1_800_000,
    catchUp: 'all',
    catchUpWindowMs: 3_600_000,
    catchUpCap: 100,
    overlap: 'allow',
    runtime: false,
    fp: '0123456789abcdef',
    registeredAt: 1000,
    changedAt: 1000,
  };
  // a full one without a generation (a version before generations) keeps none
  expect(decodeStored('n', JSON.stringify(full))).toEqual(full);
  const { name: _, ...rest } = full;
  expect(decodeStored('n', JSON.stringify({ expression: '0 3 * * *', fp: full.fp, registeredAt: 1000 }))).toEqual({
    ...full,
    generation: 1000,
  });
  expect(decodeStored('n', JSON.stringify({ ...rest, changedAt: 2000, generation: 3000, paused: true }))).toEqual({
    ...full,
    changedAt: 2000,
    generation: 3000,
    paused: true,
  });
});

test('the fill values are frozen: part of the stored form, not a reference to the defaults', () => {
  expect(Object.isFrozen(STORED_FILL)).toBe(true);
  // literal on purpose: if a default changes (DEFAULTS), these must not (they say what stored definitions mean)
  expect(STORED_FILL).toEqual({
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
  });
});

test('two spellings of one spec store one definition: white space and the case of names make no change (no new generation on upsert)', () => {
  // before, "0 8 * * mon-fri" and "0 8 * * MON-FRI " were three fingerprints: an upsert of either took a new generation
  const one = (spec: string) => toStored({ name: 'digest', spec }, 'UTC', true).stored;
  const canonical = one('0 8 * * MON-FRI');
  for (const spec of ['0 8 * * mon-fri', ' 0 8 * * MON-FRI ', '0  8\t* * Mon-Fri', '0 8 * * MON-FRI\n'])
    expect([spec, one(spec).expression, one(spec).fp]).toEqual([spec, '0 8 * * MON-FRI', canonical.fp]);
  expect(one('0 0 l * *').expression).toBe('0 0 L * *');
  expect(one('0 0 * * 5l').expression).toBe('0 0 * * 5L');
  expect(one('@DAILY').expression).toBe('@daily');
  expect(one(' @Every  90s').expression).toBe('@every 90s');
  // a text already canonical is stored as given: its fingerprint is as before (the full form's text, test above)
  expect(one('@every 90s')).toMatchObject({ expression: '@every 90s', fp: sha(JSON.stringify({ ...one('@every 90s'), fp: undefined })) });
});
