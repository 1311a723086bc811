/** The task payload both processes share: the API enqueues it, the worker handles it. */
export class SendReceipt {
  /** The task type, stable across builds and shared by the two processes. */
  static readonly type = 'order.receipt';

  constructor(
    readonly orderId: string,
    readonly email: string,
  ) {}
}
