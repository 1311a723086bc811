// Placeholder sample (until the NestJS module lands): enqueue a task and process it with the core engine.
import { ChronosClient, ChronosServer } from '../lib/core/index.js';

const connection = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const client = new ChronosClient({ connection, namespace: 'chronos-sample' });
const server = new ChronosServer({ connection, namespace: 'chronos-sample' });
let done!: () => void;
const finished = new Promise<void>((r) => (done = r));
server.handle<{ to: string }>('email.send', (task) => {
  console.log(`sending an email to ${task.payload.to} (task ${task.id})`);
  done();
});
await server.start();
const { id } = await client.enqueue('email.send', { to: 'ops@example.com' });
console.log(`enqueued task ${id}`);
await finished;
await server.shutdown();
await client.close();
