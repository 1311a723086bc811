import { randomFillSync } from 'node:crypto';

/** Random bytes for {@link newTaskId}, refilled 256 ids at a time (one system call per 256 ids). */
const idPool = Buffer.allocUnsafe(16 * 256);
let idOffset = idPool.length;

/**
 * A new task id: 16 random bytes (128 bits, more than a random UUID's 122) in base64url, 22
 * characters of `[A-Za-z0-9_-]`. A UUID would be 36: the id is stored with every task, in the
 * stream entry and in the scheduled, retry and dead sets.
 */
export function newTaskId(): string {
  if (idOffset === idPool.length) {
    randomFillSync(idPool);
    idOffset = 0;
  }
  const id = idPool.toString('base64url', idOffset, idOffset + 16);
  idOffset += 16;
  return id;
}
