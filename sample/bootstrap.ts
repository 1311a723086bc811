import { Logger, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { config } from './config.js';

/** Creates the app, enables shutdown hooks (so a stopping replica resigns and drains) and listens. */
export async function bootstrap(rootModule: Type<unknown> = AppModule) {
  const app = await NestFactory.create(rootModule);
  app.enableShutdownHooks();
  await app.listen(config.port, '127.0.0.1');
  new Logger('Sample').log(
    `Listening on http://127.0.0.1:${config.port} (namespace=${config.namespace} try: POST /emails, GET /status, GET /health)`,
  );
  return app;
}
