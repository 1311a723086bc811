// Child side of the parent ↔ child protocol: config from BENCH_CONFIG, messages over the IPC channel.
import type { ChildMessage, ParentMessage } from './protocol.js';

export function childConfig<T>(): T {
  const raw = process.env.BENCH_CONFIG;
  if (!raw) throw new Error('BENCH_CONFIG is not set: bench children are started by dist/bench/run.js');
  return JSON.parse(raw) as T;
}

const inbox: ParentMessage[] = [];
const waiters: { type: string; resolve: (m: ParentMessage) => void }[] = [];
const handlers = new Map<string, (m: ParentMessage) => void>();

process.on('message', (raw) => {
  const m = raw as ParentMessage;
  if (m.type === 'exit') {
    void Promise.resolve(exitHook?.()).finally(() => process.exit(0));
    return;
  }
  const h = handlers.get(m.type);
  if (h) {
    h(m);
    return;
  }
  const i = waiters.findIndex((w) => w.type === m.type);
  if (i >= 0) waiters.splice(i, 1)[0].resolve(m);
  else inbox.push(m);
});
// the parent went away (crashed or killed): never linger
process.on('disconnect', () => process.exit(0));
process.on('unhandledRejection', (err) => {
  send({ type: 'error', message: String((err as Error)?.stack ?? err) });
  process.exit(70);
});
process.on('uncaughtException', (err) => {
  send({ type: 'error', message: String(err?.stack ?? err) });
  process.exit(70);
});

let exitHook: (() => unknown) | undefined;

/** Runs `fn` (e.g. closing connections) before exiting on the parent's `exit` message. */
export function onExit(fn: () => unknown): void {
  exitHook = fn;
}

export function send(m: ChildMessage): void {
  process.send?.(m);
}

/** Resolves with the next message of `type` (queued ones first). */
export function next<T extends ParentMessage = ParentMessage>(type: T['type']): Promise<T> {
  const i = inbox.findIndex((m) => m.type === type);
  if (i >= 0) return Promise.resolve(inbox.splice(i, 1)[0] as T);
  return new Promise((resolve) => waiters.push({ type, resolve: resolve as (m: ParentMessage) => void }));
}

/** Handles every message of `type` as it arrives (instead of queueing it). */
export function on<T extends ParentMessage = ParentMessage>(type: T['type'], fn: (m: T) => void): void {
  handlers.set(type, fn as (m: ParentMessage) => void);
}
