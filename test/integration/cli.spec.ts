// The `chronos` CLI as a child process (dist/lib/cli/main.js) for every verb, against a seeded
// namespace: human output, the --json shape, and exit codes (0 ok, 1 error, 2 usage).
import { createServer, type AddressInfo } from 'node:net';
import { seedDemo, type Seeded } from '../fixtures/cli-seed.js';
import { cliRunner } from '../helpers/cli.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

let ns: string;
let seeded: Seeded;
const { chronos, json } = cliRunner(() => ns);

beforeAll(async () => {
  ns = newNamespace('cli');
  seeded = await seedDemo(redisUrl(), ns);
});
afterAll(async () => {
  await seeded.stop();
  await deleteNamespace(ns);
});

test('usage: help and version exit 0; no command, an unknown command or option, a bad choice or number exit 2 with one line', async () => {
  const help = await chronos('--help');
  expect(help.code).toBe(0);
  for (const verb of ['stats', 'queue', 'task', 'dead', 'schedule', 'leader', 'servers']) expect(help.out).toContain(verb);
  // the help names every column --history prints (lost was missing)
  expect((await chronos('stats', '--help')).out.replace(/\s+/g, ' ')).toContain('processed / failed / lost / depth / latency');
  expect((await chronos('--version')).out.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  expect((await chronos()).code).toBe(2);
  const unknown = await chronos('frobnicate');
  expect([unknown.code, unknown.err]).toEqual([2, "error: unknown command 'frobnicate'\n"]);
  expect((await chronos('task', 'ls', '--queue', 'emails')).err).toMatch(/required option '--state <state>'/);
  const choice = await chronos('task', 'ls', '--queue', 'emails', '--state', 'waiting');
  expect(choice.code).toBe(2);
  expect(choice.err).toMatch(/Allowed choices are pending, active, scheduled, retry, dead/);
  const limit = await chronos('task', 'ls', '--queue', 'emails', '--state', 'dead', '--limit', '0');
  expect([limit.code, limit.err]).toEqual([2, 'error: --limit: expected an integer 1-1000, got "0"\n']);
  expect((await chronos('task', 'retry')).code).toBe(2);
  expect((await chronos('task', 'retry', 'x', '--all', '--queue', 'emails')).code).toBe(2);
  expect((await chronos('--redis-url', 'http://x', 'stats')).code).toBe(2);
});

test('a wrong Redis address fails with one clear line and exit 1', async () => {
  const r = await chronos('--redis-url', 'redis://127.0.0.1:1', 'stats');
  console.log(`chronos against a closed port failed in ${r.ms} ms`);
  expect(r.code).toBe(1);
  expect(r.out).toBe('');
  // refused at once: it says how long it took, not the 3 s bound it never reached
  expect(r.err).toMatch(
    /^error: Redis at 127\.0\.0\.1:1\/0 did not answer \(the client gave up after \d+ ms; last error: .*ECONNREFUSED.*\n$/,
  );
  expect(r.err.split('\n')).toHaveLength(2);
  // a database the server does not have: an error, never database 0 in its place (ioredis goes on with 0)
  const db = await chronos('--redis-url', `${redisUrl()}/99`, 'stats');
  expect([db.code, db.out]).toEqual([1, '']);
  expect(db.err).toMatch(/^error: Redis at [\d.]+:\d+\/99: database 99 cannot be used \(ERR DB index is out of range\)/);
  // a port that accepts connections but never answers (not Redis): the answer timeout ends it
  const silent = createServer(() => {}).listen(0, '127.0.0.1');
  await new Promise((resolve) => silent.once('listening', resolve));
  try {
    const port = (silent.address() as AddressInfo).port;
    const s = await chronos('--redis-url', `redis://127.0.0.1:${port}`, 'queue', 'ls');
    console.log(`chronos against a silent port failed in ${s.ms} ms`);
    expect([s.code, s.err]).toEqual([1, expect.stringMatching(/^error: Redis at 127\.0\.0\.1:\d+\/0 did not answer within 3000 ms/)]);
  } finally {
    silent.close();
  }
});

test('stats (and --watch), leader, servers: tables by default, JSON with --json', async () => {
  const text = await chronos('stats');
  expect(text.code).toBe(0);
  expect(text.out).toMatch(/^Chronos · namespace chronos-test-cli-/);
  expect(text.out).toMatch(/Leader: api-1 · term \d+ · since .* ago\)/);
  expect(text.out).toMatch(/Schedules: 3 \(1 paused, 0 orphaned\)/);
  expect(text.out).toMatch(/│ emails +│ running +│/);
  const s = await json('stats');
  expect(Object.keys(s).sort()).toEqual(['at', 'instances', 'leader', 'namespace', 'queues', 'redis', 'schedules', 'servers']);
  expect((s.queues as { name: string }[]).map((q) => q.name)).toEqual(['default', 'emails', 'reports']);
  const watch = await chronos('stats', '--watch', '--interval', '100', '--iterations', '2');
  expect([watch.code, watch.out.match(/^Chronos · namespace/gm)?.length]).toEqual([0, 2]);
  expect(await json('leader')).toMatchObject({ instance: 'api-1', term: expect.any(Number), ttlMs: expect.any(Number) });
  expect((await chronos('leader')).out).toMatch(/│ instance +│ api-1 +│/);
  expect((await json<{ id: string }[]>('servers')).map((x) => x.id)).toEqual(['worker-1']);
  expect((await chronos('servers')).out).toMatch(/│ worker-1 │/);
});

test('queue ls, show, pause, resume; an unknown queue exits 1', async () => {
  expect((await json<{ name: string }[]>('queue', 'ls')).map((q) => q.name)).toEqual(['default', 'emails', 'reports']);
  const show = await chronos('queue', 'show', 'emails');
  expect(show.out).toMatch(/day \(UTC\)/);
  expect(await json('queue', 'show', 'emails')).toMatchObject({ name: 'emails', dead: 3, retry: 1, scheduled: 1, days: expect.any(Array) });
  expect((await chronos('queue', 'pause', 'reports')).out).toBe('Paused queue reports.\n');
  expect(await json('queue', 'show', 'reports')).toMatchObject({ paused: true });
  expect(await json('queue', 'resume', 'reports')).toEqual({ queue: 'reports', paused: false, changed: true });
  const nope = await chronos('queue', 'show', 'nope');
  // the known queues are named (before: only "not found", trial 12)
  expect([nope.code, nope.err]).toEqual([
    1,
    expect.stringMatching(/^error: Queue "nope" not found in namespace "[^"]+" \(known: default, emails, reports\)\n$/),
  ]);
  // a name no queue can have, and an empty filter (one that matched all for --error), are usage errors (trial 8)
  const empty = await chronos('queue', 'pause', '');
  expect([empty.code, empty.err]).toEqual([2, expect.stringMatching(/queue/)]);
  for (const filter of ['--type', '--error']) {
    const r = await chronos('task', 'ls', '--queue', 'emails', '--state', 'dead', filter, '');
    expect([r.code, r.err]).toEqual([2, expect.stringMatching(/expected (a )?non-empty/)]);
  }
});

test('--json: an error is one JSON object on stderr, {error: {code, message}}, with the same exit codes', async () => {
  const parse = (err: string) => {
    expect(err.split('\n')).toEqual([expect.any(String), '']); // one line
    return JSON.parse(err) as unknown;
  };
  const nope = await chronos('--json', 'queue', 'show', 'nope');
  expect([nope.code, nope.out]).toEqual([1, '']);
  expect(parse(nope.err)).toEqual({
    error: {
      code: 'QUEUE_NOT_FOUND',
      message: expect.stringMatching(/^Queue "nope" not found in namespace .* \(known: default, emails, reports\)$/),
    },
  });
  const limit = await chronos('--json', 'task', 'ls', '--queue', 'emails', '--state', 'dead', '--limit', '0');
  expect([limit.code, parse(limit.err)]).toEqual([
    2,
    { error: { code: 'USAGE', message: '--limit: expected an integer 1-1000, got "0"' } },
  ]);
  const unknown = await chronos('--json', 'frobnicate');
  expect([unknown.code, parse(unknown.err)]).toEqual([2, { error: { code: 'USAGE', message: "unknown command 'frobnicate'" } }]);
  const missing = await chronos('--json');
  expect([missing.code, parse(missing.err)]).toEqual([2, { error: { code: 'USAGE', message: expect.stringMatching(/^missing command/) } }]);
  const down = await chronos('--json', '--redis-url', 'redis://127.0.0.1:1', 'stats');
  expect([down.code, parse(down.err)]).toEqual([
    1,
    { error: { code: 'REDIS_UNREACHABLE', message: expect.stringMatching(/^Redis at 127\.0\.0\.1:1\/0 did not answer/) } },
  ]);
});

test('task ls (pages), show, retry, delete, run, cancel, and dead groups', async () => {
  type Page = { tasks: { id: string }[]; cursor?: string };
  const page1 = await json<Page>('task', 'ls', '--queue', 'emails', '--state', 'dead', '--limit', '2');
  expect(page1.tasks).toHaveLength(2);
  const page2 = await json<Page>('task', 'ls', '--queue', 'emails', '--state', 'dead', '--cursor', page1.cursor!);
  expect([...page1.tasks, ...page2.tasks].map((t) => t.id).sort()).toEqual([...seeded.ids.dead].sort());
  expect(page2.cursor).toBeUndefined();
  expect((await chronos('task', 'ls', '--queue', 'emails', '--state', 'dead', '--limit', '2')).out).toMatch(/more: --cursor '/);
  const show = await json('task', 'show', seeded.ids.retry);
  expect(show).toMatchObject({ id: seeded.ids.retry, queue: 'emails', state: 'retry', payload: { to: 'd@slow.test', subject: 'Invoice' } });
  expect((await chronos('task', 'show', seeded.ids.retry)).out).toMatch(/last error, .*:\nError: SMTP timeout after 30000 ms\n\s+at /);
  expect((await chronos('task', 'show', 'missing')).code).toBe(1);
  // an unknown --queue is named as such, as every command with --queue does (was: "Task … not found in queue "nope"")
  for (const verb of ['show', 'retry', 'cancel']) {
    const noQueue = await chronos('task', verb, seeded.ids.retry, '--queue', 'nope');
    expect([noQueue.code, noQueue.err]).toEqual([
      1,
      expect.stringMatching(/^error: Queue "nope" not found in namespace "[^"]+" \(known: /),
    ]);
  }

  const groups = await json<{ groups: { message: string; count: number }[] }>('dead', 'groups');
  expect(groups.groups.map((g) => [g.message, g.count])).toEqual([
    ['NonRetryableError: mailbox unavailable (550)', 2],
    ['NonRetryableError: invalid address', 1],
  ]);
  expect((await chronos('dead', 'groups', '--error', 'invalid')).out).toMatch(/│ 1 +│ NonRetryableError: invalid address/);

  const one = await chronos('task', 'retry', seeded.ids.dead[2]);
  expect([one.code, one.out]).toEqual([0, `Retried dead task ${seeded.ids.dead[2]} of queue emails.\n`]);
  const notDead = await chronos('task', 'retry', seeded.ids.retry);
  // it is there, waiting for a retry: said so (was: "not found in queue "emails" (state dead)")
  expect([notDead.code, notDead.err]).toEqual([
    1,
    `error: Task ${seeded.ids.retry} of queue "emails" is in state retry, not dead: only a dead task can be retried\n`,
  ]);
  const all = await chronos('task', 'retry', '--all', '--queue', 'emails', '--error', '550', '--yes');
  expect([all.code, all.out]).toEqual([0, 'Retried 2 dead task(s) of queue emails (error containing "550").\n']);
  await waitFor(async () => (await json<{ dead: number }>('queue', 'show', 'emails')).dead === 3, 'the retried tasks to die again');

  expect(await json('task', 'delete', seeded.ids.scheduled)).toEqual({ count: 1, ids: [seeded.ids.scheduled] });
  const deleted = await json('task', 'delete', '--all', '--queue', 'emails', '--state', 'dead', '--type', 'email.send', '--yes');
  expect(deleted).toMatchObject({ count: 3 });
  expect((await chronos('task', 'delete', '--all', '--queue', 'emails', '--yes')).code).toBe(2); // --state is required
  expect((await chronos('task', 'delete', seeded.ids.active)).err).toMatch(/is active: use `chronos task cancel/);
  const ran = await chronos('task', 'run', seeded.ids.retry);
  expect(ran.out).toBe(`Task ${seeded.ids.retry} of queue emails is pending now (it was retry).\n`);
  const cancel = await chronos('task', 'cancel', seeded.ids.active);
  const said = `Cancelled task ${seeded.ids.active}: it is dead (reason cancelled); the server running it aborts its signal.\n`;
  expect([cancel.code, cancel.out]).toEqual([0, said]);
  const cancelled = await json('task', 'show', seeded.ids.active);
  expect(cancelled).toMatchObject({ state: 'dead', reason: 'cancelled', lastError: expect.stringMatching(/cancelled by cli:/) });
  const again = await chronos('task', 'cancel', seeded.ids.active);
  expect(again.code).toBe(1);
  expect(again.err).toMatch(/is dead, not active: only a running task can be cancelled; it is dead already \(reason cancelled\)/);
  const pending = await json<{ count: number }>('task', 'delete', '--all', '--queue', 'default', '--state', 'pending', '--yes');
  expect(pending.count).toBeGreaterThanOrEqual(1);
});

test('schedule ls, show, history, pause (with a note), resume, trigger, backfill, rm', async () => {
  const ls = await chronos('schedule', 'ls');
  expect(ls.out).toMatch(/│ tenant-42\.digest +│ 0 6 \* \* MON +│ Europe\/Paris +│ emails +│ email\.digest +│ runtime +│ - +│ paused +│/);
  const names = (await json<{ name: string }[]>('schedule', 'ls')).map((s) => s.name);
  expect(names).toEqual(['health-check', 'nightly-report', 'tenant-42.digest']);
  const show = await chronos('schedule', 'show', 'tenant-42.digest');
  expect(show.out).toMatch(/paused note +│ tenant asked to stop the digest until January — by cli:ada@ops/);
  const nightly = await json('schedule', 'show', 'nightly-report', '--next', '2');
  expect(nightly).toMatchObject({ origin: 'code', next: [expect.any(Number), expect.any(Number)] });
  expect((await chronos('schedule', 'show', 'nope')).code).toBe(1);

  const paused = await json('schedule', 'pause', 'health-check', '--note', 'maintenance');
  expect(paused).toEqual({ schedule: 'health-check', paused: true, changed: true, note: 'maintenance' });
  const shown = await json('schedule', 'show', 'health-check');
  expect(shown).toMatchObject({ paused: true, pause: { note: 'maintenance', actor: expect.stringMatching(/^cli:/) } });
  expect((await chronos('--actor', 'ops:eve', 'schedule', 'resume', 'health-check')).out).toBe('Resumed schedule health-check.\n');
  const trig = await json<{ taskId: string }>('schedule', 'trigger', 'nightly-report');
  expect(trig.taskId).toMatch(/^nightly-report:manual:/);
  type Backfill = { triggers: number; enqueued: number; duplicates: number };
  // -10m reaches before the seed's scheduler started, so some triggers are new however slow the run (-1m was flaky under load)
  const back = await json<Backfill>('schedule', 'backfill', 'health-check', '--from', '-10m');
  expect(back.triggers).toBeGreaterThanOrEqual(5);
  expect(back.enqueued + back.duplicates).toBe(back.triggers);
  const again = await chronos('schedule', 'backfill', 'health-check', '--from', '-10m');
  expect(again.out).toMatch(/0 enqueued \(new\)|1 enqueued \(new\)/); // at most the trigger that came due meanwhile
  expect((await chronos('schedule', 'backfill', 'health-check', '--from', 'yesterday-ish')).code).toBe(2);
  const hist = await json<{ outcome: string; by?: string }[]>('schedule', 'history', 'nightly-report');
  expect(hist[0]).toMatchObject({ outcome: 'manual', by: expect.stringMatching(/^cli:/) });
  expect((await chronos('schedule', 'history', 'health-check', '--limit', '2')).out).toMatch(/│ backfill +│/);

  const rmCode = await chronos('schedule', 'rm', 'nightly-report');
  const refused = /^error: Schedule "nightly-report" is declared in code by live instance\(s\) api-1.*--force/;
  expect([rmCode.code, rmCode.err]).toEqual([1, expect.stringMatching(refused)]);
  expect((await chronos('schedule', 'rm', 'tenant-42.digest')).out).toBe('Removed schedule tenant-42.digest.\n');
  expect((await json<unknown[]>('schedule', 'ls')).length).toBe(2);
});
