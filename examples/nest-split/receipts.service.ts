import { Injectable, Logger } from '@nestjs/common';
import { Interval, TaskHandler, WorkerService, type Task } from '@chronos/nest';
import { SendReceipt } from './send-receipt.task.js';

/** Worker-side only: the handler and the schedule. The API process does not load this provider. */
@Injectable()
export class ReceiptsService {
  private readonly logger = new Logger(ReceiptsService.name);

  constructor(private readonly worker: WorkerService) {}

  @TaskHandler(SendReceipt)
  send(task: Task<SendReceipt>): void {
    this.logger.log(`Receipt for order ${task.payload.orderId} sent to ${task.payload.email} (task=${task.id} on ${this.worker.serverId})`);
    process.send?.({ event: 'processed', type: task.type, id: task.id }); // for the examples' smoke test, when forked
  }

  /** Every 10 s, once across all worker processes (the leader enqueues it, any worker runs it). */
  @Interval('10s', { catchUp: 'latest' })
  reconcile(task: Task): void {
    this.logger.log(`Reconciled payments for the ${new Date(task.triggerAt!).toISOString()} trigger`);
  }
}
