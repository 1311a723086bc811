import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { PrometheusModule } from '@willsoto/nestjs-prometheus';
import { ChronosModule } from '@chronos/nest';
import { config } from './config.js';
import { DemoService } from './demo/demo.service.js';
import { EmailService } from './email/email.service.js';
import { EmailsController } from './http/emails.controller.js';
import { HealthController } from './http/health.controller.js';
import { StatusController } from './http/status.controller.js';
import { TenantsController } from './http/tenants.controller.js';
import { InventorySchedule } from './inventory/inventory.schedule.js';
import { StorefrontListener } from './inventory/storefront.listener.js';
import { WarehouseListener } from './inventory/warehouse.listener.js';
import { ReportsService } from './reports/reports.service.js';
import { TenantDigestService } from './tenants/tenant-digest.service.js';

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
        // Chronos's metrics in prom-client's default registry, which PrometheusModule serves on GET /metrics
        metrics: true,
        // the web console at http://127.0.0.1:<port>/chronos (loopback only here; guard it in a real app)
        console: { path: '/chronos' },
        ...(config.fast ? { leaderTtl: 1500, heartbeatInterval: 500, shutdownTimeout: 3000 } : {}),
      }),
    }),
    TerminusModule,
    PrometheusModule.register(), // GET /metrics: Chronos's metrics plus Node's default process metrics
  ],
  controllers: [EmailsController, StatusController, HealthController, TenantsController],
  providers: [
    ReportsService,
    EmailService,
    TenantDigestService,
    InventorySchedule,
    WarehouseListener,
    StorefrontListener,
    ...(config.demo ? [DemoService] : []), // CHRONOS_SAMPLE_DEMO=1: flaky and slow demo tasks for the console
  ],
})
export class AppModule {}
