// An app with neither role (worker: false, scheduler: false: it only enqueues, an API in front of
// the workers) started no server nor scheduler, so nothing ran the start-up check docs/nest.md
// promises at onApplicationBootstrap: it booted with Redis down, and with a URL's /db the server does
// not have, its enqueues went into database 0 (ioredis goes on there after a failed SELECT), where
// another app's keys may be (trial3). Its bootstrap now runs the check.
import { Test } from '@nestjs/testing';
import { ChronosClient, ChronosModule } from '../../lib/index.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

/** The test Redis's URL with its database set to `db`. */
function onDatabase(db: number): string {
  const url = new URL(redisUrl());
  url.pathname = `/${db}`;
  return url.toString();
}

test('a producer-only app fails its bootstrap on a database the server does not have, instead of enqueuing into database 0', async () => {
  const module = await Test.createTestingModule({
    imports: [
      ChronosModule.forRoot({ connection: onDatabase(4000), namespace: newNamespace('producer'), worker: false, scheduler: false }),
    ],
  }).compile();
  module.useLogger(false);
  const app = module.createNestApplication();
  const err = await app.init().catch((e: unknown) => e);
  await app.close();
  expect(err).toBeInstanceOf(Error);
  expect((err as Error).message).toMatch(/database 4000 cannot be used/);
});

test('a producer-only app on a good Redis boots and enqueues', async () => {
  const namespace = newNamespace('producer');
  const module = await Test.createTestingModule({
    imports: [ChronosModule.forRoot({ connection: redisUrl(), namespace, worker: false, scheduler: false })],
  }).compile();
  module.useLogger(false);
  const app = module.createNestApplication();
  await app.init();
  try {
    const client = app.get(ChronosClient);
    expect((await client.enqueue('report', { n: 1 })).state).toBe('pending');
  } finally {
    await app.close();
    await deleteNamespace(namespace);
  }
});
