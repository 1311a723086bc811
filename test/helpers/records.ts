import type { Redis } from 'ioredis';

/** One handler call recorded by a fixture process. */
export interface Rec {
  id: string;
  type: string;
  instance: string;
  retried: number;
  phase: 'start' | 'done' | string;
  t: number;
  [k: string]: unknown;
}

/** Reads every record of a list. */
export async function readRecords(redis: Redis, key: string): Promise<Rec[]> {
  return (await redis.lrange(key, 0, -1)).map((s) => JSON.parse(s) as Rec);
}

/** Counts records by task id for one phase. */
export function countBy(recs: Rec[], phase: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of recs) if (r.phase === phase) m.set(r.id, (m.get(r.id) ?? 0) + 1);
  return m;
}
