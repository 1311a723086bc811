import { Injectable, Logger } from '@nestjs/common';
import { ChronosClient, Interval, TaskHandler, type Task } from '@chronos/nest';

/** How long a `demo.slow` task runs, ms (long enough to be seen active, and cancelled, in the console). */
const SLOW_MS = 45_000;

/**
 * Demo traffic for the console (`CHRONOS_SAMPLE_DEMO=1`): every 5 s a feed enqueues flaky tasks
 * (half of their attempts fail: some retry, some end dead), one slow task (active for 45 s: cancel
 * it from the console) and one flaky task due in two minutes (scheduled), so that every screen of
 * the console has something to show without writing code.
 */
@Injectable()
export class DemoService {
  private readonly logger = new Logger(DemoService.name);

  constructor(private readonly client: ChronosClient) {}

  @Interval('5s', { name: 'demo.feed', catchUp: 'latest' })
  async feed(): Promise<void> {
    const flaky = { maxRetry: 2 };
    await this.client.enqueue('demo.flaky', { upstream: 'billing' }, flaky);
    await this.client.enqueue('demo.flaky', { upstream: 'search' }, flaky);
    await this.client.enqueue('demo.flaky', { upstream: 'later' }, { ...flaky, delay: 120_000 });
    await this.client.enqueue('demo.slow', { report: 'quarterly' }, { maxRetry: 0 });
  }

  /** Fails half of its attempts, as a flaky upstream would (retried with the sample's short backoff, then dead). */
  @TaskHandler('demo.flaky')
  flaky(task: Task<{ upstream: string }>): void {
    if (Math.random() < 0.5) throw new Error(`upstream ${task.payload.upstream} answered 503 (demo)`);
  }

  /** Runs for 45 s unless cancelled (the console's cancel, or a shutdown): its signal ends it early. */
  @TaskHandler('demo.slow')
  async slow(task: Task<{ report: string }>): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, SLOW_MS);
      task.signal.addEventListener('abort', () => (clearTimeout(timer), reject(task.signal.reason)), { once: true });
    });
    this.logger.log(`Slow ${task.payload.report} report done (task=${task.id})`);
  }
}
