/**
 * A wake-up between two parts built apart: the fetch loop waits on it while every slot is taken,
 * and the slot table (a slot freed), the paused-queue refresh (a queue resumed) ring it. Created
 * first and handed to both, so neither needs the other.
 */
export class Wake {
  private waiter?: () => void;

  /** Resolves at the next {@link wake} (one waiter at a time: the fetch loop). */
  wait(): Promise<void> {
    return new Promise<void>((resolve) => (this.waiter = resolve));
  }

  /** Wakes the waiter, if one waits. */
  wake(): void {
    const w = this.waiter;
    if (w === undefined) return;
    this.waiter = undefined;
    w();
  }
}
