export * from './chronos-config.error.js';
export * from './chronos-discovery.error.js';
