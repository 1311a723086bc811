/** The Redis Cluster and Sentinel suite (test/cluster/**): `npm run test:cluster`. Each spec starts its own servers on free loopback ports. */
import base from './jest.config.js';

export default {
  ...base,
  testMatch: ['<rootDir>/test/cluster/**/*.spec.ts'],
  testPathIgnorePatterns: [],
  maxWorkers: 1,
  // One worker runs the specs in Jest's own process, so a timer some spec leaves armed keeps the run
  // from ever ending (seen once: every test passed, then one ref'd Timeout and nothing else held the
  // process for good, and CI would wait for its time limit). The two-worker suite is safe from this
  // (Jest ends its workers); this one exits when its specs are done, and Jest still says it forced it.
  forceExit: true,
};
