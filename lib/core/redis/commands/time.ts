import { engineTime } from '../../runtime/time.js';
import type { RedisClient } from '../types.js';

/**
 * Redis server time by one `TIME`, epoch ms (whole ms, rounded down). The round trip is also a
 * sample of the process's time source (runtime/time.ts `engineTime`), so a process whose other round
 * trips carry no Redis time (a client that only enqueues) counts delays by Redis time, not by its
 * own clock.
 */
export async function sampleRedisTime(client: RedisClient): Promise<number> {
  const sent = engineTime.localNow();
  const [s, us] = await client.time();
  const now = Number(s) * 1000 + Math.floor(Number(us) / 1000);
  engineTime.sample(sent, now, engineTime.localNow());
  return now;
}
