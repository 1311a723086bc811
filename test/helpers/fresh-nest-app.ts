// A fresh `nest new` app in a temporary folder, with @chronos/nest installed as its tarball would
// install it, and no network: the app's node_modules is this repository's (each package linked),
// except
// - @chronos/nest: a copy of exactly the files `npm pack` would ship (its `files` field), so a
//   schematic or an asset the tarball leaves out fails here as it would for a user;
// - typescript and @nestjs/schematics: @nestjs/cli's own (TypeScript 6, what `nest new` apps get),
//   which npm nests under @nestjs/cli because the repository builds with TypeScript 5.9.
// The app sits in `<tmp>/app` and the packages in `<tmp>/node_modules`, where Node, the Nest CLI,
// the schematics engine and Vite all find them by walking up.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { ROOT } from './sample.js';
import { deferred } from './wait.js';

const require = createRequire(import.meta.url);

/** What a command printed and how it ended. */
export interface RunResult {
  code: number | null;
  /** stdout and stderr, without colours. */
  output: string;
  stdout: string;
}

/** Runs `command args` in `cwd`; resolves with its exit code and output (stdout + stderr), never rejects. */
export function run(
  command: string,
  args: string[],
  cwd: string,
  options: { env?: Record<string, string>; input?: string } = {},
): Promise<RunResult> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), NO_COLOR: '1', ...options.env };
  delete env.NODE_OPTIONS; // jest's --experimental-vm-modules is not for the app's tools
  return new Promise((resolve) => {
    const child = execFile(command, args, { cwd, env, maxBuffer: 16 << 20, timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, output: stripVTControlCharacters(`${stdout}${stderr}`), stdout }); // the schematics CLI colours whatever NO_COLOR says
    });
    child.stdin?.end(options.input ?? '');
  });
}

/** A package's folder, as Node resolves it from `from`. */
function packageDir(name: string, from: string): string {
  return dirname(require.resolve(`${name}/package.json`, { paths: [from] }));
}

/** The files `npm pack` would put in the tarball (package.json's `files`, README, LICENSE, package.json). */
async function packedFiles(): Promise<string[]> {
  const res = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], ROOT);
  if (res.code !== 0) throw new Error(`npm pack --dry-run failed:\n${res.output}`);
  return (JSON.parse(res.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
}

export class FreshNestApp {
  private constructor(
    /** The temporary folder: `node_modules/` and `app/`. */
    readonly root: string,
    /** What `nest new` printed. */
    readonly created: RunResult,
  ) {}

  /** The app's folder. */
  get dir(): string {
    return join(this.root, 'app');
  }

  /**
   * Links the packages, copies the packed files of @chronos/nest (from the repository's dist/, which
   * `npm test` builds first) and runs `nest new app --skip-install --skip-git`.
   */
  static async create(): Promise<FreshNestApp> {
    const root = mkdtempSync(join(tmpdir(), 'chronos-nest-new-'));
    const modules = join(root, 'node_modules');
    const repoModules = join(ROOT, 'node_modules');
    mkdirSync(join(modules, '@nestjs'), { recursive: true });
    for (const name of readdirSync(repoModules)) {
      if (name === '@nestjs' || name === 'typescript' || name === '@chronos') continue;
      symlinkSync(join(repoModules, name), join(modules, name));
    }
    for (const name of readdirSync(join(repoModules, '@nestjs')))
      symlinkSync(join(repoModules, '@nestjs', name), join(modules, '@nestjs', name));
    const cli = packageDir('@nestjs/cli', ROOT);
    symlinkSync(packageDir('@nestjs/schematics', cli), join(modules, '@nestjs', 'schematics'));
    symlinkSync(packageDir('typescript', cli), join(modules, 'typescript'));
    for (const file of await packedFiles()) {
      const to = join(modules, '@chronos', 'nest', file);
      mkdirSync(dirname(to), { recursive: true });
      copyFileSync(join(ROOT, file), to);
    }
    const created = await run(
      join(modules, '.bin', 'nest'),
      ['new', 'app', '--skip-install', '--skip-git', '--package-manager', 'npm'],
      root,
    );
    return new FreshNestApp(root, created);
  }

  /** `nest <args>` in the app (the CLI of its node_modules). */
  nest(args: string[], options: { env?: Record<string, string>; input?: string } = {}): Promise<RunResult> {
    return run(join(this.root, 'node_modules', '.bin', 'nest'), args, this.dir, options);
  }

  /** `npx <bin> <args>` in the app: a binary of its node_modules. */
  bin(name: string, args: string[]): Promise<RunResult> {
    return run(join(this.root, 'node_modules', '.bin', name), args, this.dir);
  }

  /** `npm run <script>` in the app. */
  npmRun(script: string): Promise<RunResult> {
    return run('npm', ['run', script], this.dir);
  }

  read(path: string): string {
    return readFileSync(join(this.dir, path), 'utf8');
  }

  write(path: string, text: string): void {
    writeFileSync(join(this.dir, path), text);
  }

  /** `node dist/main.js` (after `npm run build`) with `env`, its output collected. */
  start(env: Record<string, string>): AppProcess {
    return new AppProcess(this.dir, env);
  }

  /** Removes the temporary folder (the links only: the repository's packages stay). */
  remove(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** The built app running as a process. */
export class AppProcess {
  readonly proc: ChildProcess;
  output = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private waiters: { re: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];

  constructor(cwd: string, env: Record<string, string>) {
    const fullEnv: Record<string, string> = { ...(process.env as Record<string, string>), NO_COLOR: '1', ...env };
    delete fullEnv.NODE_OPTIONS;
    this.proc = spawn(process.execPath, ['dist/main.js'], { cwd, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    const exit = deferred<{ code: number | null; signal: NodeJS.Signals | null }>();
    this.exited = exit.promise;
    this.proc.on('exit', (code, signal) => exit.resolve({ code, signal }));
    const onData = (d: Buffer) => {
      this.output += d.toString();
      this.waiters = this.waiters.filter((w) => {
        const m = this.output.match(w.re);
        if (m) w.resolve(m);
        return !m;
      });
    };
    this.proc.stdout!.on('data', onData);
    this.proc.stderr!.on('data', onData);
  }

  /** Resolves when the output (so far or later) matches `re`; rejects if the process exits first, or after `timeoutMs`. */
  line(re: RegExp, timeoutMs = 30_000): Promise<RegExpMatchArray> {
    const m = this.output.match(re);
    if (m) return Promise.resolve(m);
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      new Promise<RegExpMatchArray>((resolve) => this.waiters.push({ re, resolve })),
      this.exited.then(({ code, signal }) => {
        throw new Error(`the app exited (code=${code} signal=${signal}) before printing ${re}:\n${this.output}`);
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the app did not print ${re} within ${timeoutMs} ms:\n${this.output}`)), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill(signal);
  }
}
