import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * Default id of a worker server or scheduler instance: `<hostname>:<pid>:<6 hex>`. Used as the
 * consumer name in every consumer group and as the lease holder's name.
 */
export function newInstanceId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}
