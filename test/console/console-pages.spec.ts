// Issue 24: every page of the console in Chromium, with the charts (uPlot, vendored) drawn under the
// strict CSP, the schedules' sparklines, a silent schedule flagged on the overview, the audit trail,
// and a role that may read but not act. Screenshots go to test/artifacts/, and to docs/images/ with
// UPDATE_SCREENSHOTS=1 (the README and docs/console.md show them).
import { mkdirSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { QueueSampler } from '../../lib/core/observability/queue-sampler.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { fireScript } from '../../lib/core/redis/commands/schedule.js';
import { FIRE_MODE } from '../../lib/core/redis/protocol.js';
import { ChronosClient, InspectorService } from '../../lib/index.js';
import { ARTIFACTS, haveChromium, launchChromium } from '../helpers/browser.js';
import { createChronosTestApp, type ChronosTestApp } from '../helpers/nest-app.js';
import { waitFor } from '../helpers/wait.js';
import { ConsoleJobs } from './console-app.js';

const run = haveChromium() ? describe : describe.skip;
const DOCS = fileURLToPath(new URL('../../docs/images/', import.meta.url));

run('every console page in Chromium (issue 24)', () => {
  let app: ChronosTestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let inspector: InspectorService;
  const violations: string[] = [];

  /** Saves a screenshot of the page as `name`.png (test/artifacts/, and docs/images/ with UPDATE_SCREENSHOTS=1). */
  async function shot(p: Page, name: string): Promise<void> {
    await p.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      mkdirSync(DOCS, { recursive: true });
      await p.screenshot({ path: `${DOCS}${name}.png`, fullPage: true });
    }
  }

  beforeAll(async () => {
    app = await createChronosTestApp({
      http: true,
      providers: [ConsoleJobs],
      options: {
        console: {
          path: '/chronos',
          // roles: a viewer may read only; a retrier may read and retry dead tasks; anyone else may do everything
          authorize: (req: IncomingMessage, act: string) => {
            const role = req.headers['x-role'];
            if (role === 'viewer') return act === 'read';
            if (role === 'retrier') return act === 'read' || act === 'dead.retry';
            return true;
          },
          actor: (req: IncomingMessage) => `console:${String(req.headers['x-user'] ?? 'ada')}`,
        },
      },
    });
    base = `${app.url}/chronos/`;
    inspector = app.get(InspectorService);
    const client = app.get(ChronosClient);
    // traffic for the charts: tasks that fail and die, tasks that succeed, a sample of the depth
    for (let i = 0; i < 4; i++) await client.enqueue('flaky', { error: `boom ${i % 2}` }, { maxRetry: 0 });
    await waitFor(async () => (await inspector.queue('default')).dead >= 4, 'the flaky tasks to die');
    app.get(ConsoleJobs).failing = false;
    for (let i = 0; i < 6; i++) await client.enqueue('flaky', {});
    await waitFor(async () => (await inspector.queue('default')).processedToday >= 6, 'the good tasks to run');
    await client.enqueue('nobody-handles-this', { n: 1 }, { queue: 'reports' });
    await new QueueSampler(inspector.inspector.redis, [{ keys: new QueueKeys(inspector.inspector.namespace, 'reports') }]).sample();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 }, timezoneId: 'UTC' });
    page.on('console', (m) => void (/Content Security Policy|Refused to/.test(m.text()) && violations.push(m.text())));
    page.on('pageerror', (e) => void violations.push(`page error: ${e.message}`));
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  afterEach(() => expect(violations).toEqual([]));

  test('overview: throughput and depth/latency charts drawn by uPlot (canvas), the last hour and the last day', async () => {
    await page.goto(base);
    const history = page.locator('[data-testid=history]');
    await history.locator('[data-testid=chart-throughput] canvas').first().waitFor();
    await history.locator('[data-testid=chart-depth] canvas').first().waitFor();
    // the trigger tasks of console.tick (every second) are processed too: at least the 6 tasks that ran
    const summary = async () =>
      /^(\d+) processed · (\d+) failed/.exec((await history.locator('[data-testid=history-summary]').textContent()) ?? '');
    await waitFor(async () => Number((await summary())?.[1]) >= 6 && (await summary())?.[2] === '4', 'the summary');
    expect(await history.locator('[data-testid=chart-throughput]').getAttribute('aria-label')).toMatch(
      /last hour, per minute: \d+ processed, 4 failed/,
    );
    expect(await history.locator('[data-testid=chart-depth]').getAttribute('aria-label')).toMatch(/depth up to 1/);
    await shot(page, 'console-overview');
    await history.locator('[data-testid=window-day]').click();
    await history.getByText('All queues · last 24 hours, per hour').waitFor();
    await waitFor(async () => (await summary())?.[2] === '4', 'the day');
  });

  test('tasks: a queue page has its own charts; the dead tasks page groups them by error', async () => {
    await page.goto(base + '#/queues/default/dead');
    const h = page.locator('[data-testid=queue-history]');
    await h.getByText('Queue default · last hour, per minute').waitFor();
    await h.locator('[data-testid=chart-throughput] canvas').first().waitFor();
    await page.locator('[data-testid=dead-groups]').getByText('boom 0').waitFor();
    await shot(page, 'console-tasks');
    const id = (await inspector.tasks('default', 'dead'))[0].id;
    await page.goto(base + `#/tasks/${encodeURIComponent(id)}`);
    await page.getByText(id).first().waitFor();
    await shot(page, 'console-task');
  });

  test('schedules: each row has a sparkline of its recent fires and its fires vs expected', async () => {
    await page.goto(base + '#/schedules');
    const tick = page.locator('tr[data-schedule="console.tick"]');
    await waitFor(
      async () => (await tick.locator('[data-testid=sparkline] rect').count()) >= 2,
      'fires of console.tick in its sparkline',
      20_000,
    );
    expect(await tick.locator('[data-testid=sparkline]').getAttribute('aria-label')).toMatch(/^last \d+ fires: \d+ on time/);
    expect(await tick.locator('[data-testid=fired-hour]').textContent()).toMatch(/1 h: ≈?\d+ of \d+/);
    await shot(page, 'console-schedules');
    await page.goto(base + '#/schedules/console.tick');
    await page.locator('[data-testid=schedule-detail] [data-testid=sparkline]').waitFor();
    await shot(page, 'console-schedule');
  });

  test('schedule page: the overlap policy, and the trigger a buffer-one schedule keeps waiting behind its live task', async () => {
    await inspector.inspector.addSchedule({ name: 'console.buf', spec: '@every 1h', queue: 'unserved', overlap: 'buffer-one' });
    // its live task and the trigger buffered behind it, as fire.lua leaves them (no worker serves the queue)
    const keys = new QueueKeys(inspector.inspector.namespace, 'unserved');
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 7_200_000;
    const trigger = (at: number) => {
      const meta = { r: 0, m: 25, e: at, s: 'console.buf', tr: at, o: 1, om: 'b' };
      return {
        schedule: 'console.buf',
        triggerAt: at,
        type: 'console.buf',
        payload: 'null',
        meta: JSON.stringify(meta),
        dedupTtlMs: 7_200_000,
        mode: FIRE_MODE.bufferOne,
        generation: 0,
      };
    };
    expect((await fireScript(inspector.inspector.redis, keys, undefined, 0, [trigger(hour), trigger(hour + 3_600_000)])).results).toEqual([
      'enqueued',
      'buffered',
    ]);
    await page.goto(base + '#/schedules/console.buf');
    const detail = page.locator('[data-testid=schedule-detail]');
    await detail.getByText('buffer-one').waitFor();
    expect(await detail.textContent()).toContain(`console.buf:${hour / 1000 + 3600} (trigger `);
    expect(await detail.textContent()).toContain(`waiting behind console.buf:${hour / 1000}`);
    await inspector.removeSchedule('console.buf');
  });

  test('audit: an act done from the page is in the trail, with the console actor and the client address', async () => {
    await page.goto(base + '#/queues/reports/pending');
    await page.getByRole('button', { name: 'Pause queue' }).click();
    await page.getByRole('button', { name: 'Resume queue' }).waitFor();
    await page.goto(base + '#/audit');
    const row = page.locator('[data-testid=audit-entry]').first();
    await row.getByText('queue.pause').waitFor();
    expect(await row.textContent()).toMatch(/console:ada.*queue\.pause.*queue reports.*done \(1\).*console (::ffff:)?127\.0\.0\.1/);
    await shot(page, 'console-audit');
    await inspector.resumeQueue('reports');
  });

  test('roles: the page hides what the caller may not do, and the server refuses it anyway', async () => {
    for (const role of ['retrier', 'viewer']) {
      const ctx = await browser.newContext({
        viewport: { width: 1400, height: 900 },
        timezoneId: 'UTC',
        extraHTTPHeaders: { 'x-role': role },
      });
      const p = await ctx.newPage();
      p.on('console', (m) => void (/Content Security Policy|Refused to/.test(m.text()) && violations.push(m.text())));
      await p.goto(base + '#/queues/default/dead');
      await p.locator('[data-testid=task-table] tbody tr').first().waitFor();
      await p.locator('[data-testid=queue-history]').waitFor();
      const buttons = await p.locator('[data-testid=tasks] button:visible').allTextContents();
      if (role === 'retrier') {
        expect(buttons.some((b) => /^retry/.test(b.trim()))).toBe(true);
        expect(buttons.some((b) => /delete|Pause queue/.test(b))).toBe(false);
      } else {
        expect(buttons.filter((b) => /retry|delete|Pause queue/.test(b))).toEqual([]);
        expect(await p.locator('[data-testid=namespace]').textContent()).toMatch(/view only/);
        await shot(p, 'console-view-only');
      }
      await p.goto(base + '#/schedules');
      await p.locator('tr[data-schedule="console.tick"]').waitFor();
      expect(await p.locator('[data-testid=pause], [data-testid=trigger], [data-testid=remove]').count()).toBe(0);
      // the server refuses what the page hides
      const status = await p.evaluate(async () => {
        const r = await fetch('api/schedules/console.tick/pause', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        });
        return r.status;
      });
      expect(status).toBe(403);
      expect((await inspector.schedule('console.tick')).paused).toBe(false);
      await ctx.close();
    }
  });

  test('servers: the live worker servers and scheduler instances', async () => {
    await page.goto(base + '#/servers');
    await page
      .locator('[data-testid=servers]')
      .getByText(/\d+ live|ConsoleJobs|default/)
      .first()
      .waitFor();
    await shot(page, 'console-servers');
  });
});
