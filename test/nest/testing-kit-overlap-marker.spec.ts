// The kit's overlap policies follow the engine's overlap marker (overlap.lua): only a trigger's task
// holds it. An operator's triggerNow task (`<schedule>:manual:<uuid>`) holds none, so while one is
// queued the schedule's next trigger is enqueued (skip) or enqueued at once (buffer-one), in the kit
// as on the real engine (redis mode on a private redis-server, no worker: the tasks stay queued).
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { firstValueFrom, filter } from 'rxjs';
import { InspectorService, SchedulerService, TaskHandler, type ChronosEvent, type OverlapPolicy } from '../../lib/index.js';
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

/** A schedule every second from a whole second a little after `now`, with an operator's task queued before its first trigger. */
async function scheduleWithManualTask(scheduler: SchedulerService, name: string, overlap: OverlapPolicy, now: number): Promise<number> {
  const startAt = Math.ceil((now + 2000) / 1000) * 1000;
  await scheduler.addSchedule({ name, spec: { every: '1s' }, type: 'tick', overlap, startAt });
  await scheduler.triggerNow(name);
  return startAt;
}

const POLICIES: OverlapPolicy[] = ['skip', 'buffer-one'];

test("an operator's triggerNow task holds no overlap marker: the next trigger is enqueued, in the kit as in the engine", async () => {
  const kit = await boot('manual');
  const testing = kit.get(ChronosTesting);
  const kitFired: Record<string, string[]> = {};
  for (const overlap of POLICIES) {
    const name = `kit-${overlap}`;
    const startAt = await scheduleWithManualTask(kit.get(SchedulerService), name, overlap, testing.now);
    kitFired[overlap] = (await testing.fireDue(startAt, startAt)).map((t) =>
      t.id === `${name}:${startAt / 1000}` ? 'first trigger' : t.id,
    );
    expect(testing.enqueued('tick', (t) => t.schedule === name)).toHaveLength(2);
  }
  await kit.close();

  const real = await boot('redis');
  const inspector = real.get(InspectorService);
  const realFired: Record<string, string[]> = {};
  for (const overlap of POLICIES) {
    const name = `real-${overlap}`;
    const first = firstValueFrom(
      inspector.events$.pipe(
        filter((e: ChronosEvent) => (e.type === 'schedule.fired' || e.type === 'schedule.skipped') && e.schedule === name),
      ),
    );
    const startAt = await scheduleWithManualTask(real.get(SchedulerService), name, overlap, Date.now());
    const e = await first;
    expect(e).toMatchObject({ type: 'schedule.fired', triggerAt: startAt });
    expect(e).not.toHaveProperty('buffered');
    realFired[overlap] = e.type === 'schedule.fired' && e.taskId === `${name}:${startAt / 1000}` ? ['first trigger'] : [];
  }
  await real.close();

  expect(kitFired).toEqual({ skip: ['first trigger'], 'buffer-one': ['first trigger'] });
  expect(realFired).toEqual(kitFired);
}, 30_000);
