import { Injectable, Logger } from '@nestjs/common';
import { TaskHandler, WorkerService, type Task } from '@chronos/nest';
import { SyncInventory } from './sync-inventory.task.js';

@Injectable()
export class WarehouseListener {
  private readonly logger = new Logger(WarehouseListener.name);

  constructor(private readonly worker: WorkerService) {}

  /** Its own task per event, with its own retries: a failure here does not re-run the storefront. */
  @TaskHandler(SyncInventory)
  async pullStockLevels(task: Task<SyncInventory>): Promise<void> {
    this.logger.log(`Stock levels pulled (${task.payload.reason}; task=${task.id} instance=${this.worker.serverId})`);
  }
}
