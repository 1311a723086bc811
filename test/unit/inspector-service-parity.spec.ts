// InspectorService is the core Inspector for Nest: each method it shares with the Inspector takes the
// same arguments and returns the same. Checked by the compiler (the build type-checks test/): a method
// whose parameters drifted (runTask's `state` was once missing from the service's options) fails the
// build; and at run time, the service has a method for each of the Inspector's, but those it leaves out on purpose.
import { Inspector } from '../../lib/core/index.js';
import { InspectorService } from '../../lib/index.js';

type Fn = (...args: never[]) => unknown;
type Shared = {
  [K in keyof InspectorService & keyof Inspector]: InspectorService[K] extends Fn ? (Inspector[K] extends Fn ? K : never) : never;
}[keyof InspectorService & keyof Inspector];
// exact equality (an optional field present in one and absent in the other differs, unlike `extends`)
type Mutual<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Per shared method: true when its parameters and result are the Inspector's, both ways. */
type Parity = {
  [K in Shared]: Mutual<Parameters<InspectorService[K]>, Parameters<Inspector[K]>> extends true
    ? Mutual<ReturnType<InspectorService[K]>, ReturnType<Inspector[K]>>
    : false;
};
type Drifted = { [K in Shared]: Parity[K] extends true ? never : K }[Shared];
// the compile-time check: `Drifted` names each method whose signature differs; it must be none
const noDrift: [Drifted] extends [never] ? true : Drifted = true;

/** The public methods of a class's prototype chain, below Object. */
function methods(cls: { prototype: object }): string[] {
  const names = new Set<string>();
  for (let p = cls.prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p) as object) {
    for (const n of Object.getOwnPropertyNames(p)) {
      const d = Object.getOwnPropertyDescriptor(p, n);
      if (n !== 'constructor' && !n.startsWith('_') && typeof d?.value === 'function') names.add(n);
    }
  }
  return [...names].sort();
}

// the Inspector's methods the service leaves out, on purpose: `rec` is protected; `check`, `queueNames`,
// `requireQueue` and `requireTask` are the CLI's probes, and `vetAct` audits the refusals of the CLI's and
// the console's own doors; `close` belongs to whoever made the connection (the module's); in Nest a schedule
// is written through `ChronosSchedules`, not `addSchedule`
const LEFT_OUT = ['addSchedule', 'check', 'close', 'queueNames', 'rec', 'requireQueue', 'requireTask', 'vetAct'];

describe('InspectorService and the core Inspector', () => {
  it('share every method, with the same parameters and result types', () => {
    expect(noDrift).toBe(true);
    const service = new Set(methods(InspectorService));
    const missing = methods(Inspector).filter((m) => !service.has(m));
    expect(missing).toEqual(LEFT_OUT);
  });
});
