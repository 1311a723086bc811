import { BadRequestException, Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ChronosClient } from '@chronos/nest';
import { SendReceipt } from './send-receipt.task.js';

/** API-side only: takes the order and enqueues its receipt; a worker process sends it. */
@Controller('orders')
export class OrdersController {
  constructor(private readonly chronos: ChronosClient) {}

  /** POST /orders {"email": "…"} → 202 with the order id and the receipt task's id. */
  @Post()
  @HttpCode(202)
  async place(@Body() body: { email?: unknown }) {
    if (typeof body?.email !== 'string') throw new BadRequestException('expected {"email": string}');
    const orderId = `o-${Math.random().toString(36).slice(2, 10)}`;
    const { id } = await this.chronos.enqueue(new SendReceipt(orderId, body.email));
    return { orderId, task: id };
  }
}
