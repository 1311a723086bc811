import { createRequire } from 'node:module';
import { ChronosError } from '../runtime/errors.js';

/**
 * An optional peer dependency a feature needs is not installed (`prom-client` for metrics).
 * Code `CONFIG`; names the package and the feature. @publicApi
 */
export class MissingPeerDependencyError extends ChronosError {
  constructor(
    /** The npm package to install, e.g. `prom-client`. */
    readonly packageName: string,
    feature: string,
    options?: ErrorOptions,
  ) {
    const message = `${feature} needs the optional peer dependency "${packageName}", which is not installed: npm install ${packageName}`;
    super('CONFIG', message, options);
  }
}

const requireHere = createRequire(import.meta.url);
const loaded = new Map<string, unknown>();

/**
 * Loads an optional peer dependency synchronously (CommonJS `require`, which also loads the CJS
 * build of a dual package, so the app and Chronos share one instance). Cached, failures too.
 * @returns the module, or undefined when it is not installed (any other load error is thrown).
 */
export function loadOptional<T>(name: string): T | undefined {
  if (loaded.has(name)) return loaded.get(name) as T | undefined;
  let mod: unknown;
  try {
    mod = requireHere(name);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') throw err;
    mod = undefined;
  }
  loaded.set(name, mod);
  return mod as T | undefined;
}
