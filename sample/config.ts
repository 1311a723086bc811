// Everything the sample reads from its environment, in one place.
const env = process.env;

export const config = {
  /** Redis to use (`npm run sample` sets it: a local Redis, or a private one it starts). */
  redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  /** HTTP port. */
  port: Number(env.PORT ?? 3000),
  /** The sample's own key prefix, so it never touches another app's keys. */
  namespace: env.CHRONOS_NAMESPACE ?? 'chronos-sample',
  /** Name of this replica (shown in logs and by the Inspector); unique per running instance. */
  instance: env.CHRONOS_INSTANCE || undefined,
  /** Roles: CHRONOS_SCHEDULER=0 makes a worker-only replica, CHRONOS_WORKER=0 an enqueue-only one. */
  scheduler: env.CHRONOS_SCHEDULER !== '0',
  worker: env.CHRONOS_WORKER !== '0',
  /** Short cadences and a short lease, for demos and tests (CHRONOS_SAMPLE_FAST=1). */
  fast: env.CHRONOS_SAMPLE_FAST === '1',
  /** Demo traffic for the console (CHRONOS_SAMPLE_DEMO=1): flaky and slow tasks, so every screen has something. */
  demo: env.CHRONOS_SAMPLE_DEMO === '1',
};
