import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { ChronosHealthIndicator } from '@chronos/nest';

@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly chronos: ChronosHealthIndicator,
  ) {}

  /** GET /health → 200 when Redis answers and this replica's worker and scheduler run, else 503. */
  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.chronos.isHealthy('chronos')]);
  }
}
