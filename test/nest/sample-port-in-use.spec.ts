// A second `npm run sample` while one runs (what a new user tries for "several replicas"): both want
// 127.0.0.1:3000. Nest's listen() runs init() first, so the second process had already started its
// worker and scheduler (joining the first's fleet, which released shards to it) when the port was
// refused. Before (trial 40): it died on an unhandled EADDRINUSE with Node's stack trace, without
// resigning or stopping its worker, so the shards it had been handed stayed unled until its lease
// ran out. Now it closes the app (resigns, drains) and says which port and what to run instead.
import { jest } from '@jest/globals';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { freePort, SampleMain } from '../helpers/sample.js';

jest.setTimeout(60_000);

const ns = newNamespace('sampleport');
const samples: SampleMain[] = [];

afterAll(async () => {
  for (const s of samples) s.kill('SIGTERM');
  await Promise.all(samples.map((s) => s.exited));
  await deleteNamespace(ns);
});

test('a second sample on a port in use stops its roles and names the port and the way out', async () => {
  const port = String(await freePort());
  const env = { REDIS_URL: redisUrl(), PORT: port, CHRONOS_NAMESPACE: ns };
  const first = new SampleMain({ ...env, CHRONOS_INSTANCE: 'first' });
  samples.push(first);
  await first.line(/Listening on http:\/\/127\.0\.0\.1:\d+/);

  const second = new SampleMain({ ...env, CHRONOS_INSTANCE: 'second' });
  samples.push(second);
  const { code } = await second.exited;
  expect(code).toBe(1);
  expect(second.output).toMatch(new RegExp(`Port ${port} on 127\\.0\\.0\\.1 is in use .*PORT=\\d+ npm run sample`));
  expect(second.output).not.toMatch(/node:net/); // no raw stack of an unhandled error
  // its roles were stopped on the way out: the worker says so, and the scheduler left the fleet
  expect(second.output).toMatch(/Worker stopped \(server=second /);
  expect(second.output).not.toMatch(/Lost leadership/);
});
