import { Module, type DynamicModule } from '@nestjs/common';
import { ChronosModule } from '@chronos/nest';
import { OrdersController } from './orders.controller.js';
import { ReceiptsService } from './receipts.service.js';

/** Which process this is: `api` enqueues only (`worker: false`, no scheduler), `worker` runs handlers and schedules. */
export type Role = 'api' | 'worker';

/** One module, two roles: the same Redis and namespace, different Chronos roles and providers. */
@Module({})
export class AppModule {
  static forRole(role: Role): DynamicModule {
    const chronos = ChronosModule.forRoot({
      connection: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      namespace: process.env.CHRONOS_NAMESPACE ?? 'chronos-example-split',
      worker: role === 'worker',
      scheduler: role === 'worker',
    });
    return role === 'api'
      ? { module: AppModule, imports: [chronos], controllers: [OrdersController] }
      : { module: AppModule, imports: [chronos], providers: [ReceiptsService] };
  }
}
