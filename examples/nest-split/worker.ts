// The worker process: no HTTP, runs the handlers and the schedules (start as many as you like).
// `node dist/examples/nest-split/worker.js`; `npm run example:split` starts one with the API.
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { WorkerService } from '@chronos/nest';
import { AppModule } from './app.module.js';

const app = await NestFactory.createApplicationContext(AppModule.forRole('worker'));
app.enableShutdownHooks(); // SIGTERM: the scheduler resigns, running tasks finish
new Logger('Worker').log(`Worker ${app.get(WorkerService).serverId} running`);
process.send?.({ event: 'ready' }); // to the launcher or the smoke test, when forked
// started by a launcher (run.ts) that went away: stop too, never linger
process.on('disconnect', () => void app.close());
