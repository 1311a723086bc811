// toStored's JSON (lib/core/scheduler/definition.ts finishStored): what the bulk API sends and the
// registry keeps is exactly JSON.stringify of the registry form, whose fingerprints cover the rest.
import { createHash } from 'node:crypto';
import { toStored, type ScheduleDefinition } from '../../lib/core/scheduler/definition.js';

const sha = (text: string) => createHash('sha1').update(text).digest('hex').slice(0, 16);

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
];

test.each(defs.map((d) => [d.name, d]))('%s: the JSON is JSON.stringify(stored), fp and tfp the fingerprints of its text', (_, def) => {
  const { stored, json } = toStored(def as ScheduleDefinition, 'UTC', true);
  expect(json).toBe(JSON.stringify(stored));
  const { fp, tfp, labels, ...body } = stored;
  expect(fp).toBe(sha(JSON.stringify(labels === undefined ? body : { ...body, labels })));
  if (labels === undefined) expect(tfp).toBeUndefined();
  else {
    expect(tfp).toBe(sha(JSON.stringify(body)));
    expect(Object.keys(labels)).toEqual(Object.keys(labels).sort());
  }
});
