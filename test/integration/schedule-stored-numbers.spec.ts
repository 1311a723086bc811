// A stored definition keeps every number it was given. The registry scripts decode a definition
// and write it back with Redis's cjson, which writes a number with 14 significant digits: before
// the fix, a maxRuns or catchUpWindow of 2^53 − 1 (both documented as accepted) or a far startAt /
// endAt came back rounded — maxRuns 9007199254740991 was stored and shown as 9007199254741000 (above
// the largest value the validation accepts), endAt 1234567890123457 as 1234567890123500 — through
// addSchedule, a pause or resume, and the registration of a schedule declared in code.
import type { Redis } from 'ioredis';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { openConnection } from '../../lib/core/redis/connection.js';
import { type ScheduleDefinition } from '../../lib/core/scheduler/definition.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { decodeStored } from '../../lib/core/scheduler/stored-form.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { storedJson } from '../helpers/registry.js';

let ns: string;
let client: Redis;
const started: { stop(): Promise<void> }[] = [];
beforeEach(() => {
  ns = newNamespace('numbers');
  client = openConnection(redisUrl()).client as Redis;
});
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.stop();
  client.disconnect();
  await deleteNamespace(ns);
});

function scheduler(compactSchedules: boolean): Scheduler {
  const s = new Scheduler({ connection: redisUrl(), namespace: ns, eligible: false, compactSchedules });
  started.push(s);
  return s;
}

/** Numbers of more than 14 significant digits, each within what the validation accepts. */
const big = {
  maxRuns: Number.MAX_SAFE_INTEGER,
  catchUpWindow: Number.MAX_SAFE_INTEGER - 2,
  startAt: -1_234_567_890_123_457,
  endAt: 1_234_567_890_123_457,
} satisfies Partial<ScheduleDefinition>;

/** The numbers as stored (decoded as every reader decodes them). */
async function storedNumbers(name: string): Promise<Record<string, unknown>> {
  const s = decodeStored(name, (await storedJson(client, ns, name))!);
  return { maxRuns: s.maxRuns, catchUpWindow: s.catchUpWindowMs, startAt: s.startAt, endAt: s.endAt };
}

describe.each([false, true])('compactSchedules %s', (compact) => {
  test('addSchedule, a pause and a resume keep every digit of maxRuns, catchUpWindow, startAt and endAt', async () => {
    const s = scheduler(compact);
    await s.addSchedule({ name: 'big.add', spec: '0 9 * * *', ...big });
    expect(await storedNumbers('big.add')).toEqual(big);
    await s.pauseSchedule('big.add');
    expect(await storedNumbers('big.add')).toEqual(big);
    await s.resumeSchedule('big.add');
    expect(await storedNumbers('big.add')).toEqual(big);
    const info = await new Inspector({ connection: client, namespace: ns }).schedule('big.add');
    expect({ maxRuns: info.maxRuns, runsLeft: info.runsLeft, endAt: info.endAt }).toEqual({
      maxRuns: big.maxRuns,
      runsLeft: big.maxRuns,
      endAt: big.endAt,
    });
  });

  test('upsertSchedules then a pause keep every digit', async () => {
    const s = scheduler(compact);
    await s.upsertSchedules([{ name: 'big.bulk', spec: '0 9 * * *', ...big }]);
    expect(await storedNumbers('big.bulk')).toEqual(big);
    await s.pauseSchedule('big.bulk');
    expect(await storedNumbers('big.bulk')).toEqual(big);
    // the same definition again is still a no-op: what is stored is what its fingerprint says
    expect(await s.upsertSchedules([{ name: 'big.bulk', spec: '0 9 * * *', ...big }])).toEqual({ added: 0, changed: 0, unchanged: 1 });
  });

  test('a schedule declared in code is registered with every digit', async () => {
    const s = scheduler(compact);
    s.register({ name: 'big.declared', spec: '0 9 * * *', ...big });
    await s.start();
    expect(await storedNumbers('big.declared')).toEqual(big);
  });
});
