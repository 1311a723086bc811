// Workload 13, a worker of the burst (issue 25): a ChronosServer (defaults but `concurrency`) whose no-op handler
// of the burst type notes each start (schedule, trigger instant, wall-clock ms).
// Config: { url, prefix, name, concurrency }. IPC: → ready (started) ; → count { n } every 250 ms while starts
// come in ; ← report → starts { part: [schedule, triggerAt, at][], last } in parts of 10,000.
import { childConfig, on, onExit, send } from '../lib/ipc.js';
import { BURST_TYPE } from '../lib/schedules-data.js';
import { nowMs } from '../lib/time.js';

interface Config {
  url: string;
  prefix: string;
  name: string;
  concurrency: number;
}

const cfg = childConfig<Config>();
const { ChronosServer } = await import('../../lib/core/index.js');
const quiet = { log() {}, warn() {}, error() {} };
const starts: [string, number, number][] = [];
const server = new ChronosServer({ connection: cfg.url, namespace: cfg.prefix, concurrency: cfg.concurrency, logger: quiet });
server.handle(BURST_TYPE, (task) => void starts.push([task.schedule ?? '', task.triggerAt ?? NaN, nowMs()]));
await server.start();
onExit(() => Promise.race([server.shutdown(), new Promise((r) => setTimeout(r, 3000))]));
let sent = 0;
setInterval(() => {
  if (starts.length !== sent) send({ type: 'count', n: (sent = starts.length) });
}, 250).unref();
on('report', () => {
  for (let i = 0; i === 0 || i < starts.length; i += 10_000) {
    send({ type: 'starts', part: starts.slice(i, i + 10_000), last: i + 10_000 >= starts.length });
  }
});
send({ type: 'ready' });
