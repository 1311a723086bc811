/**
 * Payload classes: a task type named by a class, so enqueue and handler are typed end to end.
 * @publicApi
 */

/**
 * A class whose instances are task payloads. Its task type is its static `type` when it has one
 * (recommended: stable across builds and minifiers), else the class name. An optional static
 * `queue` is the queue its tasks go to by default (and one the worker serves).
 *
 * ```ts
 * export class SendEmail {
 *   static readonly type = 'email.send';
 *   constructor(readonly to: string, readonly subject: string) {}
 * }
 * ```
 * @publicApi
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a payload class of unknown payload type, as a constraint
export type PayloadClass<T = any> = (abstract new (...args: any[]) => T) & {
  /** The task type of the class's payloads (recommended). @defaultValue the class name */
  readonly type?: string;
  /** The queue its tasks go to when an enqueue names none (and one the worker serves). */
  readonly queue?: string;
  /**
   * The group of its tasks when an enqueue names none (enqueue option `group`): a string, or a
   * function of the payload (e.g. `(p) => p.tenantId`) returning a string, or undefined for no group.
   */
  readonly group?: string | ((payload: T) => string | undefined);
};

/** The task type of a payload class: its static `type`, else its name; undefined when it has neither. */
export function taskTypeOf(cls: PayloadClass): string | undefined {
  const t = (cls as { type?: unknown }).type;
  if (typeof t === 'string' && t.length > 0) return t;
  return typeof cls.name === 'string' && cls.name.length > 0 ? cls.name : undefined;
}

/** The default queue of a payload class (its static `queue`), if any. */
export function queueOf(cls: PayloadClass): string | undefined {
  const q = (cls as { queue?: unknown }).queue;
  return typeof q === 'string' ? q : undefined;
}

/**
 * The group a payload class gives a payload (its static `group`: a string, or a function of the
 * payload); undefined when it has none.
 */
export function groupOf(cls: PayloadClass, payload: unknown): unknown {
  const g = (cls as { group?: unknown }).group;
  return typeof g === 'function' ? (g as (p: unknown) => unknown)(payload) : g;
}

/** The task type named by a string or a payload class; undefined when a class has no usable name. */
export function resolveType(type: string | PayloadClass): string | undefined {
  return typeof type === 'string' ? type : typeof type === 'function' ? taskTypeOf(type) : undefined;
}

/**
 * The plain object JSON keeps of an instance of its payload class (its own enumerable fields), so
 * the engine, which refuses class instances JSON would strip of their class, accepts it; handlers
 * get the class back ({@link rehydrate}). Anything else (plain objects, other classes, instances
 * with a `toJSON()`) is returned as it is, for the engine to check.
 */
export function plainPayload(cls: PayloadClass | undefined, payload: unknown): unknown {
  if (!cls || typeof payload !== 'object' || payload === null || !(payload instanceof (cls as abstract new () => unknown))) return payload;
  if (typeof (payload as { toJSON?: unknown }).toJSON === 'function') return payload;
  return { ...payload };
}

/**
 * Turns a JSON payload back into an instance of its payload class (prototype set, own fields
 * copied; the constructor is not called), so handlers get `instanceof` and the class's methods.
 * Non-object payloads (null, arrays, primitives) are returned as they are. An own `__proto__` field
 * (JSON.parse makes one of `"__proto__"`) is copied as a field: assigned, it replaced the instance's
 * prototype, and the handler got an object that was not of its class (trial 33).
 */
export function rehydrate<T>(cls: PayloadClass<T> | undefined, payload: unknown): T {
  if (!cls || typeof payload !== 'object' || payload === null || Array.isArray(payload)) return payload as T;
  const instance = Object.create(cls.prototype as object) as Record<string, unknown>;
  if (!Object.hasOwn(payload, '__proto__')) return Object.assign(instance, payload) as T;
  for (const [k, value] of Object.entries(payload)) {
    Object.defineProperty(instance, k, { value, writable: true, enumerable: true, configurable: true });
  }
  return instance as T;
}
