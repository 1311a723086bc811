// The options of every Inspector act are checked at its door (audited.ts actOptions): `null`, a
// non-object, an unknown key, an empty actor or a `force` not true or false is an InvalidOptionsError
// naming the value, before anything is read or written (trial 25: `null` was a TypeError reading
// `note`, `force` or `actor`; a misspelt filter key widened a bulk act to every task of the state).
// So is the id of an act on one task, as findTask checks it (checkTaskId).
import { InvalidOptionsError } from '../../lib/core/runtime/errors.js';
import type { Inspector } from '../../lib/core/admin/inspector.js';
import { QueueRig } from '../helpers/queue.js';

let rig: QueueRig;
let inspector: Inspector;
beforeEach(() => {
  rig = new QueueRig();
  inspector = rig.inspector;
});
afterEach(() => rig.close());

/** Every act, called with `opts` as its options. */
const ACTS: Record<string, (i: Inspector, opts: never) => Promise<unknown>> = {
  pauseQueue: (i, o) => i.pauseQueue('q', o),
  resumeQueue: (i, o) => i.resumeQueue('q', o),
  setQueueLimits: (i, o) => i.setQueueLimits('q', { concurrency: 2 }, o),
  retryDead: (i, o) => i.retryDead('q', 'id', o),
  retryAllDead: (i, o) => i.retryAllDead('q', o),
  deleteTask: (i, o) => i.deleteTask('q', 'id', o),
  deleteAllTasks: (i, o) => i.deleteAllTasks('q', 'scheduled', o),
  runTask: (i, o) => i.runTask('q', 'id', o),
  runAllTasks: (i, o) => i.runAllTasks('q', 'scheduled', o),
  cancelTask: (i, o) => i.cancelTask('id', o),
  pauseSchedule: (i, o) => i.pauseSchedule('s', o),
  resumeSchedule: (i, o) => i.resumeSchedule('s', o),
  triggerSchedule: (i, o) => i.triggerSchedule('s', o),
  removeSchedule: (i, o) => i.removeSchedule('s', o),
  backfillSchedule: (i, o) => i.backfillSchedule('s', 0, 1, o),
};

test.each(Object.keys(ACTS))(
  '%s refuses null, a non-object, an unknown key and an empty actor with an InvalidOptionsError naming it',
  async (name) => {
    const act = (opts: unknown) => ACTS[name](inspector, opts as never);
    const cases: [unknown, string][] = [
      [null, 'expected an object { actor?, origin?'],
      ['ops:ada', 'got "ops:ada"'],
      [{ actor: 'ops:ada', actr: 'x' }, 'unknown option "actr"'],
      [{ actor: '' }, 'actor: expected a non-empty name, got ""'],
      [{ origin: 7 }, 'origin: expected a string, got 7'],
    ];
    for (const [opts, text] of cases) {
      const err = await act(opts).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(InvalidOptionsError);
      expect((err as Error).message).toContain(`Invalid ${name} options`);
      expect((err as Error).message).toContain(text);
    }
    expect((await inspector.audit()).entries).toEqual([]); // refused at the door: no act, nothing recorded
  },
);

test('a misspelt filter key of a bulk act is refused, and no task is touched (was: every task of the state)', async () => {
  for (let i = 0; i < 3; i++) await rig.client.enqueue('mail.send', { i }, { queue: 'q', delay: 3_600_000 });
  await expect(inspector.deleteAllTasks('q', 'scheduled', { Type: 'nosuch' } as never)).rejects.toThrow('unknown option "Type"');
  await expect(inspector.runAllTasks('q', 'scheduled', { typ: 'nosuch' } as never)).rejects.toThrow('unknown option "typ"');
  expect((await inspector.queue('q')).scheduled).toBe(3);
  expect((await inspector.queue('q')).pending).toBe(0);
});

test('removeSchedule refuses a force that is not true or false (a truthy "no" forced the removal)', async () => {
  await expect(inspector.removeSchedule('s', { force: 'no' } as never)).rejects.toThrow('force: expected true or false, got "no"');
});

test('the acts still take their own keys, and undefined', async () => {
  await rig.client.enqueue('mail.send', {}, { queue: 'q', delay: 3_600_000 });
  await inspector.pauseQueue('q');
  await inspector.resumeQueue('q', { actor: 'ops:ada', origin: 'test' });
  const r = await inspector.runAllTasks('q', 'scheduled', { type: 'mail.send', error: undefined, actor: 'ops:ada' });
  expect(r.count).toBe(1);
  const entries = (await inspector.audit()).entries;
  expect(entries.map((e) => [e.action, e.actor])).toEqual([
    ['task.run', 'ops:ada'],
    ['queue.resume', 'ops:ada'],
    ['queue.pause', 'inspector'],
  ]);
});

test('backfillSchedule names an instant no Date can show (NaN) with an InvalidOptionsError, recorded as failed (was a RangeError)', async () => {
  await inspector.addSchedule({ name: 's', spec: '0 * * * *', type: 't' });
  const err = await inspector.backfillSchedule('s', NaN, Date.now()).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(InvalidOptionsError);
  expect((err as Error).message).toContain('range: expected from <= to (epoch ms), got from=NaN');
  const [entry] = (await inspector.audit()).entries;
  expect([entry.action, entry.result, entry.detail?.startsWith('NaN … ')]).toEqual(['schedule.backfill', 'failed', true]);
});

/** The acts on one task by id, called with `id`. */
const ID_ACTS: Record<string, (i: Inspector, id: never) => Promise<unknown>> = {
  retryDead: (i, id) => i.retryDead('q', id),
  deleteTask: (i, id) => i.deleteTask('q', id),
  runTask: (i, id) => i.runTask('q', id),
  cancelTask: (i, id) => i.cancelTask(id),
};

test.each(Object.keys(ID_ACTS))(
  '%s refuses an id that is not a non-empty string with an InvalidOptionsError naming it, as findTask does, and records nothing',
  async (name) => {
    // before: the id went to Redis as text ("undefined", "[object Object]"), the act answered
    // TaskNotFoundError ('Task  not found') and the audit trail recorded a failed act on that text
    for (const [id, text] of [
      ['', 'got ""'],
      [5, 'got 5'],
      [undefined, 'got undefined'],
      [{}, 'got {}'],
    ] as const) {
      const err = await ID_ACTS[name](inspector, id as never).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(InvalidOptionsError);
      expect((err as Error).message).toContain(`Invalid ${name} id`);
      expect((err as Error).message).toContain(`id: expected a non-empty string, ${text}`);
    }
    expect((await inspector.audit()).entries).toEqual([]);
  },
);
