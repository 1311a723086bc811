import { Logger, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { useBodyLimits } from './http/body-limits.js';
import { config } from './config.js';

/**
 * Creates the app, enables shutdown hooks (so a stopping replica resigns and drains), sets the JSON
 * body limits (10 MB for the bulk tenants route: http/body-limits.ts) and listens.
 *
 * @throws Error `Port <port> on 127.0.0.1 is in use …` (its `cause` Node's EADDRINUSE) when another
 * process holds the port; any other error of binding the port as it is. Either after closing the app:
 * `listen()` runs `init()` first, so Chronos's worker and scheduler had started and joined the fleet,
 * and they resign and drain before the process leaves.
 */
export async function bootstrap(rootModule: Type<unknown> = AppModule) {
  const app = await NestFactory.create<NestExpressApplication>(rootModule);
  app.enableShutdownHooks();
  useBodyLimits(app);
  try {
    await app.listen(config.port, '127.0.0.1');
  } catch (err) {
    const bind = err as NodeJS.ErrnoException;
    if (bind.syscall !== 'listen') throw err; // init() failed: Chronos closed what it opened (README "When Redis is unreachable")
    await app.close();
    if (bind.code !== 'EADDRINUSE') throw err;
    const next = config.port + 1;
    throw new Error(
      `Port ${config.port} on 127.0.0.1 is in use (another npm run sample?): PORT=${next} npm run sample runs one more replica, npm run sample:cluster three`,
      { cause: err },
    );
  }
  const routes = 'POST /emails, GET /status, GET /health, GET /metrics, console at /chronos/';
  new Logger('Sample').log(`Listening on http://127.0.0.1:${config.port} (namespace=${config.namespace} try: ${routes})`);
  return app;
}
