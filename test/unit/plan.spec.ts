import type { StoredSchedule } from '../../lib/core/scheduler/definition.js';
import {
  effectiveWindowMs,
  isPlanned,
  LATE_TOLERANCE_MS,
  plan,
  wakeAt,
  type PlanInput,
  type PlanState,
} from '../../lib/core/scheduler/plan.js';
import { everySpec, parseSpec } from '../../lib/core/scheduler/spec.js';

/** Unit tests of the pure plan(): which triggers a leader enqueues at one tick. Fixed instants, no Redis. */

const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
/** A whole minute (2024-03-01T12:00:00Z): the minute triggers below are T0 + k minutes. */
const T0 = Date.parse('2024-03-01T12:00:00Z');

type Policy = Pick<StoredSchedule, 'catchUp' | 'catchUpWindowMs' | 'catchUpCap' | 'overlap' | 'changedAt' | 'resumedAt'>;
const DEFAULT_POLICY: Policy = { catchUp: 'all', catchUpWindowMs: HOUR, catchUpCap: 100, overlap: 'allow' };

/** A per-minute schedule's plan input, last fired at T0, planned at `now`. */
function input(now: number, over: Partial<Policy> = {}, rest: Partial<Omit<PlanInput, 'stored'>> = {}): PlanInput {
  return {
    stored: { ...DEFAULT_POLICY, ...over },
    spec: everySpec('1m'),
    lastFired: T0,
    now,
    leadMs: 0,
    leaderSince: T0 - HOUR, // leading since long before, unless a test says otherwise
    ...rest,
  };
}

const minutes = (...ks: number[]): number[] => ks.map((k) => T0 + k * MIN);
const at = (p: ReturnType<typeof plan>): number[] => p.triggers.map((t) => t.triggerAt);

describe('plan(): a leader that keeps up', () => {
  it('plans the trigger that came due since lastFired', () => {
    const p = plan(input(T0 + MIN + 50));
    expect(p.triggers).toEqual([{ triggerAt: T0 + MIN, mode: 'a' }]);
    expect(p).toMatchObject({ lastFired: T0, skipped: 0, advanceTo: undefined, catchingUp: undefined });
  });

  it('plans nothing when no trigger came due (and lastFired stays)', () => {
    const p = plan(input(T0 + 30 * SEC));
    expect(p.triggers).toEqual([]);
    expect(p).toMatchObject({ lastFired: T0, skipped: 0, advanceTo: undefined });
  });

  it('plans the triggers within the lead ahead of their instant', () => {
    // 0.5 s before the minute with a 1 s lead: the trigger at T0+1min is enqueued early
    expect(at(plan(input(T0 + MIN - 500, {}, { leadMs: SEC })))).toEqual(minutes(1));
    // a 2 s period, lead 1 s: the due trigger and the next one within the lead
    const p = plan(input(T0 + 3200, {}, { spec: everySpec('2s'), leadMs: SEC }));
    expect(at(p)).toEqual([T0 + 2 * SEC, T0 + 4 * SEC]);
    expect(p.skipped).toBe(0);
  });

  it("marks overlap 'skip' triggers with mode 's'", () => {
    expect(plan(input(T0 + MIN, { overlap: 'skip' })).triggers).toEqual([{ triggerAt: T0 + MIN, mode: 's' }]);
    expect(plan(input(T0 + MIN, { overlap: 'buffer-one' })).triggers).toEqual([{ triggerAt: T0 + MIN, mode: 'b' }]);
    expect(plan(input(T0 + MIN, { overlap: 'cancel-previous' })).triggers).toEqual([{ triggerAt: T0 + MIN, mode: 'c' }]);
  });

  it('plans cron triggers the same way', () => {
    const p = plan(input(T0 + 3 * MIN + 10, {}, { spec: parseSpec('*/2 * * * *', { timeZone: 'Europe/Budapest' }) }));
    expect(at(p)).toEqual(minutes(2));
  });
});

describe('plan(): a gap on acquisition (the first tick of a leadership)', () => {
  // nobody led for 5 minutes: the triggers at T0+1..5 min came due; the leadership began just now
  const now = T0 + 5 * MIN + 100;
  const first = { leaderSince: now };

  it("catchUp 'all' fires every missed trigger and reports the catch-up", () => {
    const p = plan(input(now, { catchUp: 'all' }, first));
    expect(at(p)).toEqual(minutes(1, 2, 3, 4, 5));
    expect(p.skipped).toBe(0);
    expect(p.catchingUp).toEqual({ count: 5, kept: 5, oldestLateMs: 4 * MIN + 100 });
  });

  it("catchUp 'latest' fires only the newest and counts the others skipped", () => {
    const p = plan(input(now, { catchUp: 'latest' }, first));
    expect(at(p)).toEqual(minutes(5));
    expect(p).toMatchObject({ skipped: 4, skippedAt: T0 + 5 * MIN, advanceTo: undefined });
    expect(p.catchingUp).toEqual({ count: 5, kept: 1, oldestLateMs: 4 * MIN + 100 });
  });

  it("catchUp 'none' fires nothing and advances lastFired past the missed triggers", () => {
    const p = plan(input(now, { catchUp: 'none' }, first));
    expect(p.triggers).toEqual([]);
    expect(p).toMatchObject({ advanceTo: T0 + 5 * MIN, skipped: 5, skippedAt: T0 + 5 * MIN });
  });

  it("catchUp 'none' with a trigger within the lead fires that one instead of advancing", () => {
    const p = plan(input(T0 + 5 * MIN + 59_500, { catchUp: 'none' }, { leaderSince: T0 + 5 * MIN + 59_500, leadMs: SEC }));
    expect(at(p)).toEqual(minutes(6));
    expect(p).toMatchObject({ advanceTo: undefined, skipped: 5, skippedAt: T0 + 6 * MIN });
  });

  it('does not report a catch-up for a trigger less than 1 s late', () => {
    const p = plan(input(T0 + MIN + 900, { catchUp: 'latest' }, { leaderSince: T0 + MIN + 900 }));
    expect(at(p)).toEqual(minutes(1));
    expect(p).toMatchObject({ skipped: 0, catchingUp: undefined });
  });
});

describe('plan(): window and cap', () => {
  it('skips and counts the triggers older than the window, and moves lastFired to its start', () => {
    // 3 h since lastFired, a 1 h window: the 120 triggers of the first 2 h are skipped
    const now = T0 + 3 * HOUR + 100;
    const p = plan(input(now, { catchUpWindowMs: HOUR }, { leaderSince: now }));
    expect(p.lastFired).toBe(now - HOUR);
    expect(p.skipped).toBe(120);
    expect(at(p)).toEqual(Array.from({ length: 60 }, (_, i) => T0 + 2 * HOUR + (i + 1) * MIN));
    expect(p.skippedAt).toBe(T0 + 2 * HOUR + MIN);
  });

  it('a window under the late tolerance acts as the tolerance: a trigger a few ms late is on time (trial 7: window 0 skipped 1 in 9)', () => {
    for (const catchUpWindowMs of [0, 500]) {
      const p = plan(input(T0 + MIN + 300, { catchUpWindowMs }));
      expect([at(p), p.skipped]).toEqual([minutes(1), 0]);
      expect(effectiveWindowMs(catchUpWindowMs)).toBe(LATE_TOLERANCE_MS);
    }
    // beyond the tolerance the window applies as given
    expect(plan(input(T0 + MIN + LATE_TOLERANCE_MS + 1, { catchUpWindowMs: 0 })).skipped).toBe(1);
    expect(effectiveWindowMs(5000)).toBe(5000);
  });

  it('applies the window at any tick, not only on acquisition', () => {
    const now = T0 + 3 * HOUR + 100;
    const p = plan(input(now, { catchUpWindowMs: HOUR }));
    expect(p.lastFired).toBe(now - HOUR);
    expect(p.skipped).toBe(120);
    expect(p.triggers).toHaveLength(60);
  });

  it('keeps the newest catchUpCap missed triggers and counts the older ones skipped', () => {
    const p = plan(input(T0 + 10 * MIN + 100, { catchUpCap: 3 }, { leaderSince: T0 + 10 * MIN + 100 }));
    expect(at(p)).toEqual(minutes(8, 9, 10));
    expect(p).toMatchObject({ skipped: 7, skippedAt: T0 + 8 * MIN });
  });

  it('counts window, cap and policy skips together', () => {
    const now = T0 + 2 * HOUR + 100;
    const p = plan(input(now, { catchUpWindowMs: HOUR, catchUpCap: 10, catchUp: 'latest' }, { leaderSince: now }));
    // 60 older than the window, 50 beyond the cap, 9 of the 10 kept dropped by 'latest'
    expect(p.skipped).toBe(60 + 50 + 9);
    expect(at(p)).toEqual(minutes(120));
  });
});

describe('plan(): a gap found outside acquisition (a stalled event loop, a slow Redis, a reload)', () => {
  // The catch-up policy decides about any gap, not only on acquisition: a leader that keeps leading
  // and finds triggers more than 1 s late treats them as missed.
  const now = T0 + 5 * MIN + 100;

  it("catchUp 'all' fires every missed trigger and reports the catch-up", () => {
    const p = plan(input(now, { catchUp: 'all' }));
    expect(at(p)).toEqual(minutes(1, 2, 3, 4, 5));
    expect(p).toMatchObject({ skipped: 0, advanceTo: undefined, catchingUp: { count: 4, oldestLateMs: 4 * MIN + 100 } });
  });

  it("catchUp 'latest' fires the newest: here the on-time trigger (100 ms late), not a missed one too", () => {
    const p = plan(input(now, { catchUp: 'latest' }));
    expect(at(p)).toEqual(minutes(5));
    expect(p).toMatchObject({ skipped: 4, skippedAt: T0 + 5 * MIN });
    // when every due trigger is missed, the newest of them
    const later = plan(input(T0 + 5 * MIN + 1500, { catchUp: 'latest' }));
    expect(at(later)).toEqual(minutes(5));
    expect(later.skipped).toBe(4);
  });

  it("catchUp 'none' skips the missed triggers and fires the on-time one", () => {
    const p = plan(input(now, { catchUp: 'none' }));
    expect(at(p)).toEqual(minutes(5));
    expect(p).toMatchObject({ skipped: 4, advanceTo: undefined });
    // nothing on time: lastFired advances past the skipped ones (persisted by fire.lua mode 'x')
    const late = plan(input(T0 + 5 * MIN + 1500, { catchUp: 'none' }));
    expect(late.triggers).toEqual([]);
    expect(late).toMatchObject({ skipped: 5, advanceTo: T0 + 5 * MIN });
  });

  it('a trigger up to 1 s late is on time, one more than 1 s late is missed (LATE_TOLERANCE_MS)', () => {
    expect(LATE_TOLERANCE_MS).toBe(1000);
    expect(at(plan(input(T0 + MIN + 1000, { catchUp: 'none' })))).toEqual(minutes(1));
    expect(plan(input(T0 + MIN + 1001, { catchUp: 'none' }))).toMatchObject({
      triggers: [],
      skipped: 1,
      advanceTo: T0 + MIN,
      advancedBy: 'catch-up',
    });
  });

  it('still applies the cap', () => {
    const p = plan(input(now, { catchUp: 'all', catchUpCap: 2 }));
    expect(at(p)).toEqual(minutes(4, 5));
    expect(p.skipped).toBe(3);
  });
});

describe('plan(): a pause skips its triggers; a changed spec is not backdated', () => {
  it('skips the triggers that came due while paused, whatever the policy, and reports them once; the next instant fires', () => {
    // paused after the trigger at T0, resumed at T0+5min+10s: minutes 1..5 came due while paused
    const resumedAt = T0 + 5 * MIN + 10 * SEC;
    for (const catchUp of ['all', 'latest', 'none'] as const) {
      const p = plan(input(resumedAt + 20, { catchUp, resumedAt }));
      expect(p).toMatchObject({ triggers: [], paused: { count: 5, newest: T0 + 5 * MIN }, skipped: 0, advanceTo: T0 + 5 * MIN });
      expect(p.advancedBy).toBe('pause'); // issue 24: recorded as skipped-paused, not skipped-catch-up
      expect(p.lastFired).toBe(resumedAt);
    }
    // at the next instant after the resume: it fires; the pause is not reported again once lastFired moved past it
    const next = plan(input(T0 + 6 * MIN + 5, { resumedAt }, { lastFired: T0 + 5 * MIN }));
    expect(next).toMatchObject({ triggers: [{ triggerAt: T0 + 6 * MIN, mode: 'a' }], paused: undefined, skipped: 0 });
  });

  it('a resume whose next instant is within the lead fires it and reports the pause', () => {
    const resumedAt = T0 + 5 * MIN + 59_500;
    const p = plan(input(resumedAt + 10, { resumedAt }, { leadMs: SEC }));
    expect(at(p)).toEqual(minutes(6));
    expect(p).toMatchObject({ paused: { count: 5, newest: T0 + 5 * MIN }, advanceTo: undefined });
    // recorded all the same, ahead of the trigger (trial 7: no skipped-paused record then)
    expect(p.skips).toEqual([{ at: T0 + 5 * MIN, by: 'pause', count: 5 }]);
  });

  it('a gap after the resume is a catch-up matter again', () => {
    const resumedAt = T0 + 2 * MIN + 30 * SEC;
    const p = plan(input(T0 + 5 * MIN + 100, { catchUp: 'latest', resumedAt }, { leaderSince: T0 + 5 * MIN + 100 }));
    expect(p).toMatchObject({ paused: { count: 2, newest: T0 + 2 * MIN }, skipped: 2 });
    expect(at(p)).toEqual(minutes(5));
    // one record per run of skips, ascending, each with its count: the pause's, then the policy's (minutes 3 and 4)
    expect(p.skips).toEqual([
      { at: T0 + 2 * MIN, by: 'pause', count: 2 },
      { at: T0 + 4 * MIN, by: 'catch-up', count: 2 },
    ]);
  });

  it('the skips of window, cap and policy are one catch-up record at the newest skipped trigger; nothing skipped, no record', () => {
    // lastFired T0, now T0+10min: window 5 min leaves minutes 1-4 out, cap 3 keeps 8, 9, 10 of 5-10 (5, 6, 7 out)
    const now = T0 + 10 * MIN + 100;
    const p = plan(input(now, { catchUpWindowMs: 5 * MIN + 50, catchUpCap: 3 }, { leaderSince: now }));
    expect(at(p)).toEqual(minutes(8, 9, 10));
    expect(p.skips).toEqual([{ at: T0 + 7 * MIN, by: 'catch-up', count: 7 }]);
    expect(plan(input(T0 + MIN + 50)).skips).toEqual([]);
    // nothing enqueued: the newest record is where lastFired goes (advanceTo)
    const none = plan(input(now, { catchUp: 'none' }, { leaderSince: now }));
    expect([at(none), none.advanceTo, none.skips]).toEqual([[], T0 + 10 * MIN, [{ at: T0 + 10 * MIN, by: 'catch-up', count: 10 }]]);
  });

  it('a new spec takes effect when stored (changedAt): none of its triggers before the change fires, nothing is reported', () => {
    // lastFired T0 (the old spec's last trigger); a per-second spec stored at T0+20.5 s, planned at T0+21.2 s
    const changedAt = T0 + 20_500;
    const p = plan(input(T0 + 21_200, { changedAt }, { spec: everySpec('1s'), leadMs: 500 }));
    expect(at(p)).toEqual([T0 + 21_000]);
    expect(p).toMatchObject({ skipped: 0, paused: undefined, catchingUp: undefined, lastFired: changedAt });
  });
});

describe('plan(): an orphaned span is skipped like a pause; nothing after liveUntil is planned', () => {
  it('skips the triggers after the orphaned-since instant up to when it is declared again, whatever the policy, and reports them', () => {
    // fired at T0, orphaned since T0+40 s, declared again at T0+5min+10s: minutes 1..5 came due while orphaned
    const orphaned = { since: T0 + 40 * SEC, until: T0 + 5 * MIN + 10 * SEC };
    for (const catchUp of ['all', 'latest', 'none'] as const) {
      const p = plan(input(orphaned.until + 20, { catchUp }, { orphaned }));
      expect(p).toMatchObject({ triggers: [], orphaned: { count: 5, newest: T0 + 5 * MIN }, skipped: 0, advanceTo: T0 + 5 * MIN });
      expect(p.lastFired).toBe(orphaned.until);
    }
    const next = plan(input(T0 + 6 * MIN + 5, {}, { lastFired: orphaned.until, orphaned }));
    expect(next).toMatchObject({ triggers: [{ triggerAt: T0 + 6 * MIN, mode: 'a' }], orphaned: undefined, skipped: 0 });
  });

  it('plans no trigger dated after liveUntil, due or within the lead', () => {
    const p = plan(input(T0 + 3 * MIN + 100, {}, { liveUntil: T0 + 2 * MIN, leadMs: SEC }));
    expect(at(p)).toEqual(minutes(1, 2));
    const lead = plan(input(T0 + MIN - 500, {}, { lastFired: T0, liveUntil: T0 + MIN - 1, leadMs: SEC }));
    expect(at(lead)).toEqual([]);
    expect(isPlanned({ stored: {}, live: true, next: T0 + MIN, leadMs: 0, liveUntil: T0 + MIN - 1 }, T0 + MIN)).toBe(false);
    expect(wakeAt({ stored: {}, live: true, next: T0 + MIN, leadMs: 0, liveUntil: T0 + MIN - 1 })).toBe(Infinity);
    expect(wakeAt({ stored: {}, live: true, next: T0 + MIN, leadMs: 0, liveUntil: T0 + MIN })).toBe(T0 + MIN);
  });
});

describe('isPlanned() and wakeAt(): which schedules a tick plans (pause is decided here, before plan())', () => {
  const now = T0 + MIN;
  const state = (over: Partial<Omit<PlanState, 'stored'>> = {}, paused?: boolean): PlanState => ({
    stored: { paused },
    live: true,
    next: T0 + MIN,
    leadMs: 0,
    ...over,
  });

  it('plans a live schedule whose next trigger is due', () => {
    expect(isPlanned(state(), now)).toBe(true);
    expect(isPlanned(state({}, false), now)).toBe(true);
    expect(wakeAt(state())).toBe(T0 + MIN);
  });

  it('does not plan a paused schedule, nor wake for it', () => {
    expect(isPlanned(state({}, true), now)).toBe(false);
    expect(isPlanned(state({ next: T0 }, true), now + HOUR)).toBe(false);
    expect(wakeAt(state({}, true))).toBe(Infinity);
  });

  it('does not plan an orphaned schedule (no live instance declares it), nor wake for it', () => {
    expect(isPlanned(state({ live: false }), now)).toBe(false);
    expect(wakeAt(state({ live: false }))).toBe(Infinity);
  });

  it('does not plan a schedule with no next trigger', () => {
    expect(isPlanned(state({ next: null }), now)).toBe(false);
    expect(wakeAt(state({ next: null }))).toBe(Infinity);
  });

  it('plans a schedule whose next trigger is within its lead, not one beyond it', () => {
    expect(isPlanned(state({ next: now + 500, leadMs: SEC }), now)).toBe(true);
    expect(isPlanned(state({ next: now + SEC, leadMs: SEC }), now)).toBe(true);
    expect(isPlanned(state({ next: now + SEC + 1, leadMs: SEC }), now)).toBe(false);
    expect(wakeAt(state({ next: now + 500, leadMs: SEC }))).toBe(now - 500);
  });
});
