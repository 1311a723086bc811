// Experiment (not part of `npm run bench`): the bytes a listpack-bucketed layout of the schedule registry's
// indexes and a tighter definition text would take (issue 25, ≤ 500 B per schedule), measured on a private
// redis-server with raw commands — no library code, a sizing of the design, not an implementation. For N of
// workload 13's digests (names `tenant.<i>.digest`, 16 shards by the library's FNV-1a, two labels each):
//   - today's layout: per shard a names ZSET, a due ZSET (epoch-ms scores), one ZSET per label pair (scores 0);
//   - range buckets: each of those ZSETs cut into buckets of at most `--fill` members (name order for the names
//     and label indexes: a bucket per run of consecutive names, found through a per-shard directory ZSET of
//     first name → bucket; the due index by a hash of the name into `--due-buckets` per shard, with a per-shard
//     heads ZSET bucket → its earliest score), small enough to stay listpack-encoded (zset-max-listpack-entries
//     128, values ≤ 64 bytes: a longer name turns its own bucket into a skiplist);
//   - the definition text in today's compact form and in a tight form (one-letter keys, `runtime` as 1, the
//     fingerprints as 11 base64url characters), in the shards' HASHes.
// MEMORY USAGE … SAMPLES 0 summed per structure ÷ N. `--pages K`: then K pages of 100 names with label plan=pro,
// walking a cursor, read from each shard's label ZSET (ZRANGEBYLEX, as Inspector.schedulePage) against its
// buckets (one Lua call per shard: the directory's bucket at the cursor, then the next ones), 16 shards in flight,
// p50 / p99 ms of the 16 reads (the page's definitions and view left out: the same in both).
//   node dist/bench/experiments/schedule-bytes-design.js [--n 100000] [--fill 96] [--due-buckets 128] [--pages 50]
import { randomBytes } from 'node:crypto';
import { shardOf } from '../../lib/core/redis/shard-keys.js';
import { BenchRedis } from '../lib/redis.js';
import { digest } from '../lib/schedules-data.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : def;
};
const n = Number(arg('n', '100000'));
const fill = Number(arg('fill', '96'));
const dueBuckets = Number(arg('due-buckets', '128'));
const pages = Number(arg('pages', '0'));
const SHARDS = 16;
const redis = await BenchRedis.open(process.argv.includes('--redis-url') ? process.env.REDIS_URL : undefined);
const r = redis.client;

/** FNV-1a 32 of a string (a bucket of the due index). */
function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

async function usage(pattern: string): Promise<{ bytes: number; keys: number; encodings: Set<string> }> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await r.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  let bytes = 0;
  const encodings = new Set<string>();
  for (let i = 0; i < keys.length; i += 500) {
    const p = r.pipeline();
    for (const k of keys.slice(i, i + 500)) p.call('MEMORY', 'USAGE', k, 'SAMPLES', '0').call('OBJECT', 'ENCODING', k);
    const res = (await p.exec())!;
    for (let j = 0; j < res.length; j += 2) {
      bytes += Number(res[j][1]);
      encodings.add(String(res[j + 1][1]));
    }
  }
  return { bytes, keys: keys.length, encodings };
}

/** ZADDs `members` (score, name pairs) to `key`, 1,000 at a time. */
async function zadd(key: string, members: (string | number)[]): Promise<void> {
  for (let i = 0; i < members.length; i += 2000) await r.zadd(key, ...members.slice(i, i + 2000));
}

/** Range buckets of `sorted` names under `prefix`: bucket keys `<prefix>:b<j>`, directory `<prefix>:dir`. */
async function rangeBuckets(prefix: string, sorted: string[]): Promise<void> {
  const dir: (string | number)[] = [];
  for (let j = 0; j * fill < sorted.length; j++) {
    const part = sorted.slice(j * fill, (j + 1) * fill);
    await zadd(
      `${prefix}:b${j}`,
      part.flatMap((m) => [0, m]),
    );
    dir.push(0, `${part[0]}\u0000${j}`);
  }
  await zadd(`${prefix}:dir`, dir);
}

const rows: [string, number, number, string][] = [];
const report = async (label: string, pattern: string) => {
  const u = await usage(pattern);
  rows.push([label, u.keys, u.bytes / n, [...u.encodings].join(',')]);
};

/** The next `want` names after `min` ('-' or '(<name>') of a bucketed index (`<prefix>:dir`, `<prefix>:b<j>`). */
const BUCKET_PAGE = `
local dir, prefix, min, want = KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3])
local at
if min ~= '-' then at = redis.call('ZREVRANGEBYLEX', dir, '(' .. string.sub(min, 2) .. '\\1', '-', 'LIMIT', 0, 1)[1] end
at = at or redis.call('ZRANGE', dir, 0, 0)[1]
local out = {}
while at and #out < want do
  local got = redis.call('ZRANGEBYLEX', prefix .. string.match(at, '%z(%d+)$'), min, '+', 'LIMIT', 0, want - #out)
  for _, m in ipairs(got) do out[#out + 1] = m end
  at = redis.call('ZRANGEBYLEX', dir, '(' .. at, '+', 'LIMIT', 0, 1)[1]
end
return out`;

/** p50 / p99 of `pages` label pages read both ways (see the module doc). */
async function pageTimes(): Promise<void> {
  const walk = async (read: (k: number, min: string) => Promise<string[]>) => {
    const ms: number[] = [];
    const seen: string[] = [];
    let min = '-';
    for (let i = 0; i < pages; i++) {
      const t0 = performance.now();
      const lists = await Promise.all(Array.from({ length: SHARDS }, (_, k) => read(k, min)));
      ms.push(performance.now() - t0);
      const page = lists.flat().sort().slice(0, 100);
      seen.push(page.join(','));
      min = page.length === 100 ? `(${page[99]}` : '-';
    }
    ms.sort((a, b) => a - b);
    return {
      seen: seen.join(';'),
      text: `p50 ${ms[Math.floor(ms.length / 2)].toFixed(1)} / p99 ${ms[Math.ceil(ms.length * 0.99) - 1].toFixed(1)} ms`,
    };
  };
  const today = await walk((k, min) => r.zrangebylex(`now:{${k}}:label:plan=pro`, min, '+', 'LIMIT', 0, 101));
  const buckets = await walk(
    (k, min) => r.eval(BUCKET_PAGE, 1, `bkt:{${k}}:label:plan=pro:dir`, `bkt:{${k}}:label:plan=pro:b`, min, 101) as Promise<string[]>,
  );
  if (today.seen !== buckets.seen) throw new Error('the bucketed index read other pages than the ZSET');
  console.log(
    `${pages} pages of 100 by label plan=pro (the same from both), the 16 shards' index reads: ZSET ${today.text}; buckets ${buckets.text}`,
  );
}

try {
  const now = Date.now();
  const defs = Array.from({ length: n }, (_, i) => digest(i, true));
  const byShard = Array.from({ length: SHARDS }, () => [] as typeof defs);
  for (const d of defs) byShard[shardOf(d.name)].push(d);
  for (let k = 0; k < SHARDS; k++) {
    const list = byShard[k];
    const names = list.map((d) => d.name).sort();
    // today: one ZSET each
    await zadd(
      `now:{${k}}:names`,
      names.flatMap((m) => [0, m]),
    );
    await zadd(
      `now:{${k}}:due`,
      list.flatMap((d, i) => [now + 86_400_000 + i * 997, d.name]),
    );
    const pairs = new Map<string, string[]>();
    for (const d of list)
      for (const [lk, lv] of Object.entries(d.labels ?? {})) {
        const key = `${lk}=${lv}`;
        const got = pairs.get(key);
        if (got) got.push(d.name);
        else pairs.set(key, [d.name]);
      }
    for (const [key, members] of pairs)
      await zadd(
        `now:{${k}}:label:${key}`,
        members.sort().flatMap((m) => [0, m]),
      );
    // range buckets
    await rangeBuckets(`bkt:{${k}}:names`, names);
    for (const [key, members] of pairs) await rangeBuckets(`bkt:{${k}}:label:${key}`, members.sort());
    const buckets = new Map<number, (string | number)[]>();
    list.forEach((d, i) => {
      const b = (fnv(d.name) >>> 4) % dueBuckets; // the low 4 bits are the shard (shardOf: the same FNV-1a)
      const got = buckets.get(b);
      if (got) got.push(now + 86_400_000 + i * 997, d.name);
      else buckets.set(b, [now + 86_400_000 + i * 997, d.name]);
    });
    const heads: (string | number)[] = [];
    for (const [b, members] of buckets) {
      await zadd(`bkt:{${k}}:due:b${b}`, members);
      heads.push(Math.min(...members.filter((x): x is number => typeof x === 'number')), String(b));
    }
    await zadd(`bkt:{${k}}:due:heads`, heads);
    // the definition text, today's compact form and the tight form
    const hNow: string[] = [];
    const hTight: string[] = [];
    for (const d of list) {
      const fp = randomBytes(8);
      const tfp = randomBytes(8);
      const payload = JSON.stringify(JSON.stringify(d.payload));
      const zone = d.timeZone === 'UTC' ? '' : `,"timeZone":${JSON.stringify(d.timeZone)}`;
      const labels = JSON.stringify(d.labels);
      hNow.push(
        d.name,
        `{"expression":${JSON.stringify(d.spec)}${zone},"queue":"${d.queue}","runtime":true,"type":"${d.type}","payload":${payload},` +
          `"labels":${labels},"fp":"${fp.toString('hex')}","tfp":"${tfp.toString('hex')}","registeredAt":${now}}`,
      );
      hTight.push(
        d.name,
        `{"e":${JSON.stringify(d.spec)}${zone.replace('"timeZone"', '"z"')},"q":"${d.queue}","r":1,"t":"${d.type}","p":${payload},` +
          `"l":${labels},"f":"${fp.toString('base64url')}","g":"${tfp.toString('base64url')}","a":${now}}`,
      );
    }
    for (let i = 0; i < hNow.length; i += 2000) {
      await r.hset(`now:{${k}}:schedules`, ...hNow.slice(i, i + 2000));
      await r.hset(`tight:{${k}}:schedules`, ...hTight.slice(i, i + 2000));
    }
  }
  await report('today: registry HASH (compact form)', 'now:*:schedules');
  await report('tight form: registry HASH', 'tight:*:schedules');
  await report('today: index:names ZSET', 'now:*:names');
  await report('buckets: names', 'bkt:*:names:*');
  await report('today: label ZSETs (2 labels)', 'now:*:label:*');
  await report('buckets: labels (2 labels)', 'bkt:*:label:*');
  await report('today: due ZSET', 'now:*:due');
  await report('buckets: due', 'bkt:*:due:*');
  if (pages > 0) await pageTimes();
  console.log(`n=${n}, range buckets of ${fill}, ${dueBuckets} due buckets per shard (MEMORY USAGE SAMPLES 0 ÷ N):`);
  for (const [label, keys, per, enc] of rows)
    console.log(`  ${label.padEnd(38)} ${String(keys).padStart(6)} keys ${per.toFixed(1).padStart(7)} B/schedule  ${enc}`);
} finally {
  await redis.close();
}
