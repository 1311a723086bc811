import { randomFillSync } from 'node:crypto';

/** Random bytes for {@link newTaskId}, refilled 256 ids at a time (one system call per 256 ids). */
const idPool = Buffer.allocUnsafe(16 * 256);
let idOffset = idPool.length;

/**
 * A new task id: 16 random bytes in base64url, 22 characters of `[A-Za-z0-9_-]`, the first one
 * always in `[A-Za-f]` (the top bit of the first byte is cleared, so 127 random bits, more than a
 * random UUID's 122): an id never starts with `-`, which a command line would take for an option
 * (`chronos task show <id>`). A UUID would be 36: the id is stored with every task, in the stream
 * entry and in the scheduled, retry and dead sets.
 */
export function newTaskId(): string {
  if (idOffset === idPool.length) {
    randomFillSync(idPool);
    idOffset = 0;
  }
  idPool[idOffset] &= 0x7f; // first character A–Z or a–f
  const id = idPool.toString('base64url', idOffset, idOffset + 16);
  idOffset += 16;
  return id;
}
