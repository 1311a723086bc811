// Unit test of the sample's inventory fan-out: one schedule trigger, one child task per listener.
import { ConsoleLogger } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { ChronosTesting, ChronosTestingModule } from '@chronos/nest/testing';
import { InventorySchedule } from '../inventory/inventory.schedule.js';
import { StorefrontListener } from '../inventory/storefront.listener.js';
import { SyncInventory } from '../inventory/sync-inventory.task.js';
import { WarehouseListener } from '../inventory/warehouse.listener.js';

let module: TestingModule;
let chronos: ChronosTesting;
/** What the listeners logged (they only log in the sample). */
const logged: string[] = [];
class RecordingLogger extends ConsoleLogger {
  override log(message: unknown) {
    logged.push(String(message));
  }
}

beforeEach(async () => {
  module = await Test.createTestingModule({
    imports: [ChronosTestingModule.forRoot()],
    providers: [InventorySchedule, WarehouseListener, StorefrontListener],
  }).compile();
  logged.length = 0;
  module.useLogger(new RecordingLogger());
  await module.init();
  chronos = module.get(ChronosTesting);
});
afterEach(() => module.close());

test('each trigger of inventory.sync reaches the warehouse and the storefront, each in its own task', async () => {
  await chronos.fireDue('2026-05-01T10:00:00Z', '2026-05-01T10:00:00Z');
  const trigger = chronos.expectEnqueued(SyncInventory, { reason: 'scheduled' });
  expect(trigger.id).toBe('inventory.sync:1777629600');

  await chronos.perform(trigger); // the dispatcher: one child task per listener
  expect(
    chronos
      .enqueued()
      .map((t) => t.id)
      .sort(),
  ).toEqual([
    'inventory.sync:1777629600#StorefrontListener.refreshAvailability',
    'inventory.sync:1777629600#WarehouseListener.pullStockLevels',
  ]);
  expect((await chronos.drain()).succeeded).toBe(2);
  expect(logged.filter((m) => m.startsWith('Stock levels pulled (scheduled;'))).toHaveLength(1);
  expect(logged.filter((m) => m.startsWith('Storefront availability refreshed (scheduled;'))).toHaveLength(1);
});
