// Mode 'redis' with a module option ChronosModule refuses: compile() rejects with the same
// ChronosConfigError, and nothing the kit started outlives it. Before, the options factory started the
// private redis-server first, the options were refused after it, and no shutdown hook ever ran (the
// test holds no module to close): the redis-server child kept the test process alive, so Jest never
// exited. A child process (dist) must print the error and exit on its own (killed after 20 s otherwise).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

const script = `
import { Test } from '@nestjs/testing';
import { ChronosTestingModule } from './dist/lib/nest/testing/index.js';
try {
  await Test.createTestingModule({ imports: [ChronosTestingModule.forRoot({ mode: 'redis', concurrency: -1 })] }).compile();
  console.log('compiled');
} catch (e) {
  console.log(e.name + ': ' + e.message.split('\\n').join(' '));
}
`;

test("mode 'redis' with a bad module option: compile() rejects with the ChronosConfigError and the process exits", async () => {
  const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: root, timeout: 20_000 }, (error, stdout) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, out: stdout }),
    );
    child.stdin?.end();
  });
  expect(out).toMatch(/^ChronosConfigError: .*concurrency/);
  expect(code).toBe(0);
}, 30_000);
