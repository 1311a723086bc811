// Helpers of the spec.ts specs (test/unit/spec-*.spec.ts): instants, triggers computed under another host time zone, schedule errors.
import { spawnSync } from 'node:child_process';
import { InvalidScheduleError } from '../../lib/core/runtime/errors.js';

export const ms = (iso: string): number => Date.parse(iso);
export const iso = (t: number): string => new Date(t).toISOString();
export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;

const ROOT = new URL('../../', import.meta.url);

export interface HostJob {
  expr: string;
  tz: string;
  from: number;
  n: number;
}

/**
 * Computes triggers in a child Node process whose host time zone is `hostTz` (jest's sandboxed
 * process.env cannot change the zone of the running process). The child transpiles spec.ts and
 * the modules it imports in memory with the project's TypeScript and imports them as data: URLs; nothing is
 * written to disk. Returns the host's UTC offset (minutes east) at `probe` and each job's triggers.
 */
export function inHostTz(hostTz: string, probe: number, jobs: HostJob[]): { hostOffset: number; results: number[][] } {
  const child = `
    import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
    const root = new URL(process.env.SPEC_ROOT);
    const ts = (await import(new URL('node_modules/typescript/lib/typescript.js', root).href)).default;
    const js = (path) => ts.transpileModule(readFileSync(new URL(path, root), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    const dataUrl = (code) => 'data:text/javascript;base64,' + Buffer.from(code).toString('base64');
    const croner = new URL('node_modules/croner/dist/croner.js', root).href;
    // spec.ts and the modules it imports, each as a data: URL (one per module, so instanceof holds)
    const urls = new Map();
    const load = (url) => {
      if (!urls.has(url.href)) {
        urls.set(url.href, dataUrl(js(url).replace(/from '([^']+)'/g, (_, to) =>
          "from '" + (to === 'croner' ? croner : load(new URL(to.replace(/\\.js$/, '.ts'), url))) + "'")));
      }
      return urls.get(url.href);
    };
    const spec = await import(load(new URL('lib/core/scheduler/spec.ts', root)));
    const { probe, jobs } = JSON.parse(process.env.SPEC_JOBS);
    const results = jobs.map((j) => spec.nextTriggers(spec.parseSpec(j.expr, { timeZone: j.tz }), j.from, j.n));
    process.stdout.write(JSON.stringify({ hostOffset: -new Date(probe).getTimezoneOffset(), results }));
  `;
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', child], {
    env: { PATH: process.env.PATH ?? '', TZ: hostTz, SPEC_ROOT: ROOT.href, SPEC_JOBS: JSON.stringify({ probe, jobs }) },
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (out.status !== 0) throw new Error(`child process failed (${String(out.status)}): ${out.stderr}`);
  return JSON.parse(out.stdout) as { hostOffset: number; results: number[][] };
}

/** The InvalidScheduleError thrown by fn (fails the test if fn does not throw one). */
export function scheduleError(fn: () => unknown): InvalidScheduleError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidScheduleError);
    expect((err as InvalidScheduleError).code).toBe('INVALID_SCHEDULE');
    return err as InvalidScheduleError;
  }
  throw new Error('expected an InvalidScheduleError, nothing was thrown');
}
