import { Injectable, Logger } from '@nestjs/common';
import { TaskHandler, WorkerService, type Task } from '@chronos/nest';
import { SendEmail } from './send-email.task.js';

@Injectable()
export class EmailService {
  private readonly logger = new Logger(EmailService.name);

  constructor(private readonly worker: WorkerService) {}

  /** Runs on whichever replica fetches the task; retried with backoff if it throws. */
  @TaskHandler(SendEmail)
  async send(task: Task<SendEmail>): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 80)); // talking to the mail server
    this.logger.log(`Email sent: ${task.payload.describe()} (task=${task.id} instance=${this.worker.serverId})`);
  }
}
