// Unicode bidirectional controls in what the console shows ("Trojan Source", CVE-2021-42574): a task
// type "invoice\u202Efdp.exe" read as "invoiceexe.pdf" on the page, an error likewise. Every text the
// page renders shows each control as a visible [U+202E] (trialsec).
import type { Browser, Page } from 'playwright-core';
import { ChronosClient, InspectorService } from '../../lib/index.js';
import { haveChromium, launchChromium } from '../helpers/browser.js';
import { createChronosTestApp, type ChronosTestApp } from '../helpers/nest-app.js';
import { waitFor } from '../helpers/wait.js';
import { ConsoleJobs } from './console-app.js';

const run = haveChromium() ? describe : describe.skip;

run('the console shows bidirectional controls instead of obeying them', () => {
  let app: ChronosTestApp;
  let browser: Browser;
  let page: Page;
  let base: string;

  beforeAll(async () => {
    app = await createChronosTestApp({ http: true, providers: [ConsoleJobs], options: { console: { path: '/chronos' } } });
    base = `${app.url}/chronos/`;
    const inspector = app.get(InspectorService);
    const client = app.get(ChronosClient);
    await inspector.pauseQueue('spoof');
    await client.enqueue('invoice\u202Efdp.exe', { n: 1 }, { queue: 'spoof' });
    await client.enqueue('flaky', { error: 'denied \u2067by\u2069 admin\u202E' }, { maxRetry: 0 });
    await waitFor(async () => (await inspector.queue('default')).dead === 1, 'the flaky task to die');
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 }, timezoneId: 'UTC' });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  test("a task type's control is shown as [U+202E] in the pending listing, and never reaches the page", async () => {
    await page.goto(base + '#/queues/spoof/pending');
    const row = page.locator('[data-testid=task-table] tbody tr[data-task]');
    await row.first().waitFor();
    expect(await row.first().textContent()).toContain('invoice[U+202E]fdp.exe');
    expect(await page.locator('body').textContent()).not.toMatch(/[\u202A-\u202E\u2066-\u2069]/);
  });

  test("an error's controls are shown in the dead groups", async () => {
    await page.goto(base + '#/queues/default/dead');
    const group = page.locator('[data-testid=dead-group]').first();
    await group.waitFor();
    expect(await group.textContent()).toContain('denied [U+2067]by[U+2069] admin[U+202E]');
    expect(await page.locator('body').textContent()).not.toMatch(/[\u202A-\u202E\u2066-\u2069]/);
  });
});
