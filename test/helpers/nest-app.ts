// A Nest testing module with ChronosModule on a private namespace of the test Redis, and a
// recording logger (so tests can assert what was logged without printing it).
import type { LoggerService, ModuleMetadata, Provider, Type } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { ChronosModule, type ChronosModuleOptions } from '../../lib/index.js';
import { deleteNamespace, newNamespace, redisUrl } from './redis.js';

/** A logger that keeps every line (level, context, message). */
export class RecordingLogger implements LoggerService {
  readonly lines: { level: string; context?: string; message: string }[] = [];
  private add(level: string, message: unknown, rest: unknown[]) {
    const context = typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
    this.lines.push({ level, context, message: String(message) });
  }
  log(message: unknown, ...rest: unknown[]) {
    this.add('log', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]) {
    this.add('warn', message, rest);
  }
  error(message: unknown, ...rest: unknown[]) {
    this.add('error', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]) {
    this.add('debug', message, rest);
  }
  verbose() {}
  fatal(message: unknown, ...rest: unknown[]) {
    this.add('fatal', message, rest);
  }
  /** Messages at `level` (all levels when omitted). */
  messages(level?: string): string[] {
    return this.lines.filter((l) => !level || l.level === level).map((l) => l.message);
  }
}

export interface ChronosTestAppOptions {
  providers?: Provider[];
  controllers?: Type<unknown>[];
  imports?: ModuleMetadata['imports'];
  /** Merged over the fast test defaults (namespace, connection, leaderTtl 1000, heartbeat 300). */
  options?: ChronosModuleOptions;
  /** Skip `init()` (to assert boot errors yourself). */
  init?: boolean;
}

export interface ChronosTestApp {
  module: TestingModule;
  namespace: string;
  logger: RecordingLogger;
  get<T>(token: Type<T> | string | symbol): T;
  /** Closes the app (shutdown hooks: resign, drain, close) and deletes the namespace. Idempotent. */
  close(): Promise<void>;
}

/** Options that make a single-instance test app quick: short lease and heartbeats, short shutdown. */
export function fastOptions(namespace: string): ChronosModuleOptions {
  return {
    connection: redisUrl(),
    namespace,
    leaderTtl: 1000,
    heartbeatInterval: 300,
    shutdownTimeout: 2000,
    visibilityTimeout: 2000,
    recoverInterval: 200,
  };
}

/**
 * Builds a testing module importing `ChronosModule.forRoot(fast options + options)` and the given
 * providers/controllers, then `init()`s it (discovery, worker and scheduler start).
 */
export async function createChronosTestApp(o: ChronosTestAppOptions = {}): Promise<ChronosTestApp> {
  const namespace = (o.options?.namespace as string | undefined) ?? newNamespace('nest');
  const logger = new RecordingLogger();
  const module = await Test.createTestingModule({
    imports: [ChronosModule.forRoot({ ...fastOptions(namespace), ...o.options }), ...(o.imports ?? [])],
    providers: o.providers ?? [],
    controllers: o.controllers ?? [],
  })
    .setLogger(logger)
    .compile();
  let closing: Promise<void> | undefined;
  const app: ChronosTestApp = {
    module,
    namespace,
    logger,
    get: (token) => module.get(token as never),
    close: () =>
      (closing ??= (async () => {
        try {
          await module.close();
        } finally {
          await deleteNamespace(namespace);
        }
      })()),
  };
  if (o.init !== false) {
    try {
      await module.init();
    } catch (err) {
      await app.close().catch(() => {});
      throw err;
    }
  }
  return app;
}
