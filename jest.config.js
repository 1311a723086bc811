/** Jest 30 in ESM mode (NestJS 12 is ESM-only): run through `npm test`, which sets --experimental-vm-modules. */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // the sample's tests import the package by name, as a user's would: the sources, one copy of each class
    '^@chronos/nest$': '<rootDir>/lib/index.ts',
    '^@chronos/nest/testing$': '<rootDir>/lib/nest/testing/index.ts',
  },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
  },
  testMatch: ['<rootDir>/test/**/*.spec.ts', '<rootDir>/sample/test/**/*.spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/cluster/'], // npm run test:cluster
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  testTimeout: 60000,
  // Two workers, also on a 2-core machine (Jest's default there is one): the suites mostly wait on Redis, child
  // processes and timers (the whole run's CPU is ~3.5 of its 14 min in one worker), and they run in parallel by
  // design (each its own namespace or private Redis; never FLUSHDB). Measured: 837 s in one worker, 411 s in two.
  maxWorkers: 2,
};
