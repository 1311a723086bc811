import { Injectable, Logger } from '@nestjs/common';
import { TaskHandler, WorkerService, type Task } from '@chronos/nest';
import { SyncInventory } from './sync-inventory.task.js';

@Injectable()
export class StorefrontListener {
  private readonly logger = new Logger(StorefrontListener.name);

  constructor(private readonly worker: WorkerService) {}

  @TaskHandler(SyncInventory)
  async refreshAvailability(task: Task<SyncInventory>): Promise<void> {
    this.logger.log(`Storefront availability refreshed (${task.payload.reason}; task=${task.id} instance=${this.worker.serverId})`);
  }
}
