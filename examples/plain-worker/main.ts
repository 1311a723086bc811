// A Chronos worker without NestJS: `npm run example:plain` (builds, finds or starts a Redis, runs this).
// One process enqueues with QueueClient, runs handlers with ChronosServer and fires a schedule with
// Scheduler (leader-elected: start several copies and each trigger still runs once). Ctrl-C stops it
// gracefully: the scheduler resigns, the worker finishes its running tasks.
import { ChronosServer, NonRetryableError, QueueClient, Scheduler, type Task } from '@chronos/nest/core';

const connection = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const namespace = process.env.CHRONOS_NAMESPACE ?? 'chronos-example-plain';
const common = { connection, namespace };

interface ResizeImage {
  url: string;
  width: number;
}

const client = new QueueClient(common);
const server = new ChronosServer({ ...common, queues: { default: 2, images: 1 }, concurrency: 4 });
const scheduler = new Scheduler(common);

/** Tells the process that forked this one (the examples' smoke test) what happened; a no-op otherwise. */
const report = (event: string, extra: Record<string, unknown> = {}) => process.send?.({ event, ...extra });

server.handle('image.resize', async (task: Task) => {
  const { url, width } = task.payload as ResizeImage;
  if (!(width > 0)) throw new NonRetryableError(`width must be positive, got ${width}`); // dead at once, no retries
  console.log(`[worker] resized ${url} to ${width}px (task=${task.id}, attempt ${task.retried + 1})`);
  report('processed', { type: task.type, id: task.id });
});
server.handle('cleanup.run', (task: Task) => {
  console.log(`[worker] cleanup for the trigger at ${new Date(task.triggerAt!).toISOString()} (task=${task.id})`);
  report('processed', { type: task.type, id: task.id });
});

// every 5 s, once across all running copies; one trigger missed while all were down runs once
scheduler.register({ name: 'cleanup', spec: '@every 5s', type: 'cleanup.run', catchUp: 'latest' });

await server.start();
await scheduler.start();
const { id } = await client.enqueue('image.resize', { url: 'https://example.com/cat.png', width: 320 } satisfies ResizeImage, {
  queue: 'images',
});
console.log(`[client] enqueued image.resize ${id}; Ctrl-C stops`);
report('ready');

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await scheduler.stop();
  await server.shutdown();
  await client.close();
  process.exit(0);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
