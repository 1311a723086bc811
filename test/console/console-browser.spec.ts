// The web console in a real browser (Debian's Chromium via playwright-core) against a real Nest app on
// loopback: a schedule seen to fire, a dead task retried, a schedule paused and triggered, search by id,
// hostile payloads shown as text, a cross-site POST refused, read-only hiding the acts.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Dialog, Page } from 'playwright-core';
import { startConsoleServer, type ConsoleServer } from '../../lib/console/server.js';
import { ChronosClient, InspectorService } from '../../lib/index.js';
import { ARTIFACTS, haveChromium, launchChromium } from '../helpers/browser.js';
import { createChronosTestApp, type ChronosTestApp } from '../helpers/nest-app.js';
import { waitFor } from '../helpers/wait.js';
import { ConsoleJobs } from './console-app.js';

const XSS_IMG = '<img src=x onerror=alert(1)>';
const XSS_SCRIPT = '</script><script>alert(1)</script>';
const run = haveChromium() ? describe : describe.skip;

run('the console in Chromium', () => {
  let app: ChronosTestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let jobs: ConsoleJobs;
  let inspector: InspectorService;
  const dialogs: { type: string; message: string }[] = [];

  beforeAll(async () => {
    app = await createChronosTestApp({ http: true, providers: [ConsoleJobs], options: { console: { path: '/chronos' } } });
    base = `${app.url}/chronos/`;
    jobs = app.get(ConsoleJobs);
    inspector = app.get(InspectorService);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 }, timezoneId: 'UTC' });
    // what went wrong in the page, said in the test output
    page.on('pageerror', (e) => void process.stderr.write(`page error: ${e.message}\n`));
    page.on(
      'response',
      (r) => void (r.status() >= 400 && !r.url().endsWith('favicon.ico') && process.stderr.write(`page got ${r.status()} ${r.url()}\n`)),
    );
    page.on('dialog', (d: Dialog) => {
      dialogs.push({ type: d.type(), message: d.message() });
      if (d.type() === 'prompt') void d.accept('disk maintenance');
      else void d.accept();
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  afterEach(() => {
    // no alert() ever ran: the hostile payloads were text, not markup
    expect(dialogs.filter((d) => d.type === 'alert')).toEqual([]);
  });

  test('the page loads with no network beyond the app, and a schedule is seen to fire', async () => {
    const foreign: string[] = [];
    page.on('request', (r) => void (r.url().startsWith(app.url!) || foreign.push(r.url())));
    const res = await page.goto(base);
    expect(res!.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.locator('[data-testid=overview]').waitFor();
    await page
      .locator('[data-testid=leader]')
      .getByText(/term \d+/)
      .waitFor({ timeout: 15_000 });
    await page.goto(base + '#/schedules');
    const tick = page.locator('tr[data-schedule="console.tick"]');
    await tick.waitFor();
    // the auto-refresh shows a fire: "last fired" goes from "-" to a time
    const lastFired = () => tick.locator('[data-testid=last-fired]').textContent();
    const first = await lastFired();
    await waitFor(
      async () => {
        const now = await lastFired();
        return now !== first && now !== '-';
      },
      'the page to show a new fire of console.tick',
      15_000,
    );
    expect(jobs.ticks).toBeGreaterThan(0);
    const nightly = page.locator('tr[data-schedule="console.nightly"]');
    expect(await nightly.locator('[data-testid=spec-words]').textContent()).toBe('At 03:00, every day, Europe/Budapest');
    // issue 24: the next runs name the schedule's zone beside the browser's local time (this browser: UTC)
    expect(await nightly.locator('[data-testid=zone-time]').first().textContent()).toMatch(/· \w+ \d+ 03:00 Europe\/Budapest$/);
    await page.screenshot({ path: ARTIFACTS + 'console-schedules.png', fullPage: true });
    await page.goto(base + '#/');
    await page.locator('tr[data-queue="default"]').waitFor();
    await page.screenshot({ path: ARTIFACTS + 'console-overview.png', fullPage: true });
    expect(foreign).toEqual([]);
    // issue 24: at 420 px wide no page is wider than the screen (tables scroll inside themselves)
    const narrow = await browser.newPage({ viewport: { width: 420, height: 800 }, timezoneId: 'UTC' });
    try {
      for (const [hash, ready] of [
        ['#/', 'tr[data-queue="default"]'],
        ['#/schedules', 'tr[data-schedule="console.nightly"]'],
      ]) {
        await narrow.goto(base + hash);
        await narrow.locator(ready).waitFor();
        expect([hash, await narrow.evaluate('document.documentElement.scrollWidth')]).toEqual([hash, 420]);
      }
      await narrow.screenshot({ path: ARTIFACTS + 'console-narrow.png', fullPage: true });
    } finally {
      await narrow.close();
    }
  });

  test('a dead task is retried from the page and runs', async () => {
    const client = app.get(ChronosClient);
    const { id } = await client.enqueue('flaky', { error: 'payment gateway timeout' }, { maxRetry: 0 });
    await waitFor(async () => (await inspector.findTask(id))?.state === 'dead', `task ${id} to be dead`);
    await page.goto(base + '#/queues/default/dead');
    const row = page.locator(`tr[data-task="${id}"]`);
    await row.waitFor();
    await page.locator('[data-testid=dead-groups]').getByText('payment gateway timeout').waitFor();
    await page.screenshot({ path: ARTIFACTS + 'console-tasks.png', fullPage: true });
    jobs.failing = false;
    await row.locator('[data-testid=act-retry]').click();
    await page
      .locator('[data-testid=notice]')
      .getByText(/retry .*done \(1 task\)/)
      .waitFor();
    await waitFor(() => jobs.flakyRuns.includes(id), `task ${id} to run after the retry`);
    jobs.failing = true;
  });

  test('a schedule is paused with a note and seen paused; trigger now runs its task', async () => {
    await page.goto(base + '#/schedules');
    const row = page.locator('tr[data-schedule="console.nightly"]');
    await row.locator('[data-testid=pause]').click();
    await row.locator('[data-testid=paused]').waitFor();
    await row.locator('[data-testid=pause-note]').getByText('disk maintenance').waitFor();
    expect((await inspector.schedule('console.nightly')).paused).toBe(true);
    // issue 24: a paused schedule shows no next runs
    expect(await row.locator('[data-testid=next-runs]').textContent()).toMatch(/^\s*none: paused\s*$/);
    const before = jobs.nightlyRuns.length;
    await row.locator('[data-testid=trigger]').click();
    await waitFor(() => jobs.nightlyRuns.length > before, 'the triggered nightly task to run');
    await row.locator('[data-testid=resume]').click();
    await waitFor(async () => !(await inspector.schedule('console.nightly')).paused, 'the schedule to be resumed');
    await row.locator('[data-testid=next-runs] div').first().waitFor(); // its next runs are back
  });

  test('search finds a task by id; hostile payloads and errors render as text, with no dialog', async () => {
    const client = app.get(ChronosClient);
    const { id } = await client.enqueue('flaky', { html: XSS_IMG, script: XSS_SCRIPT, error: XSS_IMG + ' ' + XSS_SCRIPT }, { maxRetry: 0 });
    await waitFor(async () => (await inspector.findTask(id))?.state === 'dead', `task ${id} to be dead`);
    await page.goto(base + '#/queues/default/dead');
    await page.locator(`tr[data-task="${id}"]`).waitFor();
    await page.locator('[data-testid=search]').fill(id);
    await page.locator('[data-testid=search]').press('Enter');
    await page.locator('[data-testid=task-detail]').getByText(id).first().waitFor();
    const payload = (await page.locator('[data-testid=payload]').textContent())!;
    expect(payload).toContain(XSS_IMG);
    expect(payload).toContain(XSS_SCRIPT);
    expect(await page.locator('[data-testid=error]').textContent()).toContain(XSS_IMG + ' ' + XSS_SCRIPT);
    expect(await page.locator('main img, main script').count()).toBe(0);
  });

  test("a queue's limits are set from its page; a queue held back by one shows limited", async () => {
    let release!: () => void;
    jobs.held = new Promise((r) => (release = r));
    const client = app.get(ChronosClient);
    await page.goto(base + '#/queues/default/pending');
    await page.locator('[data-testid=limits]').getByText('none').waitFor();
    await page.locator('[data-testid=edit-limits]').click();
    await page.locator('[data-testid=limit-concurrency]').fill('1');
    await page.locator('[data-testid=limit-groupRate]').fill('10/1000');
    await page.locator('[data-testid=save-limits]').click();
    await page
      .locator('[data-testid=notice]')
      .getByText(/set limits/)
      .waitFor();
    expect(await inspector.queueLimits('default')).toEqual({ concurrency: 1, groupRate: { max: 10, duration: 1000 } });
    // audited from the console, as a pause is (trial 9: the app's origin)
    const [entry] = (await inspector.audit({ action: 'queue.limits', limit: 1 })).entries;
    expect(entry).toMatchObject({ action: 'queue.limits', origin: expect.stringMatching(/^console /) });
    await client.enqueueBulk(
      Array.from({ length: 3 }, (_, i) => ({ type: 'hold', payload: { i }, options: { group: i < 2 ? 'acme' : 'globex' } })),
    );
    // the worker runs one hold task (the slot), the others wait: the overview shows the queue limited
    await waitFor(async () => (await inspector.queue('default')).limitedBy === 'concurrency', 'the queue to be limited', 15_000);
    await page.goto(base + '#/');
    await page.locator('tr[data-queue="default"] [data-testid=limited]').waitFor({ timeout: 15_000 });
    await page.goto(base + '#/queues/default/pending');
    await page
      .locator('[data-testid=limits]')
      .getByText(/concurrency 1 \(1 taken\)/)
      .waitFor();
    await page
      .locator('[data-testid=groups]')
      .getByText(/2 tasks/)
      .waitFor();
    release();
    await inspector.setQueueLimits('default', { concurrency: null, groupRate: null });
    await waitFor(async () => (await inspector.queue('default')).pending === 0, 'the held tasks to run');
  });

  test('a cross-site POST from another origin is refused', async () => {
    const target = `${base}api/schedules/console.nightly/pause`;
    const evil: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><body><script>
        fetch(${JSON.stringify(target)}, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' },
          body: '{"note":"evil"}' }).finally(() => {
          const f = document.createElement('form'); f.method = 'POST'; f.action = ${JSON.stringify(target)};
          document.body.append(f); f.submit();
        });
      </script></body>`);
    });
    await new Promise<void>((r) => evil.listen(0, 'localhost', () => r()));
    try {
      const other = await browser.newPage();
      // the fetch's answer is withheld from the page (Cross-Origin-Resource-Policy), the form post's is a 403
      const answers: (number | string)[] = [];
      other.on('response', (r) => void (r.url() === target && answers.push(r.status())));
      other.on('requestfailed', (r) => void (r.url() === target && answers.push(r.failure()?.errorText ?? 'failed')));
      await other.goto(`http://localhost:${(evil.address() as AddressInfo).port}/`);
      await waitFor(() => answers.length >= 2, 'the cross-site fetch and form post to be answered');
      expect(answers).toContain(403);
      expect(answers.every((a) => a === 403 || String(a).includes('BLOCKED'))).toBe(true);
      await other.close();
    } finally {
      evil.close();
    }
    expect((await inspector.schedule('console.nightly')).paused).toBe(false);
  });

  test('read-only: the page shows no acts, and the server refuses them', async () => {
    let ro: ConsoleServer | undefined;
    try {
      ro = await startConsoleServer({ inspector: inspector.inspector, port: 0, readOnly: true, warn: () => {} });
      await page.goto(ro.url + '#/schedules');
      await page.locator('tr[data-schedule="console.nightly"]').waitFor();
      expect(await page.locator('[data-testid=namespace]').textContent()).toContain('read-only');
      expect(await page.locator('button[data-testid=pause], button[data-testid=trigger]').count()).toBe(0);
      const status = await page.evaluate(async () => {
        const r = await fetch('api/schedules/console.nightly/pause', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        });
        return r.status;
      });
      expect(status).toBe(405);
      expect((await inspector.schedule('console.nightly')).paused).toBe(false);
    } finally {
      await ro?.close();
    }
  });
});
