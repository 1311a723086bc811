// Issue 24, item 6: the audit trail. Every act through the Inspector (done or failed) is recorded
// with who, what, when, from where and the result, bounded by count and age, emitted as an event,
// and read back by Inspector.audit() and `chronos audit`.
import type { AuditEntry, ChronosEvent } from '../../lib/core/runtime/events.js';
import { EventBus } from '../../lib/core/runtime/events.js';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { AUDIT_MAX_AGE_MS } from '../../lib/core/admin/audit.js';
import { GlobalKeys } from '../../lib/core/redis/keys.js';
import { cliRunner } from '../helpers/cli.js';
import { QueueRig } from '../helpers/queue.js';
import { redisUrl } from '../helpers/redis.js';

let rig: QueueRig;
let inspector: Inspector;
const events: ChronosEvent[] = [];
beforeEach(() => {
  rig = new QueueRig();
  const bus = new EventBus();
  bus.subscribe((e) => void events.push(e));
  inspector = new Inspector({ connection: redisUrl(), namespace: rig.namespace, events: bus, actor: 'ops:ada', origin: 'test box' });
  events.length = 0;
});
afterEach(async () => {
  await inspector.close();
  await rig.close();
});

test('every act is recorded, done or failed: actor, action, target, origin, result and count; newest first; emitted as audit.recorded', async () => {
  await rig.client.enqueue('x', {}, { queue: 'mail' });
  await inspector.pauseQueue('mail');
  await inspector.resumeQueue('mail', { actor: 'ops:bob', origin: 'console 10.0.0.7' });
  await expect(inspector.retryDead('mail', 'no-such-task')).rejects.toThrow(/not found/);
  await inspector.setQueueLimits('mail', { concurrency: 3 });
  const { entries } = await inspector.audit();
  const strip = ({ id, at, ...e }: AuditEntry) => (expect(at).toBe(Number(id.split('-')[0])), e);
  expect(entries.map(strip)).toEqual([
    { actor: 'ops:ada', action: 'queue.limits', queue: 'mail', detail: '{"concurrency":3}', result: 'done', origin: 'test box' },
    {
      actor: 'ops:ada',
      action: 'dead.retry',
      queue: 'mail',
      taskId: 'no-such-task',
      result: 'failed',
      origin: 'test box',
      error: expect.stringMatching(/Task no-such-task not found/) as unknown,
    },
    { actor: 'ops:bob', action: 'queue.resume', queue: 'mail', result: 'done', count: 1, origin: 'console 10.0.0.7' },
    { actor: 'ops:ada', action: 'queue.pause', queue: 'mail', result: 'done', count: 1, origin: 'test box' },
  ]);
  const recorded = events.filter((e): e is Extract<ChronosEvent, { type: 'audit.recorded' }> => e.type === 'audit.recorded');
  expect(recorded.map((e) => e.entry).reverse()).toEqual(entries);
  // filters and pages
  expect((await inspector.audit({ actor: 'ops:bob' })).entries.map((e) => e.action)).toEqual(['queue.resume']);
  expect((await inspector.audit({ result: 'failed' })).entries.map((e) => e.action)).toEqual(['dead.retry']);
  const first = await inspector.audit({ limit: 3 });
  expect(first.entries).toHaveLength(3);
  const rest = await inspector.audit({ limit: 3, cursor: first.cursor });
  expect(rest.entries.map((e) => e.action)).toEqual(['queue.pause']);
  expect(rest.cursor).toBeUndefined();
  await expect(inspector.audit({ limit: 0 })).rejects.toThrow(/limit: expected an integer 1-500, got 0/);
  // a filter no entry can match is refused, naming it (trial 9: result=maybe listed everything)
  await expect(inspector.audit({ result: 'maybe' as never })).rejects.toThrow(/result: expected 'done' or 'failed', got "maybe"/);
  await expect(inspector.audit({ action: 'queue.paws' })).rejects.toThrow(/action: expected one of dead.retry, .*got "queue.paws"/);
});

test('the Scheduler\'s runtime acts (pause, resume, trigger, remove) are recorded as app:<instance> from "app <instance>" (trial 5)', async () => {
  const s = new Scheduler({ connection: redisUrl(), namespace: rig.namespace, instanceId: 'i1', eligible: false });
  await s.start();
  try {
    await s.addSchedules([
      { name: 'a', spec: '@every 1h' },
      { name: 'b', spec: '@every 1h' },
    ]);
    await s.pauseSchedule('a');
    await s.resumeSchedule('a');
    await s.triggerNow('a');
    await s.removeSchedule('a');
    await s.removeSchedules(['b']);
    await expect(s.pauseSchedule('a')).rejects.toThrow(/not found/);
  } finally {
    await s.stop();
  }
  const { entries } = await inspector.audit();
  expect(
    entries.map(({ actor, origin, action, schedule, result, count }) => ({ actor, origin, action, schedule, result, count })).reverse(),
  ).toEqual(
    [
      ['schedule.pause', 'a', 'done', 1],
      ['schedule.resume', 'a', 'done', 1],
      ['schedule.trigger', 'a', 'done', 1],
      ['schedule.remove', 'a', 'done', undefined],
      ['schedule.remove', 'b', 'done', 1],
      ['schedule.pause', 'a', 'failed', undefined],
    ].map(([action, schedule, result, count]) => ({ actor: 'app:i1', origin: 'app i1', action, schedule, result, count })),
  );
});

test('a pause of a paused schedule or queue, or a resume of one not paused, says it did nothing: false, audited done (0) with why, count 0, the CLI says so (trial 26)', async () => {
  await inspector.addSchedule({ name: 'nightly', spec: '@every 1h' });
  await rig.client.enqueue('x', {}, { queue: 'mail' });
  expect(await inspector.resumeSchedule('nightly')).toBe(false);
  expect(await inspector.pauseSchedule('nightly', { note: 'deploy' })).toBe(true);
  expect(await inspector.pauseSchedule('nightly', { note: 'again' })).toBe(false);
  expect((await inspector.schedule('nightly')).pause).toMatchObject({ note: 'deploy', actor: 'ops:ada' }); // the first pause's note is kept
  expect(await inspector.resumeSchedule('nightly')).toBe(true);
  expect(await inspector.resumeQueue('mail')).toBe(false);
  expect(await inspector.pauseQueue('mail')).toBe(true);
  expect(await inspector.pauseQueue('mail')).toBe(false);
  const { entries } = await inspector.audit();
  expect(entries.map(({ action, count, detail }) => [action, count, detail]).reverse()).toEqual([
    ['schedule.resume', 0, 'not paused'],
    ['schedule.pause', 1, 'deploy'],
    ['schedule.pause', 0, 'already paused; again'],
    ['schedule.resume', 1, undefined],
    ['queue.resume', 0, 'not paused'],
    ['queue.pause', 1, undefined],
    ['queue.pause', 0, 'already paused'],
  ]);
  const acted = events.filter((e): e is Extract<ChronosEvent, { type: 'operator.acted' }> => e.type === 'operator.acted');
  expect(acted.map((e) => [e.action, e.count])).toEqual(entries.map((e) => [e.action, e.count]).reverse());
  const { chronos } = cliRunner(() => rig.namespace);
  const said = async (...args: string[]) => ((r) => [r.code, r.out])(await chronos(...args));
  expect(await said('schedule', 'resume', 'nightly')).toEqual([0, 'Schedule nightly was not paused: nothing changed.\n']);
  expect(await said('schedule', 'pause', 'nightly')).toEqual([0, 'Paused schedule nightly.\n']);
  expect(await said('schedule', 'pause', 'nightly')).toEqual([
    0,
    'Schedule nightly was already paused: nothing changed (its note is kept).\n',
  ]);
  expect(await said('queue', 'pause', 'mail')).toEqual([0, 'Queue mail was already paused: nothing changed.\n']);
  expect(await said('queue', 'resume', 'mail')).toEqual([0, 'Resumed queue mail.\n']);
  expect(await said('queue', 'resume', 'mail')).toEqual([0, 'Queue mail was not paused: nothing changed.\n']);
});

test('bounded by age: an entry older than 30 days is trimmed at the next act', async () => {
  const key = new GlobalKeys(rig.namespace).audit;
  const old = Date.now() - AUDIT_MAX_AGE_MS - 60_000;
  await rig.client.redis.xadd(key, `${old}-0`, 'actor', 'ops:old', 'action', 'queue.pause', 'result', 'done');
  expect((await inspector.audit()).entries.map((e) => e.actor)).toEqual(['ops:old']);
  await inspector.pauseQueue('q');
  expect((await inspector.audit()).entries.map((e) => e.actor)).toEqual(['ops:ada']);
});

test('chronos audit: the CLI records its acts as cli:<user>@<host> from "cli <host>", and lists the trail', async () => {
  const { chronos, json } = cliRunner(() => rig.namespace);
  await rig.client.enqueue('x', {}, { queue: 'mail' });
  expect((await chronos('queue', 'pause', 'mail')).code).toBe(0);
  const page = await json<{ entries: AuditEntry[] }>('audit');
  expect(page.entries).toHaveLength(1);
  expect(page.entries[0]).toMatchObject({ action: 'queue.pause', queue: 'mail', result: 'done' });
  expect(page.entries[0].actor).toMatch(/^cli:[^@]+@.+/);
  expect(page.entries[0].origin).toMatch(/^cli \S+ pid \d+$/);
  const text = await chronos('audit', '--by', page.entries[0].actor);
  expect(text.out).toMatch(/queue\.pause.*queue mail.*done \(1\)/);
  // acts were recorded, none failed: it says none matched, not that nothing was recorded (trial 37)
  expect((await chronos('audit', '--failed')).out).toBe('No acts match (failed).\n');
  // an empty actor would record an act by nobody: refused, and nothing is done
  const blank = await chronos('--actor', ' ', 'queue', 'resume', 'mail');
  expect([blank.code, blank.err]).toEqual([2, 'error: --actor: expected a name, got " "\n']);
  expect((await json<{ entries: AuditEntry[] }>('audit')).entries).toHaveLength(1);
  // --limit takes what the trail can give (1-500), checked like every CLI number
  const many = await chronos('audit', '--limit', '1000');
  expect([many.code, many.err]).toEqual([2, 'error: --limit: expected an integer 1-500, got "1000"\n']);
});

test('chronos audit and schedule show print a stored text’s control characters as \\uXXXX: a pause note cannot drive the terminal (trial 31)', async () => {
  const { chronos } = cliRunner(() => rig.namespace);
  await inspector.addSchedule({ name: 'digest', spec: '0 3 * * *', type: 'mail.send', queue: 'mail' });
  // cursor up and erase the line (to write over the entry above), a carriage return, an 8-bit CSI, a bell
  const note = 'disk swap\u001b[1A\u001b[2K\rops:eve queue.resume\u009b31m\u0007';
  await inspector.pauseSchedule('digest', { note, actor: 'console:mallory' });
  for (const args of [['audit'], ['schedule', 'show', 'digest']]) {
    const r = await chronos(...args);
    expect([args.join(' '), r.code]).toEqual([args.join(' '), 0]);
    const controls = [...r.out].filter((c) => c !== '\n' && (c < ' ' || (c >= '\u007f' && c <= '\u009f')));
    expect([args.join(' '), controls]).toEqual([args.join(' '), []]);
    expect(r.out).toContain('disk swap\\u001b[1A\\u001b[2K\\u000dops:eve queue.resume\\u009b31m\\u0007');
  }
  // --json keeps the note as it is (JSON escapes it)
  const page = JSON.parse((await chronos('--json', 'audit')).out) as { entries: AuditEntry[] };
  expect(page.entries[0].detail).toBe(note);
});
