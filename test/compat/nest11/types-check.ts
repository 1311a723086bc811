// Type-checked (never run) by scripts/compat-nest11.mjs against the installed package, under Nest's
// default CommonJS tsconfig (tsconfig.json here: moduleResolution node). Every entry point must
// resolve with its types: '@chronos/nest' (the `types` field), '@chronos/nest/core' and
// '@chronos/nest/internal' (`typesVersions`; moduleResolution node ignores `exports`), else tsc
// fails with TS2307.
import { Injectable, Module } from '@nestjs/common';
import { ChronosClient as NestChronosClient, ChronosModule, Interval, TaskHandler, type Task } from '@chronos/nest';
import { ChronosClient, QueueClient, ChronosServer, Scheduler, type EnqueueResult, type ServerOptions } from '@chronos/nest/core';
import { QueueKeys } from '@chronos/nest/internal';

@Injectable()
export class Jobs {
  constructor(private readonly chronos: NestChronosClient) {}

  @TaskHandler('compat.ping')
  ping(task: Task<{ hello: string }>): string {
    return task.payload.hello;
  }

  @Interval('1s')
  tick(): Promise<EnqueueResult> {
    return this.chronos.enqueue('compat.ping', { hello: 'nest11' });
  }
}

@Module({ imports: [ChronosModule.forRoot({ namespace: 'compat-types' })], providers: [Jobs] })
export class AppModule {}

const options: ServerOptions = { concurrency: 2, queues: ['default'] };
export const engine: [QueueClient, ChronosServer, Scheduler] = [new QueueClient(), new ChronosServer(options), new Scheduler()];
// the engine's former name of QueueClient, deprecated, still type-checks
export const former: QueueClient = new ChronosClient();
export const stream: string = new QueueKeys('compat-types', 'default').stream;
