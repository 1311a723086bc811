import { Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@chronos/nest';
import { SyncInventory } from './sync-inventory.task.js';

const EVERY = process.env.CHRONOS_SAMPLE_FAST === '1' ? '@every 2s' : CronExpression.EVERY_MINUTE;

/** An event schedule: each trigger enqueues one SyncInventory, fanned out to every listener. */
@Injectable()
export class InventorySchedule {
  @Cron(EVERY, { name: 'inventory.sync', dispatch: SyncInventory, payload: new SyncInventory('scheduled') })
  syncInventory(): void {
    // Never called: with `dispatch`, the listeners of SyncInventory run instead.
  }
}
