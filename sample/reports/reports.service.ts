import { Injectable, Logger } from '@nestjs/common';
import { Cron, Interval, WorkerService, type Task } from '@chronos/nest';

const HEALTH_CHECK_EVERY = process.env.CHRONOS_SAMPLE_FAST === '1' ? '1s' : '10s';

@Injectable()
export class ReportsService {
  private readonly logger = new Logger(ReportsService.name);

  constructor(private readonly worker: WorkerService) {}

  /** Every night at 03:00 Budapest time (DST handled), once across all replicas. */
  @Cron('0 3 * * *', { timeZone: 'Europe/Budapest' })
  async nightlyReport(task: Task): Promise<void> {
    const day = new Date(task.triggerAt ?? Date.now()).toISOString().slice(0, 10);
    this.logger.log(`Nightly report for ${day} written (task=${task.id} instance=${this.worker.serverId})`);
  }

  /**
   * Every 10 s (epoch-aligned: :00, :10, :20 …), once per trigger across all replicas. A health
   * check that came due while every replica was down is worth running once, not once per missed
   * trigger: `catchUp: 'latest'` (the default, 'all', suits reports and billing runs).
   */
  @Interval(HEALTH_CHECK_EVERY, { catchUp: 'latest' })
  healthCheck(task: Task): void {
    const at = new Date(task.triggerAt ?? Date.now()).toISOString().slice(11, 19);
    this.logger.log(`Health check for the ${at} trigger ran on ${this.worker.serverId} (task=${task.id})`);
  }
}
