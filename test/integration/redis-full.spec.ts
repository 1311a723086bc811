// A Redis at maxmemory with `noeviction` (the policy Chronos asks for) refuses every write, and every
// command queued in a MULTI, reads included. What an operator reads then must still answer, and the
// loops must say so once, not at every call (trial 45: a private Redis's maxmemory set below its use
// while three replicas ran).
import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { Inspector } from '../../lib/core/admin/inspector.js';
import { Scheduler } from '../../lib/core/scheduler/scheduler.js';
import { CLI_MAIN } from '../helpers/cli.js';
import { PrivateRedis } from '../helpers/redis-server.js';
import { newNamespace } from '../helpers/redis.js';
import { recordingLogger, waitFor } from '../helpers/wait.js';

let redis: PrivateRedis;
let admin: Redis;
beforeEach(async () => {
  redis = await PrivateRedis.start();
  admin = new Redis(redis.url);
});
afterEach(async () => {
  admin.disconnect();
  await redis.kill();
});

/** OOM errors Redis answered so far (INFO errorstats): each refused call of a loop is one. */
async function refusedCalls(): Promise<number> {
  const m = /^errorstat_OOM:count=(\d+)/m.exec(await admin.info('errorstats'));
  return Number(m?.[1] ?? 0);
}

function cli(ns: string, ...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: redis.url, CHRONOS_NAMESPACE: ns };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [CLI_MAIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out, err })));
}

// before: Inspector.leader() read the shard leases in a MULTI, which Redis refuses while over
// maxmemory: it failed with 'EXECABORT Transaction discarded because of previous errors.', and so did
// chronos stats, the console's overview, the metrics' fleet gauges and the health indicator's lease read
test('the leader and chronos stats are read while Redis is over maxmemory', async () => {
  const ns = newNamespace('full');
  const scheduler = new Scheduler({ connection: redis.url, namespace: ns, instanceId: 'A', leaderTtl: 30_000, logger: false });
  const inspector = new Inspector({ connection: redis.url, namespace: ns });
  try {
    await scheduler.start();
    await waitFor(() => scheduler.isLeader, 'A to lead');
    await admin.config('SET', 'maxmemory', '1');
    await expect(admin.set(`${ns}:probe`, 'x')).rejects.toThrow(/OOM/);
    expect((await inspector.leader())?.instance).toBe('A');
    const stats = await cli(ns, 'stats');
    expect(stats.err).toBe('');
    expect(stats.code).toBe(0);
    expect(stats.out).toMatch(/Leader: A/);
  } finally {
    await admin.config('SET', 'maxmemory', '0');
    await inspector.close();
    await scheduler.stop();
  }
});

// before: every failed lease call logged 'Could not renew or take shard leases (error=…)', up to 13
// in the last half second of a lease and then every TTL/4: three lines a second per instance for
// as long as Redis was full, and the lease service's health said 'running' throughout
test('failing lease calls are logged once per run of failures, the lease service says failing, and the recovery is logged', async () => {
  const ns = newNamespace('full');
  const logger = recordingLogger();
  const scheduler = new Scheduler({
    connection: redis.url,
    namespace: ns,
    instanceId: 'A',
    leaderTtl: 2000,
    heartbeatInterval: 60_000,
    logger,
  });
  const leaseLines = () => logger.lines.filter((l) => /shard lease/i.test(l.message));
  const lease = () => scheduler.health().services.find((s) => s.name === 'lease')!;
  try {
    await scheduler.start();
    await waitFor(() => scheduler.isLeader, 'A to lead');
    await admin.config('SET', 'maxmemory', '1');
    await waitFor(() => logger.lines.some((l) => /Lost leadership/.test(l.message)), { what: 'A to step down', timeoutMs: 10_000 });
    // a dozen more refused calls (the lease's, at TTL/4 once stepped down) after the step-down
    const seen = await refusedCalls();
    await waitFor(async () => (await refusedCalls()) >= seen + 12, { what: 'a dozen more refused calls', timeoutMs: 20_000 });
    expect(lease().state).toBe('failing');
    expect(lease().lastError).toMatch(/OOM/);
    expect(leaseLines().map((l) => l.message)).toEqual([expect.stringMatching(/^Renewing or taking shard leases failed; .*OOM/)]);
    await admin.config('SET', 'maxmemory', '0');
    await waitFor(() => scheduler.isLeader, { what: 'A to lead again', timeoutMs: 10_000 });
    expect(lease().state).toBe('running');
    expect(leaseLines().map((l) => l.message)).toEqual([
      expect.stringMatching(/^Renewing or taking shard leases failed; .*OOM/),
      expect.stringMatching(/^Renewing or taking shard leases recovered after \d+ failed attempts$/),
    ]);
  } finally {
    await admin.config('SET', 'maxmemory', '0');
    await scheduler.stop();
  }
});
