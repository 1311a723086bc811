// What a failure says about where Redis is (failures.ts describe, in the loops' failure logs and the
// start-up errors). A Sentinel client's host and port are ioredis's defaults, not where it connects:
// after a failover the logs said 'Connection is closed. (Redis at localhost:6379/0)' of a fleet that
// never used that address (trial 45). It names the primary's name and the sentinels now.
import { Redis } from 'ioredis';
import { describe as where } from '../../lib/core/redis/failures.js';

test('a Sentinel client is named by its primary and its sentinels, not by the default host and port', () => {
  const client = new Redis({ sentinels: [{ host: '10.0.0.1', port: 26379 }, { port: 26380 }], name: 'orders', db: 2, lazyConnect: true });
  try {
    expect(where(client)).toBe('sentinel primary "orders" via 10.0.0.1:26379,127.0.0.1:26380/2');
  } finally {
    client.disconnect();
  }
});

test('a plain client is named host:port/db', () => {
  const client = new Redis({ host: '127.0.0.1', port: 6390, db: 1, lazyConnect: true });
  try {
    expect(where(client)).toBe('127.0.0.1:6390/1');
  } finally {
    client.disconnect();
  }
});
