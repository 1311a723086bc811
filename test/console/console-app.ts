// The app the console tests drive: a ticking schedule, a nightly one, a handler that fails while told to,
// one that holds its slot until told.
import { Injectable } from '@nestjs/common';
import { Cron, Interval, TaskHandler, type Task } from '../../lib/index.js';

@Injectable()
export class ConsoleJobs {
  ticks = 0;
  nightlyRuns: string[] = [];
  flakyRuns: string[] = [];
  /** While true, `flaky` tasks throw (an error whose message is the payload's `error`). */
  failing = true;

  @Interval(1000, { name: 'console.tick' })
  tick(): void {
    this.ticks++;
  }

  @Cron('0 3 * * *', { name: 'console.nightly', timeZone: 'Europe/Budapest' })
  nightly(task: Task): void {
    this.nightlyRuns.push(task.id);
  }

  /** `hold` tasks run until this promise resolves (set by a test). */
  held: Promise<void> = Promise.resolve();

  @TaskHandler('hold')
  hold(): Promise<void> {
    return this.held;
  }

  @TaskHandler('flaky')
  flaky(task: Task<{ error?: string }>): void {
    if (this.failing) throw new Error(task.payload?.error ?? 'flaky failed');
    this.flakyRuns.push(task.id);
  }
}
