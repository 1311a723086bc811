// `npm run sample:cluster` (scripts/sample-cluster.mjs) while an `npm run sample` of the same namespace
// runs: the README lists both commands together and both default to the namespace chronos-sample, so
// the four processes form one fleet. The script's hand-over demo must stop the one of ITS replicas
// that leads the most shards. Before (trial 40): it asked /status for the fleet's top leader, which
// was the outside process (4 shards each, the tie going to the holder of shard 0, which the first
// process keeps), found it was none of its replicas and printed "no leader found to stop": no
// hand-over at all.
import { jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { freePort, ROOT, SampleMain } from '../helpers/sample.js';
import { deferred } from '../helpers/wait.js';

jest.setTimeout(60_000);

const ns = newNamespace('samplecl');
let outside: SampleMain | undefined;
let script: ReturnType<typeof spawn> | undefined;

afterAll(async () => {
  if (script && script.exitCode === null && script.signalCode === null) {
    const exited = new Promise((resolve) => script!.on('exit', resolve));
    script.kill('SIGINT'); // the script stops its replicas (they resign and drain), then exits
    await exited;
  }
  outside?.kill('SIGKILL');
  await outside?.exited;
  await deleteNamespace(ns);
});

test('sample:cluster beside an npm run sample of the same namespace stops its own replica that leads the most shards', async () => {
  outside = new SampleMain({ REDIS_URL: redisUrl(), PORT: String(await freePort()), CHRONOS_NAMESPACE: ns, CHRONOS_INSTANCE: 'outside' });
  await outside.line(/Leadership acquired \(.*shards=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15 /);

  script = spawn(process.execPath, ['scripts/sample-cluster.mjs'], {
    cwd: ROOT,
    env: {
      ...process.env,
      REDIS_URL: redisUrl(),
      CHRONOS_NAMESPACE: ns,
      CLUSTER_PORT: String(await freePort()),
      HANDOVER_AFTER_MS: '3000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const stopped = deferred<string>();
  const onData = (d: Buffer) => {
    out += d.toString();
    const m = out.match(/\[cluster\] (stopping the replica that leads the most shards .*|no leader found to stop.*)/);
    if (m) stopped.resolve(m[1]);
  };
  script.stdout!.on('data', onData);
  script.stderr!.on('data', onData);
  script.on('exit', () => stopped.resolve(`(the script exited)\n${out}`));

  const said = await stopped.promise;
  expect(said).toMatch(/^stopping the replica that leads the most shards \(replica [ABC]\b/);
  // it tells the user why the fleet is bigger than its three replicas
  expect(out).toMatch(/outside .*not one of this script's replicas/);

  // Ctrl-C once the replicas that still run have booted (a Ctrl-C during a replica's boot stops it
  // mid-start, which is another case: its scheduler then refuses to start, logged as an ERROR)
  const listening = (name: string) => new RegExp(`\\[${name}\\][^\\n]*Listening on`);
  const replicas = ['A', 'B', 'C'].filter((r) => !said.includes(`(replica ${r})`));
  await new Promise<void>((resolve) => {
    const check = () => replicas.every((r) => listening(r).test(out)) && resolve();
    script!.stdout!.on('data', check);
    check();
  });
  const exited = new Promise((resolve) => script!.on('exit', resolve));
  script.kill('SIGINT'); // Ctrl-C: every replica resigns and drains
  await exited;
  expect(out).not.toMatch(/ERROR/);
});
