// The two files `job` writes: the provider with its decorated method, and its unit test with the
// testing kit (no Redis). Written as TypeScript functions rather than template files so the
// compiler checks what they interpolate.
import { decorator, describeSchedule, quote, type JobSchedule } from './schedule.js';

/** What the templates need. */
export interface JobFileOptions {
  /** Class name: `NightlyReportJob`. */
  className: string;
  /** File stem: `nightly-report` (→ `nightly-report.job.ts`). */
  fileName: string;
  /** Schedule name (the `name` option of the decorator): `nightly-report`. */
  scheduleName: string;
  schedule: JobSchedule;
  /** `'.js'` in an ES module project, `''` in CommonJS. */
  importSuffix: string;
  /** The spec's window: its first two triggers (epoch ms), by the engine's spec math. */
  triggers: [number, number];
  /** Start of the spec's window (epoch ms). */
  fromMs: number;
}

/** `src/nightly-report/nightly-report.job.ts`. */
export function jobFile(o: JobFileOptions): string {
  const decoratorName = o.schedule.kind === 'cron' ? 'Cron' : 'Interval';
  return `import { Injectable, Logger } from '@nestjs/common';
import { ${decoratorName}, type Task } from '@chronos/nest';

@Injectable()
export class ${o.className} {
  private readonly logger = new Logger(${o.className}.name);

  /**
   * Runs ${describeSchedule(o.schedule)}, once per trigger across every replica of the app: the
   * leader enqueues one task per trigger (id \`${o.scheduleName}:<trigger-unix>\`) and one worker
   * runs it. A throw is retried with backoff (a NonRetryableError is dead at once), and a task can
   * run again after a crash: keep the work idempotent.
   */
  ${decorator(o.schedule, o.scheduleName)}
  async run(task: Task): Promise<void> {
    this.logger.log(\`trigger of \${new Date(task.triggerAt!).toISOString()}\`);
  }
}
`;
}

/** `src/nightly-report/nightly-report.job.spec.ts`: Jest or Vitest (with globals, as \`nest new\` sets it up). */
export function specFile(o: JobFileOptions): string {
  const [first, second] = o.triggers.map((t) => new Date(t).toISOString());
  const from = new Date(o.fromMs).toISOString();
  const id = `${o.scheduleName}:${Math.floor(o.triggers[0] / 1000)}`;
  return `import { Test, type TestingModule } from '@nestjs/testing';
import { ChronosTesting, ChronosTestingModule } from '@chronos/nest/testing';
import { ${o.className} } from './${o.fileName}.job${o.importSuffix}';

describe(${quote(o.className)}, () => {
  let module: TestingModule;
  let chronos: ChronosTesting;

  beforeEach(async () => {
    module = await Test.createTestingModule({
      imports: [ChronosTestingModule.forRoot()], // no Redis: triggers computed, tasks recorded
      providers: [${o.className}],
    }).compile();
    module.useLogger(false);
    await module.init();
    chronos = module.get(ChronosTesting);
  });
  afterEach(() => module.close());

  it(${quote(`fires ${describeSchedule(o.schedule)}, and its task succeeds`)}, async () => {
    const fired = await chronos.fireDue(${quote(from)}, ${quote(second)});
    expect(fired.map((t) => new Date(t.triggerAt!).toISOString())).toEqual([${quote(first)}, ${quote(second)}]);
    expect(fired[0].id).toBe(${quote(id)});
    expect(await chronos.perform(fired[0])).toMatchObject({ outcome: 'succeeded' });
  });
});
`;
}
