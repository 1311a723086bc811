/** An event: "inventory should be synchronised". Every @TaskHandler(SyncInventory) gets its own task. */
export class SyncInventory {
  static readonly type = 'inventory.sync';

  constructor(readonly reason: string) {}
}
