// Where a namespace's Redis bytes go (issue 25): every key of `<prefix>:*` by SCAN, its MEMORY USAGE … SAMPLES 0,
// OBJECT ENCODING and entry count (pipelined, 500 keys a round trip), summed per structure. A structure is a key
// name with the hash tag, a label's `<k>=<v>`, a schedule's name and a trigger's instant taken out
// (`schedules`, `due`, `index:names`, `label:*`, `history:<schedule>`, `dedup:<schedule>:<trigger>`, …).
// MEMORY USAGE counts a dict entry as its struct size (24 B) where jemalloc gives it 32, so the sum stays ~5 %
// under the used_memory delta. Setup / report work only: it reads every key.
import type { Redis } from 'ioredis';

/** One structure of a namespace: its keys, their entries (members, fields, elements), bytes, encodings. */
export interface KeyGroup {
  group: string;
  keys: number;
  entries: number;
  /** MEMORY USAGE … SAMPLES 0 summed over its keys */
  bytes: number;
  /** `<type>/<encoding>` of its keys */
  encodings: string[];
}

/** The structure key `key` of namespace `prefix` is part of (see the module doc). */
export function groupOf(prefix: string, key: string): string {
  const rest = key.slice(prefix.length + 1).replace(/^\{[^}]*\}:/, '');
  if (rest.startsWith('label:')) return 'label:*';
  const m = /^([a-z-]+):(.+?)(:\d+)?$/.exec(rest);
  if (m && ['history', 'runs', 'dedup', 'overlap', 'buffered'].includes(m[1])) return `${m[1]}:<schedule>${m[3] ? ':<trigger>' : ''}`;
  return rest;
}

/** Every structure of namespace `prefix` (see the module doc), the largest first. */
export async function keyBreakdown(client: Redis, prefix: string): Promise<KeyGroup[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  const groups = new Map<string, KeyGroup & { enc: Set<string> }>();
  const reply = (res: [Error | null, unknown][] | null) =>
    res!.map(([err, v]) => {
      if (err) throw err;
      return v;
    });
  for (let i = 0; i < keys.length; i += 500) {
    const batch = keys.slice(i, i + 500);
    const p = client.pipeline();
    for (const key of batch) p.call('MEMORY', 'USAGE', key, 'SAMPLES', '0').call('OBJECT', 'ENCODING', key).type(key);
    const first = reply(await p.exec());
    const q = client.pipeline();
    batch.forEach((key, j) => {
      const type = first[j * 3 + 2] as string;
      if (type === 'zset') q.zcard(key);
      else if (type === 'hash') q.hlen(key);
      else if (type === 'set') q.scard(key);
      else if (type === 'list') q.llen(key);
      else if (type === 'stream') q.xlen(key);
      else q.echo('1');
    });
    const counts = reply(await q.exec()).map(Number);
    batch.forEach((key, j) => {
      const g = groupOf(prefix, key);
      const e = groups.get(g) ?? { group: g, keys: 0, entries: 0, bytes: 0, encodings: [], enc: new Set<string>() };
      e.keys++;
      e.bytes += Number(first[j * 3]);
      e.entries += counts[j];
      e.enc.add(`${first[j * 3 + 2] as string}/${first[j * 3 + 1] as string}`);
      groups.set(g, e);
    });
  }
  return [...groups.values()].map(({ enc, ...g }) => ({ ...g, encodings: [...enc] })).sort((a, b) => b.bytes - a.bytes);
}
