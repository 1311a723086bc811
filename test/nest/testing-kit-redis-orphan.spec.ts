// Mode 'redis': the kit's private redis-server ends with the process that started it, however that
// process ends. Before, it was killed from a process.on('exit') listener only: a test process that
// was SIGKILLed or SIGTERMed (Ctrl-C, a CI step's timeout) left it running for good, and so did
// every Jest run (Jest's test context has a process object of its own, whose 'exit' never fires) of
// a test that did not close its module (a test timeout, a failed init without close()). The test
// process here (dist) boots a module, prints the server's port and is SIGKILLed.
import { fork } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../helpers/wait.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

const script = `
import { Test } from '@nestjs/testing';
import { ChronosTesting, ChronosTestingModule } from './dist/lib/nest/testing/index.js';
const m = await Test.createTestingModule({ imports: [ChronosTestingModule.forRoot({ mode: 'redis' })] }).compile();
await m.init();
process.send({ url: m.get(ChronosTesting).redisUrl });
setInterval(() => {}, 1000); // alive until killed
`;

/** Whether a server answers PING on 127.0.0.1:port. */
function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(500, () => done(false));
    s.on('error', () => done(false));
    s.on('connect', () => s.write('PING\r\n'));
    s.on('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

test("mode 'redis': the private redis-server stops when the test process is SIGKILLed without closing the module", async () => {
  const child = fork('--input-type=module', [], {
    cwd: root,
    execArgv: ['--input-type=module', '-e', script],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`the test process exited (${code}) before its module booted`)));
  });
  const port = Number(new URL(url).port);
  expect(await pong(port)).toBe(true);
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
  try {
    await waitFor(async () => !(await pong(port)), { what: `the redis-server on port ${port} to stop`, timeoutMs: 10_000 });
  } finally {
    // when it did not stop (the failure), stop it here: the test leaves no server behind
    const s = net.connect({ host: '127.0.0.1', port });
    s.on('error', () => {});
    s.on('connect', () => s.end('SHUTDOWN NOSAVE\r\n'));
  }
}, 60_000);
