// Issue 25: the schedules page's label and prefix filter, over GET api/schedule-page (Inspector.schedulePage),
// in Chromium; the route goes through the console's authorize like every other; @Cron passes its labels on.
import type { IncomingMessage } from 'node:http';
import { Injectable } from '@nestjs/common';
import type { Browser, Page } from 'playwright-core';
import { Cron, InspectorService, Interval } from '../../lib/index.js';
import { haveChromium, launchChromium } from '../helpers/browser.js';
import { createChronosTestApp, type ChronosTestApp } from '../helpers/nest-app.js';
import { waitFor } from '../helpers/wait.js';

@Injectable()
class LabelledJobs {
  @Cron('0 4 * * *', { name: 'acme.nightly-digest', labels: { tenant: 'acme', kind: 'digest' } })
  digest(): void {}

  @Interval('1h', { name: 'globex.hourly-sync', labels: { tenant: 'globex', kind: 'sync' } })
  sync(): void {}
}

const run = haveChromium() ? describe : describe.skip;

run('the schedules page filters by labels and name prefix (issue 25)', () => {
  let app: ChronosTestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  const violations: string[] = [];

  beforeAll(async () => {
    app = await createChronosTestApp({
      http: true,
      providers: [LabelledJobs],
      options: {
        console: {
          path: '/chronos',
          authorize: (req: IncomingMessage, act: string) => req.headers['x-role'] !== 'nobody' || act !== 'read',
        },
      },
    });
    base = `${app.url}/chronos/`;
    const inspector = app.get(InspectorService);
    await inspector.inspector.addSchedule({ name: 'acme.weekly-digest', spec: '0 5 * * 1', labels: { tenant: 'acme', kind: 'digest' } });
    await inspector.inspector.addSchedule({ name: 'acme.report', spec: '0 6 * * *', labels: { tenant: 'acme', kind: 'report' } });
    await inspector.inspector.addSchedule({ name: 'globex.digest', spec: '0 7 * * *', labels: { tenant: 'globex', kind: 'digest' } });
    await inspector.inspector.addSchedule({ name: 'unlabelled', spec: '0 8 * * *' });
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

  const rows = (): Promise<string[]> =>
    page
      .locator('section[data-testid=schedules] tbody tr[data-schedule]')
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-schedule')!));

  test('labels "tenant=acme kind=digest" show only those schedules, with their labels; a prefix narrows them; clear shows every one', async () => {
    await page.goto(base + '#/schedules');
    await waitFor(async () => (await rows()).length === 6, 'every schedule listed');
    await page.locator('[data-testid=filter-labels]').fill('tenant=acme kind=digest');
    await page.locator('[data-testid=filter-apply]').click();
    await waitFor(async () => (await rows()).join() === 'acme.nightly-digest,acme.weekly-digest', 'the filtered list');
    expect(await page.locator('tr[data-schedule="acme.weekly-digest"] [data-testid=labels]').textContent()).toContain('kind=digest');
    await page.locator('[data-testid=filter-prefix]').fill('acme.w');
    await page.locator('[data-testid=filter-apply]').click();
    await waitFor(async () => (await rows()).join() === 'acme.weekly-digest', 'the prefix filter');
    await page.locator('[data-testid=filter-labels]').fill('tenant=nobody');
    await page.locator('[data-testid=filter-prefix]').fill('');
    await page.locator('[data-testid=filter-apply]').click();
    await page.locator('section[data-testid=schedules]').getByText('No schedules.').waitFor();
    await page.locator('[data-testid=filter-clear]').click();
    await waitFor(async () => (await rows()).length === 6, 'every schedule again');
  });

  test("InspectorService.schedulePage: the decorators' labels, pages by cursor", async () => {
    const svc = app.get(InspectorService);
    const first = await svc.schedulePage({ labels: { tenant: 'globex' }, limit: 1 });
    expect(first.items.map((i) => [i.name, i.labels])).toEqual([['globex.digest', { kind: 'digest', tenant: 'globex' }]]);
    const second = await svc.schedulePage({ labels: { tenant: 'globex' }, limit: 1, cursor: first.cursor! });
    expect([second.items.map((i) => [i.name, i.labels, i.origin]), second.cursor]).toEqual([
      [['globex.hourly-sync', { kind: 'sync', tenant: 'globex' }, 'code']],
      null,
    ]);
  });

  test('a bad label is shown as the API error; the route answers 403 to a caller not allowed to read', async () => {
    await page.goto(base + '#/schedules');
    await page.locator('[data-testid=filter-labels]').fill('tenant');
    await page.locator('[data-testid=filter-apply]').click();
    expect(await page.locator('[data-testid=filter-error]').textContent()).toContain('label: expected key=value, got "tenant"');
    const ok = await fetch(`${base}api/schedule-page?label=kind%3Dreport`, { headers: { accept: 'application/json' } });
    expect(((await ok.json()) as { items: { name: string }[] }).items.map((i) => i.name)).toEqual(['acme.report']);
    // a key no label can have is a 400 naming it (as on a definition), never an empty page
    const badKey = await fetch(`${base}api/schedule-page?label=ten%20ant%3Dacme`, { headers: { accept: 'application/json' } });
    expect([badKey.status, ((await badKey.json()) as { error: string }).error]).toEqual([
      400,
      'label: a key is 1 to 64 characters of [A-Za-z0-9_./-], got "ten ant"',
    ]);
    const refused = await fetch(`${base}api/schedule-page?label=kind%3Dreport`, {
      headers: { accept: 'application/json', 'x-role': 'nobody' },
    });
    expect(refused.status).toBe(403);
  });
});

// Trial 4 F2: the schedules page pages through api/schedule-page (100 a page) instead of rendering
// every schedule of the overview, and the overview counts the schedules instead of shipping them.
run('the schedules page pages (trial 4 F2)', () => {
  let app: ChronosTestApp;
  let browser: Browser;
  let page: Page;
  let base: string;

  beforeAll(async () => {
    app = await createChronosTestApp({ http: true, providers: [LabelledJobs], options: { console: { path: '/chronos' } } });
    base = `${app.url}/chronos/`;
    const inspector = app.get(InspectorService).inspector;
    for (let i = 0; i < 150; i++) await inspector.addSchedule({ name: `bulk.${String(i).padStart(3, '0')}`, spec: '0 9 * * *' });
    await inspector.pauseSchedule('bulk.007', { note: 'x' });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 }, timezoneId: 'UTC' });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  const rows = (): Promise<string[]> =>
    page
      .locator('section[data-testid=schedules] tbody tr[data-schedule]')
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-schedule')!));

  test('152 schedules: the first 100 by name, "next page" shows the other 52, "first page" goes back; the state filter pages too', async () => {
    await page.goto(base + '#/schedules');
    await waitFor(async () => (await rows()).length === 100, 'the first page');
    expect((await rows()).slice(0, 2)).toEqual(['acme.nightly-digest', 'bulk.000']);
    expect(await page.locator('[data-testid=page-info]').textContent()).toMatch(
      /^100 shown \(100 a page, by name\) · 152 schedules in all, 1 paused, 0 orphaned$/,
    );
    await waitFor(
      async () => (await page.locator('tr[data-schedule="bulk.000"] [data-testid=activity]').count()) === 1,
      "the page's activity",
    );
    await page.locator('[data-testid=filter-next]').click();
    await waitFor(async () => (await rows()).length === 52, 'the second page');
    expect((await rows()).at(-1)).toBe('globex.hourly-sync');
    expect(await page.locator('[data-testid=filter-next]').count()).toBe(0);
    await page.locator('[data-testid=page-first]').click();
    await waitFor(async () => (await rows())[0] === 'acme.nightly-digest', 'the first page again');
    await page.locator('[data-testid=filter-state]').selectOption('paused');
    await page.locator('[data-testid=filter-apply]').click();
    await waitFor(async () => (await rows()).join() === 'bulk.007', 'the paused ones');
  });

  test('the overview counts the schedules (no list of them); schedule-activity answers for a page or one name', async () => {
    const get = async <T>(path: string): Promise<T> => (await (await fetch(base + 'api/' + path)).json()) as T;
    const o = await get<{ schedules: unknown }>('overview');
    expect(o.schedules).toEqual({ total: 152, paused: 1, orphaned: 0, ended: 0, invalid: 0, silent: 0, countedAt: expect.any(Number) });
    expect((await get<{ name: string }[]>('schedule-activity?prefix=bulk.1&limit=3')).map((a) => a.name)).toEqual([
      'bulk.100',
      'bulk.101',
      'bulk.102',
    ]);
    expect((await get<{ name: string }[]>('schedule-activity?name=bulk.042')).map((a) => a.name)).toEqual(['bulk.042']);
    expect((await fetch(base + 'api/schedule-activity?name=nope')).status).toBe(404);
    expect((await get<unknown[]>('schedule-activity')).length).toBe(152);
    // after an idle spell the first poll waits for a new count instead of showing one minutes old (trial 9)
    const inspector = app.get(InspectorService).inspector;
    await inspector.addSchedule({ name: 'late.one', spec: '0 9 * * *' });
    const realNow = Date.now;
    Date.now = () => realNow.call(Date) + 72_000; // 72 s on: the last count is older than any reuse
    try {
      expect((await get<{ schedules: { total: number } }>('overview')).schedules.total).toBe(153);
    } finally {
      Date.now = realNow;
    }
    await inspector.removeSchedule('late.one');
  });
});
