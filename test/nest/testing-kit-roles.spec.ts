// The kit provides SchedulerService and WorkerService with its own classes: user code that injects
// them must find every public member of the real services. Before, `SchedulerService.shards` was
// undefined under the kit (the real one: the shards this instance leads, 0 to 15).
import { Test } from '@nestjs/testing';
import { SchedulerService, WorkerService } from '../../lib/index.js';
import { ChronosTestingModule } from '../../lib/nest/testing/index.js';

/** Public members of a class's prototype: Nest lifecycle hooks and the private helpers listed are left out. */
function members(cls: { prototype: object }, privates: string[]): string[] {
  return Object.getOwnPropertyNames(cls.prototype)
    .filter((n) => n !== 'constructor' && !/^(on|before)[A-Z]/.test(n) && !privates.includes(n))
    .sort();
}

test('the kit’s SchedulerService and WorkerService have every public member of the real ones; shards are all 16', async () => {
  const module = await Test.createTestingModule({ imports: [ChronosTestingModule.forRoot()] }).compile();
  await module.init();
  const scheduler = module.get(SchedulerService);
  const worker = module.get(WorkerService);
  for (const name of members(SchedulerService, ['withDefaults'])) expect([name, name in scheduler]).toEqual([name, true]);
  for (const name of members(WorkerService, ['applyQueueLimits', 'checkRedis'])) expect([name, name in worker]).toEqual([name, true]);
  expect(scheduler.shards).toEqual([...Array(16).keys()]);
  await module.close();
});
