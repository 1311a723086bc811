import { Controller, Get } from '@nestjs/common';
import { InspectorService } from '@chronos/nest';

@Controller('status')
export class StatusController {
  constructor(private readonly inspector: InspectorService) {}

  /** GET /status → the leader, every schedule (next triggers, last fired), queue counts and live workers. */
  @Get()
  status() {
    return this.inspector.overview();
  }
}
