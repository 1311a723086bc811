/**
 * `@chronos/nest`: the NestJS face (module, decorators, services) and the public engine API.
 * The engine alone, without any NestJS import, is the `./core` export.
 * @publicApi
 */
export * from './core/index.js';
// One `ChronosClient` here: the Nest injectable (the engine's `QueueClient` plus payload classes).
// The engine's former name for `QueueClient` stays, deprecated, in `@chronos/nest/core` only.
export * from './nest/index.js';
export { ChronosClient } from './nest/index.js';
// The web console's handler and standalone server (framework-free, over the core Inspector).
export {
  createConsoleHandler,
  startConsoleServer,
  type ConsoleHandler,
  type ConsoleHandlerOptions,
  type ConsoleServer,
  type ConsoleServerOptions,
  type ConsoleAct,
} from './console/index.js';
