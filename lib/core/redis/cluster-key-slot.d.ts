/** Types of cluster-key-slot (ioredis's CRC16 of a key, honouring `{hash tags}`): it ships none. */
declare module 'cluster-key-slot' {
  /** The Redis Cluster hash slot (0 to 16383) of a key. */
  function calculateSlot(key: string | Buffer): number;
  export default calculateSlot;
}
