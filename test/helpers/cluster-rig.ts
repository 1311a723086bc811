// The rig of the cluster suites that move a slot while clients use it: one private cluster of 3
// masters and a 4th master joined empty (a test moves a slot to it), started before the suite's
// first test and stopped after its last; after each test, what it registered in `closers` is
// closed, last first.
import { afterAll, afterEach, beforeAll } from '@jest/globals';
import { RedisCluster, type Node } from './redis-cluster.js';

/** What the tests of a reshard suite work with (`cluster` and `added` are set before the first test). */
export interface ReshardRig {
  /** 3 masters serving every slot, and `added`. */
  cluster: RedisCluster;
  /** A master joined empty: it serves the slots a test moves to it (`cluster.moveSlot`). */
  added: Node;
  /** Closed after each test, last first. */
  closers: (() => Promise<unknown>)[];
}

/**
 * Registers the rig's beforeAll/afterEach/afterAll (call at the top of a suite) and returns it: read
 * `cluster` and `added` inside tests, as they are set in beforeAll.
 */
export function useReshardRig(): ReshardRig {
  const rig = { closers: [] } as unknown as ReshardRig;
  beforeAll(async () => {
    rig.cluster = await RedisCluster.start({ masters: 3 });
    rig.added = await rig.cluster.addMaster();
  });
  afterEach(async () => {
    for (const c of rig.closers.splice(0).reverse()) await c();
  });
  afterAll(async () => {
    await rig.cluster?.stop(); // unset when the start failed
  });
  return rig;
}
