import { BadRequestException, Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ChronosClient } from '@chronos/nest';
import { SendEmail } from '../email/send-email.task.js';

@Controller('emails')
export class EmailsController {
  constructor(private readonly chronos: ChronosClient) {}

  /** POST /emails {"to": "…", "subject": "…"} → 202 Accepted with the task id; any replica sends it. */
  @Post()
  @HttpCode(202)
  async send(@Body() body: { to?: unknown; subject?: unknown }) {
    if (typeof body?.to !== 'string' || typeof body?.subject !== 'string')
      throw new BadRequestException('expected {"to": string, "subject": string}');
    const { id, queue, state } = await this.chronos.enqueue(new SendEmail(body.to, body.subject));
    return { id, queue, state };
  }
}
