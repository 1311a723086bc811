/**
 * Message factories of the NestJS face: errors and logs use them so wording stays consistent and
 * tests can import the exact text.
 */

/** `ReportsService#nightly`: where a decorator sits. */
export function sourceOf(className: string, methodName: string): string {
  return `${className}#${methodName}`;
}

export const MESSAGES = {
  providedTwice: (className: string, modules: string[]) =>
    `${className} is in the providers of ${modules.length} modules (${modules.join(', ')}), so the app has ${modules.length} instances of it and Chronos would run its @Cron, @Interval and @TaskHandler methods once per instance: provide it in one module and export it from there to the others`,
  importedTwice: (namespaces: string[]) =>
    `ChronosModule is imported ${namespaces.length} times in this app (namespaces ${namespaces.map((n) => `"${n}"`).join(', ')}): import ChronosModule.forRoot()/forRootAsync() once, in the root module (it is global). Each import would run its own worker and scheduler over every decorated method: every schedule would fire once per import, and every task type have a handler per import`,
  importedWithKit: (namespaces: string[]) =>
    `ChronosTestingModule and ChronosModule are both imported in this app (${namespaces.length} Chronos modules, namespaces ${namespaces.map((n) => `"${n}"`).join(', ')}): the kit replaces ChronosModule, so a test imports one of them. To test a module that imports ChronosModule.forRoot()/forRootAsync(), keep that import in a constant (\`export const chronos = ChronosModule.forRoot(…)\`, \`imports: [chronos]\`) and replace it: \`Test.createTestingModule({ imports: [AppModule] }).overrideModule(chronos).useModule(ChronosTestingModule.forRoot())\` (docs/testing.md)`,
  requestScoped: (source: string, decorator: string) =>
    `${source}: @${decorator} on a request-scoped or transient provider; Chronos calls the method of one singleton instance, so make the provider a default-scoped (singleton) provider`,
  twoSchedules: (source: string) => `${source}: a method can carry one @Cron or @Interval, found several`,
  duplicateSchedule: (name: string, sources: string[]) =>
    `schedule name "${name}" is used by ${sources.join(' and ')}; schedule names must be unique (set \`name\` on one of them)`,
  duplicateListener: (type: string, name: string, sources: string[]) =>
    `listener name "${name}" of task type "${type}" is used by ${sources.join(' and ')}; set \`name\` on one of them`,
  invalidSchedule: (source: string, message: string) => `${source}: ${message}`,
  invalidType: (source: string, value: unknown) =>
    `${source}: @TaskHandler type must be a non-empty string of at most 200 characters or a payload class, got ${describe(value)}`,
  invalidOption: (source: string, decorator: string, problem: string) => `${source}: @${decorator} ${problem}`,
  twoQueues: (type: string, bound: { queue?: string; source: string }[]) =>
    `the handlers of payload class task type "${type}" declare different queues (${bound.map((l) => `"${l.queue}" by ${l.source}`).join(', ')}), so an enqueue of the class cannot tell where to go: declare one queue for all of them`,
  childTypeTooLong: (source: string, childType: string) =>
    `${source}: the fan-out task type "${childType}" is longer than 200 characters; shorten the task type or set a shorter listener \`name\``,
  noHandlerForDispatch: (source: string, type: string) =>
    `${source}: the schedule dispatches task type "${type}" but no @TaskHandler in this app handles it (fine when another service does)`,
  queueNotServed: (queue: string, sources: string[], queues: string[]) =>
    `Queue "${queue}" (used by ${sources.join(', ')}) is not in this worker's \`queues\` (${queues.join(', ')}); another worker must serve it`,
} as const;

function describe(value: unknown): string {
  if (typeof value === 'function') return `a function${value.name ? ` (${value.name})` : ''} without a usable name or static \`type\``;
  return JSON.stringify(value) ?? String(value);
}
