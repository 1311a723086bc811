// A trigger the overlap policy skipped was fired: the engine takes its dedup key before the overlap
// decision (fire.lua: SET NX, then skip / buffer), so the trigger is never enqueued again, not by a
// later fire nor by a backfill of its window. The kit's fireDue does the same: firing the window again
// after the schedule's task is done enqueues nothing, as a backfill of it on the real engine (redis
// mode on a private redis-server, no worker) enqueues nothing.
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { firstValueFrom, filter } from 'rxjs';
import { InspectorService, SchedulerService, TaskHandler, type ChronosEvent } from '../../lib/index.js';
import { ChronosTesting, ChronosTestingModule } from '../../lib/nest/testing/index.js';

@Injectable()
class Handlers {
  @TaskHandler('tick')
  tick() {}
}

async function boot(mode: 'manual' | 'redis') {
  const module = await Test.createTestingModule({
    imports: [ChronosTestingModule.forRoot({ mode, worker: false })],
    providers: [Handlers],
  }).compile();
  module.useLogger(false);
  await module.init();
  return module;
}

/** Adds a schedule every second, overlap skip, from a whole second a little after `now`; returns its first trigger. */
async function addSkipping(scheduler: SchedulerService, now: number): Promise<number> {
  const startAt = Math.ceil((now + 2000) / 1000) * 1000;
  await scheduler.addSchedule({ name: 'skipping', spec: { every: '1s' }, type: 'tick', overlap: 'skip', startAt });
  return startAt;
}

test('a trigger skipped by the overlap policy is not enqueued when its window is fired again, in the kit as in the engine', async () => {
  const kit = await boot('manual');
  const testing = kit.get(ChronosTesting);
  const start = await addSkipping(kit.get(SchedulerService), testing.now);
  const first = await testing.fireDue(start, start + 1000);
  expect(first.map((t) => t.triggerAt! - start)).toEqual([0]); // the second trigger is skipped: the first task is queued
  await testing.drain();
  const kitAgain = (await testing.fireDue(start, start + 1000)).map((t) => t.triggerAt! - start);
  await kit.close();

  const real = await boot('redis');
  const inspector = real.get(InspectorService);
  const skipped = firstValueFrom(
    inspector.events$.pipe(filter((e: ChronosEvent) => e.type === 'schedule.skipped' && e.schedule === 'skipping')),
  );
  const startReal = await addSkipping(real.get(SchedulerService), Date.now());
  expect(await skipped).toMatchObject({ reason: 'overlap', triggerAt: startReal + 1000 });
  const { ids } = await inspector.backfillSchedule('skipping', startReal, startReal + 1000);
  const realAgain = ids.map((id) => Number(id.split(':')[1]) * 1000 - startReal);
  await real.close();

  expect(realAgain).toEqual([]);
  expect(kitAgain).toEqual(realAgain);
}, 30_000);
