import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { ChronosModule } from '@chronos/nest';
import { config } from './config.js';
import { EmailService } from './email/email.service.js';
import { EmailsController } from './http/emails.controller.js';
import { HealthController } from './http/health.controller.js';
import { StatusController } from './http/status.controller.js';
import { InventorySchedule } from './inventory/inventory.schedule.js';
import { StorefrontListener } from './inventory/storefront.listener.js';
import { WarehouseListener } from './inventory/warehouse.listener.js';
import { ReportsService } from './reports/reports.service.js';

@Module({
  imports: [
    ChronosModule.forRootAsync({
      useFactory: () => ({
        connection: config.redisUrl,
        namespace: config.namespace,
        instanceId: config.instance,
        scheduler: config.scheduler,
        worker: config.worker,
        // tasks retry quickly in a demo; the default backoff is Sidekiq's (15 s, 16 s, 31 s, …)
        backoff: (retried) => 1000 * 2 ** retried,
        ...(config.fast ? { leaderTtl: 1500, heartbeatInterval: 500, shutdownTimeout: 3000 } : {}),
      }),
    }),
    TerminusModule,
  ],
  controllers: [EmailsController, StatusController, HealthController],
  providers: [ReportsService, EmailService, InventorySchedule, WarehouseListener, StorefrontListener],
})
export class AppModule {}
