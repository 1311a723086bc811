/**
 * `@chronos/nest`: the NestJS face (module, decorators, services) and the public engine API.
 * The engine alone, without any NestJS import, is the `./core` export.
 * @publicApi
 */
export * from './core/index.js';
// The Nest `ChronosClient` (the engine's client plus payload classes) takes the name here;
// the engine's own class stays available from `@chronos/nest/core`.
export * from './nest/index.js';
export { ChronosClient } from './nest/index.js';
// The web console's handler and standalone server (framework-free, over the core Inspector).
export * from './console/index.js';
