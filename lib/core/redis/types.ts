import type { Cluster, Redis } from 'ioredis';

/** A standalone or cluster ioredis client. */
export type RedisClient = Redis | Cluster;
