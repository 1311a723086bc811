/** Jest global setup: `npm test` sets REDIS_URL (scripts/with-redis.mjs); a bare `jest` run uses 127.0.0.1:6379. */
export default async function globalSetup(): Promise<void> {
  process.env.REDIS_URL ??= 'redis://127.0.0.1:6379';
}
