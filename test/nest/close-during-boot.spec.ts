// An HTTP app closed while it boots (a Ctrl-C or a pod's SIGTERM while `app.listen()` runs; trial 40
// met it in scripts/sample-cluster.mjs): NestApplication's init() does not make a close wait for it
// (NestApplicationContext's does), so Nest ran Chronos's shutdown hooks while its bootstrap hooks had
// yet to run. Before, the scheduler's start then threw "cannot start: it is stopped" into the boot (an
// ERROR in the sample's log), and the worker started after its stop had found no server to stop.
import { Injectable } from '@nestjs/common';
import { Cron, SchedulerService, TaskHandler, WorkerService } from '../../lib/index.js';
import { createChronosTestApp } from '../helpers/nest-app.js';

@Injectable()
class Jobs {
  @TaskHandler('close-during-boot.job')
  job(): void {}

  @Cron('0 3 * * *')
  nightly(): void {}
}

test('close() of an HTTP app while its init() runs: the boot ends without an error and no role runs afterwards', async () => {
  const app = await createChronosTestApp({ providers: [Jobs], init: false });
  const http = app.module.createNestApplication({ logger: app.logger });
  const init = http.init().then(
    () => undefined,
    (e: unknown) => e,
  );
  await http.close();
  expect(await init).toBeUndefined();
  expect(app.get(WorkerService).isRunning).toBe(false);
  expect(app.get(SchedulerService).isRunning).toBe(false);
  expect(app.logger.messages('error')).toEqual([]);
  await app.close();
});
