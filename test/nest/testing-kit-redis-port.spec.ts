// Mode 'redis': the kit's private redis-server is its own. It picks a free port (bind to port 0, read
// it, close) and starts redis-server on it; between the close and the server's bind another process
// may take that port — another test's private redis-server, on a machine running suites in parallel.
// Then the kit's server fails to bind and exits, but the kit's PING got +PONG from the other one, so
// the kit ran its module on another test's Redis (its data, its SIGSTOPs, its shutdown: a test that
// hung until its timeout). The start now checks that the server answering is the one it started, and
// takes another port when it is not. The race is forced here by handing the kit a port that is taken.
import { Redis } from 'ioredis';
import { PrivateRedisServer } from '../../lib/nest/testing/private-redis.js';
import { PrivateRedis } from '../helpers/redis-server.js';

test("mode 'redis': a port another redis-server holds is not taken for the kit's own", async () => {
  const other = await PrivateRedis.start();
  const probe = new Redis(other.url);
  let mine: PrivateRedisServer | undefined;
  try {
    await probe.set('other-test:mark', '1');
    mine = await PrivateRedisServer.start('redis-server', { port: other.port });
    const c = new Redis(mine.url);
    try {
      expect(await c.exists('other-test:mark')).toBe(0);
    } finally {
      c.disconnect();
    }
    expect(mine.port).not.toBe(other.port);
    expect(await probe.get('other-test:mark')).toBe('1'); // the other server is untouched
  } finally {
    await mine?.stop();
    probe.disconnect();
    await other.kill();
  }
});
