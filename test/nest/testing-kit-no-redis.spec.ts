// In modes 'manual' and 'inline' nothing talks to Redis. ChronosClient's members that need Redis
// (setQueueLimits, getQueueLimits, redis) reject with a ChronosTestingError that says so; before,
// they reached the kit's offline ioredis client ("Stream isn't writeable and enableOfflineQueue
// options is false"), which then connected to 127.0.0.1:6379 and kept the test process alive after
// module.close(). A child process (dist) must print its errors and exit on its own (killed after 20 s otherwise).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

const script = `
import { Test } from '@nestjs/testing';
import { ChronosClient } from './dist/lib/index.js';
import { ChronosTestingModule } from './dist/lib/nest/testing/index.js';
const m = await Test.createTestingModule({ imports: [ChronosTestingModule.forRoot()] }).compile();
await m.init();
const c = m.get(ChronosClient);
const errors = [];
for (const f of [() => c.setQueueLimits('default', { concurrency: 2 }), () => c.getQueueLimits('default'), () => c.redis.ping()]) {
  try { await f(); errors.push('no error'); } catch (e) { errors.push(e.name + ': ' + e.message); }
}
await m.close();
console.log(JSON.stringify(errors));
`;

test("ChronosClient's Redis members reject with a ChronosTestingError in manual mode, and the process exits after close()", async () => {
  const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: root, timeout: 20_000 }, (error, stdout) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, out: stdout }),
    );
    child.stdin?.end();
  });
  expect(code).toBe(0);
  const errors = JSON.parse(out) as string[];
  expect(errors).toHaveLength(3);
  for (const [i, member] of ['setQueueLimits', 'getQueueLimits', 'redis'].entries())
    expect(errors[i]).toMatch(new RegExp(`^ChronosTestingError: ChronosClient\\.${member} needs Redis: .*mode: 'redis'`));
}, 30_000);
