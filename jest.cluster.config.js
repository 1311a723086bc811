/** The Redis Cluster and Sentinel suite (test/cluster/**): `npm run test:cluster`. Each spec starts its own servers on free loopback ports. */
import base from './jest.config.js';

export default { ...base, testMatch: ['<rootDir>/test/cluster/**/*.spec.ts'], testPathIgnorePatterns: [], maxWorkers: 1 };
