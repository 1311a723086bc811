// The API process: HTTP in, tasks out (`worker: false`: it runs no handler and no schedule).
// `node dist/examples/nest-split/api.js` (PORT, default 3100; 0 picks a free one); `npm run example:split` starts it with a worker.
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'node:net';
import { AppModule } from './app.module.js';

const app = await NestFactory.create(AppModule.forRole('api'));
app.enableShutdownHooks();
await app.listen(Number(process.env.PORT ?? 3100), '127.0.0.1');
const { port } = app.getHttpServer().address() as AddressInfo;
new Logger('Api').log(`Listening on http://127.0.0.1:${port} (try: curl -d email=ada@example.com http://127.0.0.1:${port}/orders)`);
process.send?.({ event: 'ready', port }); // to the launcher or the smoke test, when forked
// started by a launcher (run.ts) that went away: stop too, never linger
process.on('disconnect', () => void app.close());
