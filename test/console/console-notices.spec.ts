// What the console's page says after an act, and which listing it shows, in Chromium (trial 31): a
// pause of a queue or schedule someone else paused meanwhile says nothing changed (and the audit trail
// says so too); a selection act some of whose tasks are gone says which and why; a listing that
// answers after the operator has moved to another tab is not shown under that tab.
import type { Browser, Page, Request, Route } from 'playwright-core';
import { ChronosClient, InspectorService } from '../../lib/index.js';
import { haveChromium, launchChromium } from '../helpers/browser.js';
import { createChronosTestApp, type ChronosTestApp } from '../helpers/nest-app.js';
import { deferred, waitFor, type Deferred } from '../helpers/wait.js';
import { ConsoleJobs } from './console-app.js';

const run = haveChromium() ? describe : describe.skip;

run('the console says what an act did, and shows the listing asked for (trial 31)', () => {
  let app: ChronosTestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let inspector: InspectorService;
  let client: ChronosClient;
  const problems: string[] = [];
  /** While set, the page's overview poll waits for it: no poll re-reads what the page shows (the tick drives every read). */
  let pollGate: Deferred<void> | undefined;
  /** Resolved when a poll waits at the gate: none is on its way any more (the page polls one at a time). */
  let pollHeld: Deferred<void> | undefined;

  beforeAll(async () => {
    app = await createChronosTestApp({
      http: true,
      providers: [ConsoleJobs],
      options: { console: { path: '/chronos', actor: () => 'console:ada' } },
    });
    base = `${app.url}/chronos/`;
    inspector = app.get(InspectorService);
    client = app.get(ChronosClient);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 }, timezoneId: 'UTC' });
    page.on('pageerror', (e) => void problems.push(`page error: ${e.message}`));
    page.on('console', (m) => void (/Content Security Policy|Refused to/.test(m.text()) && problems.push(m.text())));
    page.on('dialog', (d) => void (d.type() === 'prompt' ? d.accept('') : d.accept()));
    await page.route(/\/api\/overview$/, async (route: Route) => {
      pollHeld?.resolve();
      await pollGate?.promise;
      await route.continue();
    });
  }, 60_000);

  afterAll(async () => {
    pollGate?.resolve();
    await browser?.close();
    await app?.close();
  });

  afterEach(() => {
    pollGate?.resolve();
    pollGate = undefined;
    expect(problems).toEqual([]);
  });

  /** Holds the page's polls (so that it shows what it read before), runs `fn`, then lets them go. */
  async function withoutPolls(fn: () => Promise<void>): Promise<void> {
    pollGate = deferred();
    pollHeld = deferred();
    await pollHeld.promise;
    try {
      await fn();
    } finally {
      pollGate.resolve();
      pollGate = undefined;
    }
  }

  const notice = () => page.locator('[data-testid=notice]');

  test('pause of a queue another operator paused meanwhile: "nothing changed" on the page, done (0) "already paused" in the audit trail', async () => {
    await client.enqueue('mail.send', { to: 'a' }, { queue: 'mail' });
    await page.goto(base + '#/queues/mail/pending');
    const pause = page.getByRole('button', { name: 'Pause queue' });
    await pause.waitFor();
    await withoutPolls(async () => {
      expect(await inspector.pauseQueue('mail', { actor: 'cli:bob' })).toBe(true);
      await pause.click(); // the page still shows the queue running
      await notice().getByText('pause: nothing changed (it was so already)').waitFor();
      expect(await notice().getAttribute('class')).toBe('notice');
    });
    await page.getByRole('button', { name: 'Resume queue' }).waitFor(); // the next poll shows it paused
    const [entry] = (await inspector.audit({ action: 'queue.pause', actor: 'console:ada', limit: 1 })).entries;
    expect(entry).toMatchObject({ queue: 'mail', result: 'done', count: 0, detail: 'already paused' });
    await page.goto(base + '#/audit?actor=console%3Aada');
    await page.locator('[data-testid=audit-entry]').first().getByText('done (0)').waitFor();
    await inspector.resumeQueue('mail');
  });

  test('pause and resume of a schedule already so, from its page: "nothing changed", the first note kept', async () => {
    await page.goto(base + '#/schedules/console.nightly');
    const pause = page.locator('[data-testid=schedule-detail] [data-testid=pause]');
    await pause.waitFor();
    await withoutPolls(async () => {
      expect(await inspector.pauseSchedule('console.nightly', { note: 'disk swap', actor: 'cli:bob' })).toBe(true);
      await pause.click();
      await notice().getByText('pause console.nightly: nothing changed (it was so already)').waitFor();
    });
    await page.locator('[data-testid=schedule-detail] [data-testid=resume]').waitFor();
    await page.getByText('“disk swap” by cli:bob').waitFor(); // bob's note stays
    const resume = page.locator('[data-testid=schedule-detail] [data-testid=resume]');
    await withoutPolls(async () => {
      expect(await inspector.resumeSchedule('console.nightly', { actor: 'cli:bob' })).toBe(true);
      await resume.click();
      await notice().getByText('resume console.nightly: nothing changed (it was so already)').waitFor();
    });
    const entries = (await inspector.audit({ schedule: 'console.nightly', actor: 'console:ada', limit: 2 })).entries;
    expect(entries.map((e) => [e.action, e.count, e.detail])).toEqual([
      ['schedule.resume', 0, 'not paused'],
      ['schedule.pause', 0, 'already paused'],
    ]);
  });

  test('a selection act one of whose tasks someone else deleted meanwhile says which was skipped and why', async () => {
    const ids: string[] = [];
    for (const n of [1, 2]) ids.push((await client.enqueue('flaky', { error: `dies ${n}` }, { maxRetry: 0 })).id);
    await waitFor(
      async () => (await Promise.all(ids.map((id) => inspector.findTask(id)))).every((t) => t?.state === 'dead'),
      'both to die',
    );
    await page.goto(base + '#/queues/default/dead');
    for (const id of ids) await page.locator(`tr[data-task="${id}"] input[type=checkbox]`).check();
    await withoutPolls(async () => {
      await inspector.deleteTask('default', ids[0], { actor: 'cli:bob' });
      await page.locator('[data-testid=selected-retry]').click();
      const text = await notice()
        .getByText(/^retry 2 selected: /)
        .textContent();
      expect(text).toMatch(new RegExp(`^retry 2 selected: done \\(1 task\\); 1 skipped \\(${ids[0]}: Task ${ids[0]} not found`));
      expect(await notice().getAttribute('class')).toBe('notice');
    });
    // every one gone: an error, not "done (0 tasks)"
    const gone: string[] = [];
    for (const n of [3, 4]) gone.push((await client.enqueue('flaky', { error: `dies ${n}` }, { maxRetry: 0 })).id);
    await waitFor(
      async () => (await Promise.all(gone.map((id) => inspector.findTask(id)))).every((t) => t?.state === 'dead'),
      'both to die',
    );
    for (const id of gone) await page.locator(`tr[data-task="${id}"] input[type=checkbox]`).check();
    await withoutPolls(async () => {
      for (const id of gone) await inspector.deleteTask('default', id, { actor: 'cli:bob' });
      const before = await notice().textContent();
      await page.locator('[data-testid=selected-retry]').click();
      const text = await waitFor(async () => {
        const now = await notice().textContent();
        return now !== before && now;
      }, 'the notice of the second act');
      expect(text).toMatch(new RegExp(`^retry 2 selected: done \\(0 tasks\\); 2 skipped \\(${gone[0]}: Task ${gone[0]} not found`));
      expect(await notice().getAttribute('class')).toBe('notice error');
    });
  });

  test('a listing that answers after the operator moved to another tab is not shown under it', async () => {
    for (let i = 0; i < 2; i++) await client.enqueue('mail.send', { to: `pending-${i}` }, { queue: 'mail' });
    for (let i = 0; i < 2; i++) await client.enqueue('mail.send', { to: `scheduled-${i}` }, { queue: 'mail', delay: 3_600_000 });
    const payloads = () => page.locator('tr[data-task] code.payload').allTextContents();
    await page.goto(base + '#/queues/mail/pending');
    await waitFor(async () => (await payloads()).some((p) => p.includes('pending-')), 'the pending listing');
    // the next pending listing (the poll's) is held: a slow link, a page of big payloads
    const held = deferred<Request>();
    const release = deferred<void>();
    await page.route(/\/api\/queues\/mail\/tasks\?state=pending/, async (route: Route) => {
      const res = await route.fetch();
      held.resolve(route.request());
      await release.promise;
      await route.fulfill({ response: res });
    });
    const late = await held.promise;
    await page.locator('[data-testid=tab-scheduled]').click();
    await waitFor(async () => (await payloads()).some((p) => p.includes('scheduled-')), 'the scheduled listing');
    // from here on, every listing drawn is noted
    // (in the page: the test's tsconfig has no DOM types)
    await page.evaluate(`window.drawn = [];
      new MutationObserver(() => window.drawn.push(...[...document.querySelectorAll('tr[data-task] code.payload')].map((e) => e.textContent)))
        .observe(document.querySelector('main'), { subtree: true, childList: true, characterData: true });`);
    const finished = page.waitForEvent('requestfinished', (r) => r === late);
    release.resolve();
    await finished;
    // the poll after it: its listing drawn, the late one would have been drawn before it
    await page.waitForResponse((r) => r.url().includes('/api/queues/mail/tasks?state=scheduled'));
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    const drawn = (await page.evaluate('window.drawn')) as string[];
    expect(drawn.filter((p) => p.includes('pending-'))).toEqual([]);
    expect((await payloads()).every((p) => p.includes('scheduled-'))).toBe(true);
    await page.unroute(/\/api\/queues\/mail\/tasks\?state=pending/);
  });

  test('a listing read slower than the polling is not asked again while it is on its way: one more once it ends', async () => {
    await client.enqueue('mail.send', { to: 'slow' }, { queue: 'mail' });
    await page.goto(base + '#/queues/mail/pending');
    await page.locator('tr[data-task]').first().waitFor();
    const asked: Request[] = [];
    const release = deferred<void>();
    const first = deferred<void>();
    const pending = /\/api\/queues\/mail\/tasks\?state=pending/;
    await page.route(pending, async (route: Route) => {
      asked.push(route.request());
      first.resolve();
      await release.promise; // a slow link: the read takes longer than the polling
      await route.continue();
    });
    await first.promise;
    // two more polls (each would read the listing again) while the first read is on its way
    for (let i = 0; i < 2; i++) await page.waitForResponse((r) => /\/api\/overview$/.test(r.url()));
    expect(asked).toHaveLength(1);
    const again = page.waitForRequest(pending);
    release.resolve();
    await again; // the polls asked for a newer one: read once the slow one ended
    expect(asked.length).toBeLessThanOrEqual(2);
    await page.unroute(pending);
  });

  test('a link whose hash has a malformed %-escape opens the page, with what the API says of the name (not a blank page)', async () => {
    for (const [hash, said] of [
      ['#/queues/mail%ZZ/pending', /^Invalid queue name[\s\S]*got "mail%ZZ"/],
      ['#/schedules/nightly%E0%A4%A', /^Invalid schedule "nightly%E0%A4%A"/],
    ] as const) {
      await page.goto('about:blank');
      await page.goto(base + hash); // a fresh load: the route is read as the page starts
      await page.locator('main').getByText(said).first().waitFor();
    }
  });

  test('the task listing reads 120 characters of each payload, not the payloads (a page of big ones)', async () => {
    for (let i = 0; i < 3; i++) await client.enqueue('report.build', { n: i, blob: 'x'.repeat(400_000) }, { queue: 'reports' });
    const read = page.waitForResponse((r) => r.url().includes('/api/queues/reports/tasks?state=pending'));
    await page.goto(base + '#/queues/reports/pending');
    expect((await (await read).body()).length).toBeLessThan(3 * 2_000);
    await page.locator('tr[data-task]').nth(2).waitFor();
    const shown = await page.locator('tr[data-task] code.payload').allTextContents();
    expect(shown.map((p) => [p.length, p.endsWith('…')])).toEqual(Array(3).fill([121, true]));
    expect(await page.locator('tr[data-task] code.payload').first().getAttribute('title')).toMatch(/^4000\d\d bytes$/);
  });
});
