import type { ChildProcess } from 'node:child_process';
export function ping(host: string, port: number, timeoutMs?: number): Promise<boolean>;
export function freePort(): Promise<number>;
export function hasRedisServer(): boolean;
export function startRedisServer(extraArgs?: string[]): Promise<{ url: string; port: number; child: ChildProcess }>;
export function ensureRedis(): Promise<{ url: string; port?: number; child?: ChildProcess }>;
export const HOW_TO_GET_REDIS: string;
export function ensureRedisOrExit(): Promise<{ url: string; port?: number; child?: ChildProcess }>;
