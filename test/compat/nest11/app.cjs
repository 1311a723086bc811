// A CommonJS NestJS 11 application using Chronos (an ESM package) through require(): Node >= 20.19
// loads ES modules from require(). Plain JavaScript, so decorators are applied by hand.
// Env: REDIS_URL. Prints "COMPAT OK ..." and exits 0 when a @TaskHandler task, an @Interval
// trigger and a fan-out all ran and the app closed; exits 1 otherwise.
'use strict';
require('reflect-metadata');
const { Injectable, Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const chronos = require('@chronos/nest');
const nestVersion = require('@nestjs/core/package.json').version;

const { ChronosModule, ChronosClient, SchedulerService, Interval, TaskHandler } = chronos;
const seen = { ping: null, tick: null, fanout: [] };
let done;
const finished = new Promise((resolve) => (done = resolve));
const check = () => seen.ping && seen.tick && seen.fanout.length === 2 && done();

function decorateMethod(decorator, cls, name) {
  const descriptor = Object.getOwnPropertyDescriptor(cls.prototype, name);
  decorator(cls.prototype, name, descriptor);
}

class Jobs {
  ping(task) {
    seen.ping = task;
    check();
  }
  tick(task) {
    seen.tick ??= task;
    check();
  }
  audit(task) {
    seen.fanout.push(['audit', task.id]);
    check();
  }
  mail(task) {
    seen.fanout.push(['mail', task.id]);
    check();
  }
}
decorateMethod(TaskHandler('compat.ping'), Jobs, 'ping');
decorateMethod(Interval('1s'), Jobs, 'tick');
decorateMethod(TaskHandler('compat.event'), Jobs, 'audit');
decorateMethod(TaskHandler('compat.event'), Jobs, 'mail');
Injectable()(Jobs);

class AppModule {}
Module({
  imports: [
    ChronosModule.forRoot({
      connection: process.env.REDIS_URL,
      namespace: `chronos-compat-${process.pid}`,
      leaderTtl: 1000,
      heartbeatInterval: 300,
    }),
  ],
  providers: [Jobs],
})(AppModule);

async function main() {
  const timer = setTimeout(() => {
    console.error('COMPAT FAILED: timed out', JSON.stringify(seen));
    process.exit(1);
  }, 15_000);
  const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error', 'warn', 'log'] });
  app.enableShutdownHooks();
  const client = app.get(ChronosClient);
  await client.enqueue('compat.ping', { hello: 'nest11' });
  await client.enqueue('compat.event', { id: 1 }, { taskId: 'evt-1' });
  await finished;
  const leader = app.get(SchedulerService).isLeader;
  await app.close();
  clearTimeout(timer);
  // delete the namespace (ioredis comes with Chronos)
  const { Redis } = require('ioredis');
  const redis = new Redis(process.env.REDIS_URL);
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `chronos-compat-${process.pid}:*`, 'COUNT', 1000);
    if (keys.length) await redis.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
  await redis.quit();
  console.log(
    `COMPAT OK with @nestjs/core ${nestVersion} on Node ${process.version}: leader=${leader} ping=${seen.ping.id} tick=${seen.tick.id} fanout=${seen.fanout
      .map((f) => f[1])
      .sort()
      .join(',')}`,
  );
}
main().catch((err) => {
  console.error('COMPAT FAILED:', err);
  process.exit(1);
});
