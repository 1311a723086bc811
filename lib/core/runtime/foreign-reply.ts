// ioredis's parser error when a server answers in another protocol: the start-up error (errors.ts) and the
// connection's error recorder (redis/connection.ts) read it. Internal: not exported by the package.

/**
 * The first byte of a reply in another protocol when `message` is ioredis's parser error for it
 * ("Protocol error, got "H" as reply type byte. Please report this."): the server is not Redis.
 * Undefined for any other error.
 */
export function foreignReply(message: string): string | undefined {
  return /^Protocol error, got "(.*?)" as reply type byte/.exec(message)?.[1];
}
