import type * as OtelApi from '@opentelemetry/api';
import { CONSUMER_GROUP } from '../redis/keys.js';
import { loadOptional } from './optional.js';

/**
 * OpenTelemetry tracing of Chronos, through `@opentelemetry/api` (an optional peer dependency).
 * Without the package, or without an SDK registered by the app, every function here is a no-op
 * (no SDK: the API's no-op tracer; no package: not even that).
 *
 * - `enqueue` starts a PRODUCER span `send <queue>` and writes its W3C `traceparent` into the
 *   task's meta (field `tp`), so the task carries its creation context through Redis.
 * - Each attempt of a task (first run, retry, run after a reclaim) is its own CONSUMER span
 *   `process <queue>`, **a child of the producer span and linked to it**. Messaging semantic
 *   conventions require the link (it is what survives batching) and allow the parent when one
 *   span processes one message, which is always the case here: so the trace of the request that
 *   enqueued a task shows the task's runs, and a tool that follows links finds them too. With
 *   `configureTracing({ consumerParent: 'link' })` an attempt starts a new trace instead, linked
 *   only (for tasks that run hours after the request whose trace you keep short).
 * - A schedule's fire is a PRODUCER span `fire <schedule>` (`startFireSpan`); the fired
 *   task's attempts are its children, so a nightly job's trace starts at its trigger.
 * @publicApi
 */
export interface TracingConfig {
  /** Process-wide switch: false makes every Chronos span a no-op. @defaultValue true */
  enabled: boolean;
  /** How an attempt's span relates to the producer's: `'child'` (and linked), or `'link'` only. @defaultValue 'child' */
  consumerParent: 'child' | 'link';
}

type Api = typeof OtelApi;

const config: TracingConfig = { enabled: true, consumerParent: 'child' };

/** Changes the process-wide tracing configuration (e.g. `configureTracing({ enabled: false })`). @publicApi */
export function configureTracing(changes: Partial<TracingConfig>): void {
  if (changes.enabled !== undefined) config.enabled = changes.enabled;
  if (changes.consumerParent !== undefined) config.consumerParent = changes.consumerParent;
}

/** The API and its tracer once loaded (one object for every call: the worker asks per task); null when the package is not installed. */
let loadedOtel: { api: Api; tracer: OtelApi.Tracer } | null | undefined;

/** The API and tracer when tracing is on and `@opentelemetry/api` is installed; undefined otherwise (the cheap check of the hot paths). */
function otel(): { api: Api; tracer: OtelApi.Tracer } | undefined {
  if (!config.enabled) return undefined;
  if (loadedOtel === undefined) {
    const api = loadOptional<Api>('@opentelemetry/api');
    // a ProxyTracer: it follows the provider the app registers later
    loadedOtel = api ? { api, tracer: api.trace.getTracer('@chronos/nest') } : null;
  }
  return loadedOtel ?? undefined;
}

/** True when spans would be made (tracing enabled and `@opentelemetry/api` installed). */
export function tracingAvailable(): boolean {
  return otel() !== undefined;
}

let noopProvider: OtelApi.TracerProvider | undefined;

/**
 * True when no tracer provider is registered (no SDK): every span the API makes is then a
 * non-recording no-op, so the hot paths skip making one when it could carry no context either.
 */
function noProvider(a: Api): boolean {
  const provider = a.trace.getTracerProvider();
  if (!(provider instanceof a.ProxyTracerProvider)) return false;
  noopProvider ??= new a.ProxyTracerProvider().getDelegate();
  return provider.getDelegate() === noopProvider;
}

/**
 * @internal Whether {@link startConsumerSpan} would make a span for a task carrying `traceparent`
 * (the worker's per-task check, before it gathers the attempt's attributes).
 */
export function consumerSpanWanted(traceparent: string | undefined): boolean {
  const o = otel();
  return o !== undefined && !(traceparent === undefined && noProviderThisTurn(o.api));
}

/**
 * @internal Whether {@link startFireSpan} would make a real span: tracing is on, the API is
 * installed and a provider is registered (without one, a fire's root span is an invalid no-op
 * span with no traceparent). The leader asks once per fire chunk, not per trigger.
 */
export function fireSpansWanted(): boolean {
  const o = otel();
  return o !== undefined && !noProviderThisTurn(o.api);
}

/** {@link noProvider}'s answer for the rest of this synchronous run; undefined = not asked yet. */
let providerMissing: boolean | undefined;
const forgetProviderCheck = () => (providerMissing = undefined);

/**
 * {@link noProvider}, asked once per synchronous run: the tasks of one fetched batch start in one
 * (the fetcher hands them to the slots in a loop), so a batch of 50 asks once, not 50 times. The
 * answer is forgotten at the next microtask checkpoint: a provider registered later is seen by
 * the next batch.
 */
function noProviderThisTurn(a: Api): boolean {
  if (providerMissing === undefined) {
    providerMissing = noProvider(a);
    queueMicrotask(forgetProviderCheck);
  }
  return providerMissing;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The W3C `traceparent` of a span context (version 00), or undefined when the context is invalid. */
function traceparentOf(o: { api: Api }, span: OtelApi.Span): string | undefined {
  const sc = span.spanContext();
  if (!o.api.trace.isSpanContextValid(sc)) return undefined;
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A span context read from a `traceparent` (the shape of OpenTelemetry's `SpanContext`). */
export interface RemoteSpanContext {
  /** Trace id: 32 lowercase hex digits, not all zero. */
  traceId: string;
  /** Parent span id: 16 lowercase hex digits, not all zero. */
  spanId: string;
  /** W3C trace flags (bit 0: sampled). */
  traceFlags: number;
  /** Always true: the context comes from another process (the producer or the fire). */
  isRemote: true;
}

/** Parses a W3C `traceparent` (version 00) into a remote span context; undefined when malformed. */
export function parseTraceparent(tp: string | undefined): RemoteSpanContext | undefined {
  const m = tp === undefined ? null : TRACEPARENT.exec(tp);
  if (!m || /^0+$/.test(m[1]) || /^0+$/.test(m[2])) return undefined;
  return { traceId: m[1], spanId: m[2], traceFlags: parseInt(m[3], 16), isRemote: true };
}

/** A started Chronos span: end it once with the outcome. */
export interface ChronosSpan {
  /** W3C traceparent of this span, to store with the task (undefined when the span is not sampled/valid). */
  readonly traceparent?: string;
  /** Sets attributes (e.g. the final task id of a deduplicated enqueue). */
  set(attributes: Record<string, string | number | boolean>): void;
  /** Ends the span; an error is recorded as an exception event and sets the status to ERROR. */
  end(error?: unknown): void;
  /** Runs `fn` with this span as the active span (needs the SDK's context manager to propagate). */
  run<T>(fn: () => T): T;
}

function wrap(o: { api: Api }, span: OtelApi.Span, withTraceparent: boolean): ChronosSpan {
  const { api: a } = o;
  return {
    traceparent: withTraceparent ? traceparentOf(o, span) : undefined,
    set: (attributes) => span.setAttributes(attributes),
    end: (error) => {
      if (error !== undefined) {
        span.recordException(error instanceof Error ? error : String(error));
        span.setStatus({ code: a.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      }
      span.end();
    },
    run: (fn) => a.context.with(a.trace.setSpan(a.context.active(), span), fn),
  };
}

/**
 * The PRODUCER span of an enqueue, a child of the active context (e.g. the HTTP request's span).
 * @returns undefined when tracing is off or the API is not installed.
 */
export function startProducerSpan(queue: string, taskType: string, taskId: string): ChronosSpan | undefined {
  const o = otel();
  if (!o) return undefined;
  // no SDK and no active span: the API would make an invalid no-op span (no traceparent)
  if (noProvider(o.api) && o.api.trace.getSpan(o.api.context.active()) === undefined) return undefined;
  const span = o.tracer.startSpan(`send ${queue}`, {
    kind: o.api.SpanKind.PRODUCER,
    attributes: {
      'messaging.system': 'chronos',
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'send',
      'messaging.destination.name': queue,
      'messaging.message.id': taskId,
      'chronos.task.type': taskType,
    },
  });
  return wrap(o, span, true);
}

/** What a consumer span needs to know of one attempt. */
export interface AttemptInfo {
  /** Queue the task was fetched from (`messaging.destination.name`). */
  queue: string;
  /** The task's id. */
  taskId: string;
  /** The task's type. */
  taskType: string;
  /** Failed attempts before this one. */
  retried: number;
  /** Times the task was reclaimed from a crashed consumer. */
  reclaimed?: number;
  /** For a trigger's task: the schedule that fired it. */
  schedule?: string;
  /** For a trigger's task: the trigger instant, epoch ms. */
  triggerAt?: number;
  /** The producer's (or the fire's) traceparent from the task's meta. */
  traceparent?: string;
}

/**
 * The CONSUMER span of one attempt: a child of the producer's span and linked to it (or linked
 * only, see {@link TracingConfig.consumerParent}); a new root span when the task carries no
 * traceparent. @returns undefined when tracing is off or the API is not installed.
 */
export function startConsumerSpan(a: AttemptInfo): ChronosSpan | undefined {
  const o = otel();
  if (!o) return undefined;
  const { api: otelApi } = o;
  // no SDK and no producer context: the API would make an invalid no-op root span
  if (a.traceparent === undefined && noProvider(otelApi)) return undefined;
  const producer = parseTraceparent(a.traceparent);
  const attributes: OtelApi.Attributes = {
    'messaging.system': 'chronos',
    'messaging.operation.type': 'process',
    'messaging.operation.name': 'process',
    'messaging.destination.name': a.queue,
    'messaging.message.id': a.taskId,
    'messaging.consumer.group.name': CONSUMER_GROUP,
    'chronos.task.type': a.taskType,
    'chronos.task.attempt': a.retried + 1,
  };
  if (a.reclaimed) attributes['chronos.task.reclaimed'] = a.reclaimed;
  if (a.schedule !== undefined) attributes['chronos.schedule'] = a.schedule;
  if (a.triggerAt !== undefined) attributes['chronos.trigger_at'] = a.triggerAt;
  const child = producer !== undefined && config.consumerParent === 'child';
  const parent = child ? otelApi.trace.setSpanContext(otelApi.ROOT_CONTEXT, producer) : otelApi.ROOT_CONTEXT;
  const span = o.tracer.startSpan(
    `process ${a.queue}`,
    { kind: otelApi.SpanKind.CONSUMER, attributes, links: producer ? [{ context: producer }] : [], root: !child },
    parent,
  );
  return wrap(o, span, false);
}

/**
 * The PRODUCER span of one fire of a schedule (for the scheduler: start it before `fire.lua`,
 * store its `traceparent` in the trigger task's meta `tp`, end it with the fire's outcome), so
 * the task's attempts are its children. `taskId` is the trigger's id `<schedule>:<trigger-unix>`.
 * @returns undefined when tracing is off or the API is not installed.
 */
export function startFireSpan(schedule: string, queue: string, triggerAt: number, taskId: string): ChronosSpan | undefined {
  const o = otel();
  if (!o) return undefined;
  const span = o.tracer.startSpan(
    `fire ${schedule}`,
    {
      kind: o.api.SpanKind.PRODUCER,
      attributes: {
        'messaging.system': 'chronos',
        'messaging.operation.type': 'create',
        'messaging.operation.name': 'fire',
        'messaging.destination.name': queue,
        'messaging.message.id': taskId,
        'chronos.schedule': schedule,
        'chronos.trigger_at': triggerAt,
      },
      root: true,
    },
    o.api.ROOT_CONTEXT,
  );
  return wrap(o, span, true);
}
