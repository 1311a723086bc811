import { Logger, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { useBodyLimits } from './http/body-limits.js';
import { config } from './config.js';

/**
 * Creates the app, enables shutdown hooks (so a stopping replica resigns and drains), sets the JSON
 * body limits (10 MB for the bulk tenants route: http/body-limits.ts) and listens.
 */
export async function bootstrap(rootModule: Type<unknown> = AppModule) {
  const app = await NestFactory.create<NestExpressApplication>(rootModule);
  app.enableShutdownHooks();
  useBodyLimits(app);
  await app.listen(config.port, '127.0.0.1');
  const routes = 'POST /emails, GET /status, GET /health, GET /metrics, console at /chronos/';
  new Logger('Sample').log(`Listening on http://127.0.0.1:${config.port} (namespace=${config.namespace} try: ${routes})`);
  return app;
}
