// The web console: a framework-free Node handler (page + JSON API) over the core Inspector.
export { createConsoleHandler, type ConsoleHandler, type ConsoleHandlerOptions } from './handler.js';
export { startConsoleServer, isLoopback, type ConsoleServer, type ConsoleServerOptions } from './server.js';
export { describeSpec } from './describe.js';
export type { ConsoleAct } from './api.js';
export { CONTENT_SECURITY_POLICY } from './security.js';
