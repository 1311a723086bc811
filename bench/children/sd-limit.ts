// Workload 13, the plain-Redis limit of "schedules as data" (issue 25): N schedules in a ZSET by next due, each
// with a definition (JSON with two labels) in a hash. On `go` one loop pulls the due members 500 at a time
// (ZRANGEBYSCORE … LIMIT 0 500) and fires each with one small Lua call — SET NX PX dedup key, XADD to a stream,
// ZADD its next due, HSET lastFired — the 500 calls pipelined; until none is due.
// Config: { url, prefix, schedules, batch }. IPC: → ready (after the setup) ; ← go → done { fires, ms, cpuUs }.
import { Redis } from 'ioredis';
import { childConfig, next, onExit, send } from '../lib/ipc.js';
import { labelsOf } from '../lib/schedules-data.js';
import { cpuSince, nowMs } from '../lib/time.js';

interface Config {
  url: string;
  prefix: string;
  schedules: number;
  batch: number;
}

const FIRE_LUA = `
if redis.call('SET', KEYS[1], '1', 'NX', 'PX', 86400000) then
  redis.call('XADD', KEYS[2], '*', 'schedule', ARGV[1], 'tr', ARGV[2], 'payload', ARGV[4])
end
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[2])
return 1`;

const cfg = childConfig<Config>();
const redis = new Redis(cfg.url);
onExit(() => redis.quit());
const k = {
  due: `${cfg.prefix}:due`,
  defs: `${cfg.prefix}:defs`,
  stream: `${cfg.prefix}:stream`,
  lastFired: `${cfg.prefix}:lastFired`,
  dedup: (m: string, at: string) => `${cfg.prefix}:dedup:${m}:${at}`,
};
const sha = (await redis.script('LOAD', FIRE_LUA)) as string;
// all due now (a burst), each with its definition
const instant = Math.floor(Date.now() / 1000) * 1000;
for (let i = 0; i < cfg.schedules; i += 1000) {
  const p = redis.pipeline();
  for (let j = i; j < Math.min(cfg.schedules, i + 1000); j++) {
    const name = `tenant.${j}.digest`;
    p.zadd(k.due, instant, name);
    const def = {
      spec: `${j % 60} 3 1 * *`,
      tz: 'Europe/Paris',
      queue: `digests-${j % 10}`,
      type: 'digest.send',
      payload: { tenant: `t-${j}` },
    };
    p.hset(k.defs, name, JSON.stringify({ ...def, labels: labelsOf(j) }));
  }
  await p.exec();
}
send({ type: 'ready', instant });
await next('go');
const cpu0 = process.cpuUsage();
const t0 = nowMs();
let fires = 0;
for (;;) {
  const due = await redis.zrangebyscore(k.due, '-inf', Date.now(), 'WITHSCORES', 'LIMIT', 0, cfg.batch);
  if (due.length === 0) break;
  const p = redis.pipeline();
  for (let i = 0; i < due.length; i += 2) {
    const [m, at] = [due[i], due[i + 1]];
    p.evalsha(sha, 4, k.dedup(m, at), k.stream, k.due, k.lastFired, m, at, String(Number(at) + 86_400_000), '{"tenant":1}');
  }
  const res = await p.exec();
  for (const [err] of res ?? []) if (err) throw err;
  fires += due.length / 2;
}
send({ type: 'done', fires, ms: nowMs() - t0, cpuUs: cpuSince(cpu0) });
