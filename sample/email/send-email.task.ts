/** A task payload class: `client.enqueue(new SendEmail(…))` and `@TaskHandler(SendEmail)` are typed end to end. */
export class SendEmail {
  /** The task type (stable across builds; without it the class name would be used). */
  static readonly type = 'email.send';

  constructor(
    readonly to: string,
    readonly subject: string,
  ) {}

  /** Available in handlers too: Chronos turns the payload back into a SendEmail. */
  describe(): string {
    return `"${this.subject}" to ${this.to}`;
  }
}
