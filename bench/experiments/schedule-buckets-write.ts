// Experiment (not part of `npm run bench`): the Redis CPU that listpack-bucketed indexes would add to a bulk add
// (issue 25: addSchedules ≥ 48,000/s here), a sizing beside schedule-bytes-design.ts — raw Lua, no library code.
// N of workload 13's digest names (two labels each) are sent per shard in calls of `--chunk` names (as
// put-schedules.lua gets them), and each call keeps the shard's indexes:
//   - today: one ZADD to the names ZSET, one per label pair, one to the due ZSET;
//   - buckets: the names and each label pair's names in range buckets of ≤ 120 members (a directory ZSET of first
//     name → bucket, read once per call and walked beside the call's sorted names; a run of them that falls in one
//     bucket is one ZADD (the buckets' counts in a HASH: one HMGET and one HSET per call), and a bucket that would
//     pass min(120, 1.25 × `--fill`) is rewritten as fresh pieces of ≤ `--fill`: Redis never turns a skiplist back into a listpack, so a
//     bucket must never pass 128, even for a moment); the due index in `--due-buckets` hash buckets per shard
//     with a heads ZSET (bucket → its earliest score: an add only lowers it, one ZADD LT per call).
// Reports Redis CPU (INFO used_cpu_sys + used_cpu_user, private Redis) and wall time per schedule for each, the
// buckets' bytes per schedule and encodings (every bucket must stay a listpack), and checks that the buckets
// hold the same names as the ZSETs.
//   node dist/bench/experiments/schedule-buckets-write.js [--n 100000] [--chunk 125] [--fill 96] [--due-buckets 128]
import { shardOf } from '../../lib/core/redis/shard-keys.js';
import { BenchRedis } from '../lib/redis.js';
import { digest } from '../lib/schedules-data.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : def;
};
const n = Number(arg('n', '100000'));
const chunk = Number(arg('chunk', '125'));
const fill = Number(arg('fill', '96'));
const dueBuckets = Number(arg('due-buckets', '128'));
const SHARDS = 16;
const redis = await BenchRedis.open(process.argv.includes('--redis-url') ? process.env.REDIS_URL : undefined);
const r = redis.client;

// ARGV: prefix, m, then m names, m due scores, m due buckets, then each name's label pairs (2 per name)
const TODAY = `
local P, m = ARGV[1], tonumber(ARGV[2])
local names, dues, byLabel = {}, {}, {}
for i = 1, m do
  local name = ARGV[2 + i]
  names[#names + 1] = '0'; names[#names + 1] = name
  dues[#dues + 1] = ARGV[2 + m + i]; dues[#dues + 1] = name
  for j = 1, 2 do
    local k = P .. 'label:' .. ARGV[2 + 3 * m + 2 * (i - 1) + j]
    local l = byLabel[k] or {}
    l[#l + 1] = '0'; l[#l + 1] = name
    byLabel[k] = l
  end
end
redis.call('ZADD', P .. 'names', unpack(names))
redis.call('ZADD', P .. 'due', unpack(dues))
for k, l in pairs(byLabel) do redis.call('ZADD', k, unpack(l)) end
return m`;

const BUCKETS = `
local P, m, FILL = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local MAX = math.min(120, math.floor(FILL * 1.25))
local base = 3
local function idOf(e) return string.match(e, '%z(%d+)$') end
local function firstOf(e) return string.match(e, '^(.*)%z%d+$') end
-- bucket id's members become \`members\` (sorted), in fresh pieces of <= FILL (a new key is a listpack)
local counts -- bucket id -> its count, written to B..'c' at the end of bucketAdd (no ZCARD per bucket)
local function rewrite(B, id, members, entry)
  local dir = B .. 'dir'
  redis.call('DEL', B .. id)
  if entry then redis.call('ZREM', dir, entry) end
  local pieces = math.ceil(#members / FILL)
  local size = math.ceil(#members / pieces)
  for p = 0, pieces - 1 do
    local pid = p == 0 and id or tostring(redis.call('INCR', B .. 'n'))
    local a = {}
    for j = p * size + 1, math.min(#members, (p + 1) * size) do a[#a + 1] = '0'; a[#a + 1] = members[j] end
    redis.call('ZADD', B .. pid, unpack(a))
    redis.call('ZADD', dir, 0, members[p * size + 1] .. '\\0' .. pid)
    counts[#counts + 1] = pid; counts[#counts + 1] = #a / 2
  end
end
-- adds \`list\` (sorted names) to the range-bucketed index B: its directory read once, walked beside the names
local function bucketAdd(B, list)
  local dir = B .. 'dir'
  counts = {}
  local entries = redis.call('ZRANGE', dir, 0, -1)
  if #entries == 0 then
    rewrite(B, tostring(redis.call('INCR', B .. 'n')), list, nil)
    redis.call('HSET', B .. 'c', unpack(counts))
    return
  end
  local firsts = {}
  for e, entry in ipairs(entries) do firsts[e] = firstOf(entry) end
  -- the runs of the names per bucket first (pure Lua), then the touched buckets' counts in one HMGET
  local runs, ids = {}, {}
  local i, e = 1, 1
  while i <= #list do
    while e < #entries and firsts[e + 1] <= list[i] do e = e + 1 end
    local bound = firsts[e + 1]
    local batch = {}
    while i <= #list and (not bound or list[i] < bound) do batch[#batch + 1] = list[i]; i = i + 1 end
    runs[#runs + 1] = {e, batch}
    ids[#ids + 1] = idOf(entries[e])
  end
  local cards = redis.call('HMGET', B .. 'c', unpack(ids))
  for r, run in ipairs(runs) do
    local e, batch = run[1], run[2]
    local at, id = entries[e], ids[r]
    local key = B .. id
    local card = tonumber(cards[r]) or 0
    if card + #batch <= MAX then
      local a = {}
      for _, x in ipairs(batch) do a[#a + 1] = '0'; a[#a + 1] = x end
      redis.call('ZADD', key, unpack(a))
      counts[#counts + 1] = id; counts[#counts + 1] = card + #batch
      if batch[1] < firsts[e] then
        redis.call('ZREM', dir, at)
        redis.call('ZADD', dir, 0, batch[1] .. '\\0' .. id)
      end
    else
      local cur = redis.call('ZRANGE', key, 0, -1)
      local merged, x, y = {}, 1, 1
      while x <= #cur or y <= #batch do
        if y > #batch or (x <= #cur and cur[x] < batch[y]) then merged[#merged + 1] = cur[x]; x = x + 1
        elseif x > #cur or batch[y] < cur[x] then merged[#merged + 1] = batch[y]; y = y + 1
        else merged[#merged + 1] = cur[x]; x = x + 1; y = y + 1 end
      end
      rewrite(B, id, merged, at)
    end
  end
  redis.call('HSET', B .. 'c', unpack(counts))
end
local names, byLabel, byDue = {}, {}, {}
for i = 1, m do
  local name = ARGV[base + i]
  names[#names + 1] = name
  local b = ARGV[base + 2 * m + i]
  local d = byDue[b] or {}
  d[#d + 1] = ARGV[base + m + i]; d[#d + 1] = name
  byDue[b] = d
  for j = 1, 2 do
    local k = P .. 'label:' .. ARGV[base + 3 * m + 2 * (i - 1) + j] .. ':'
    local l = byLabel[k] or {}
    l[#l + 1] = name
    byLabel[k] = l
  end
end
bucketAdd(P .. 'names:', names)
for k, l in pairs(byLabel) do bucketAdd(k, l) end
-- a bucket's head only moves down when members are added: one ZADD LT of every touched bucket's least new score
local heads = {}
for b, d in pairs(byDue) do
  redis.call('ZADD', P .. 'due:' .. b, unpack(d))
  local least = tonumber(d[1])
  for j = 3, #d, 2 do least = math.min(least, tonumber(d[j])) end
  heads[#heads + 1] = least; heads[#heads + 1] = b
end
redis.call('ZADD', P .. 'due-heads', 'LT', unpack(heads))
return m`;

/** FNV-1a 32 (the due bucket: its bits above the shard's 4). */
function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

const cpu = async () => {
  const t = await r.info('cpu');
  return Number(/used_cpu_sys:([0-9.]+)/.exec(t)![1]) + Number(/used_cpu_user:([0-9.]+)/.exec(t)![1]);
};

/** Sends every shard's names in calls of `chunk` (sorted within a call), 16 calls in flight. */
async function run(script: string, prefix: string): Promise<{ cpuUs: number; ms: number }> {
  const sha = (await r.script('LOAD', script)) as string;
  const defs = Array.from({ length: n }, (_, i) => digest(i, true));
  const calls: (string | number)[][] = [];
  const byShard = Array.from({ length: SHARDS }, () => [] as typeof defs);
  for (const d of defs) byShard[shardOf(d.name)].push(d);
  const now = Date.now();
  byShard.forEach((list, k) => {
    for (let i = 0; i < list.length; i += chunk) {
      const part = list.slice(i, i + chunk).sort((a, b) => (a.name < b.name ? -1 : 1));
      calls.push([
        `${prefix}:{${k}}:`,
        part.length,
        ...(script === BUCKETS ? [fill] : []),
        ...part.map((d) => d.name),
        ...part.map((_, j) => -(now + j)),
        ...part.map((d) => (fnv(d.name) >>> 4) % dueBuckets),
        ...part.flatMap((d) => Object.entries(d.labels!).map(([lk, lv]) => `${lk}=${lv}`)),
      ]);
    }
  });
  const c0 = await cpu();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < calls.length) await r.evalsha(sha, 0, ...calls[next++]);
    }),
  );
  const ms = performance.now() - t0;
  return { cpuUs: ((await cpu()) - c0) * 1e6, ms };
}

async function bytesOf(pattern: string): Promise<{ bytes: number; encodings: Set<string>; keys: number }> {
  let cursor = '0';
  let bytes = 0;
  let keys = 0;
  const encodings = new Set<string>();
  do {
    const [next, batch] = await r.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    for (const k of batch) {
      if ((await r.type(k)) !== 'zset') continue;
      keys++;
      bytes += Number(await r.call('MEMORY', 'USAGE', k, 'SAMPLES', '0'));
      encodings.add(String(await r.call('OBJECT', 'ENCODING', k)));
    }
  } while (cursor !== '0');
  return { bytes, encodings, keys };
}

try {
  const today = await run(TODAY, 'now');
  const buckets = await run(BUCKETS, 'bkt');
  // the same names: each shard's names ZSET against its buckets
  for (let k = 0; k < SHARDS; k++) {
    const want = await r.zrange(`now:{${k}}:names`, 0, -1);
    const dir = await r.zrange(`bkt:{${k}}:names:dir`, 0, -1);
    const got: string[] = [];
    for (const e of dir) got.push(...(await r.zrange(`bkt:{${k}}:names:${e.split('\u0000')[1]}`, 0, -1)));
    if (got.join(',') !== want.join(',')) throw new Error(`shard ${k}: the buckets hold other names than the ZSET`);
  }
  const per = (x: { cpuUs: number; ms: number }) =>
    `Redis CPU ${(x.cpuUs / n).toFixed(2)} µs, wall ${((x.ms * 1000) / n).toFixed(2)} µs per schedule (${Math.round(n / (x.ms / 1000))}/s)`;
  console.log(`n=${n}, calls of ${chunk} names per shard, 16 in flight, load ${(await import('node:os')).loadavg()[0].toFixed(1)}:`);
  console.log(`  today (names, 2 label, due ZSETs): ${per(today)}`);
  console.log(
    `  buckets (fill ${fill}, ≤ ${Math.min(120, Math.floor(fill * 1.25))}; ${dueBuckets} due buckets per shard): ${per(buckets)}`,
  );
  const b = await bytesOf('bkt:*');
  const t = await bytesOf('now:*');
  console.log(
    `  bytes per schedule: today ${(t.bytes / n).toFixed(1)} (${[...t.encodings].join(',')}), buckets ${(b.bytes / n).toFixed(1)} in ${b.keys} ZSETs (${[...b.encodings].join(',')}); same names: yes`,
  );
} finally {
  await redis.close();
}
