// Trial 15: a queue's tasks page acts on what the operator sees. A selection is of the listing shown:
// it is dropped when the queue, the state tab, the filter or the page changes (before, the "retry 2
// selected" button stayed after a click on another error group and retried tasks no longer shown). And a
// grouped queue's pending tab says how many of its pending tasks wait in groups, which it does not list
// and "delete all" does not reach (before: "No pending tasks." under a count of 6, and "delete all"
// answered "done (0 tasks)").
import type { Browser, Dialog, Page } from 'playwright-core';
import { ChronosClient, InspectorService } from '../../lib/index.js';
import { haveChromium, launchChromium } from '../helpers/browser.js';
import { createChronosTestApp, type ChronosTestApp } from '../helpers/nest-app.js';
import { waitFor } from '../helpers/wait.js';
import { ConsoleJobs } from './console-app.js';

const run = haveChromium() ? describe : describe.skip;

run("the console's tasks page (trial 15)", () => {
  let app: ChronosTestApp;
  let browser: Browser;
  let page: Page;
  let base: string;
  let inspector: InspectorService;
  const dialogs: string[] = [];

  beforeAll(async () => {
    app = await createChronosTestApp({ http: true, providers: [ConsoleJobs], options: { console: { path: '/chronos' } } });
    base = `${app.url}/chronos/`;
    inspector = app.get(InspectorService);
    const client = app.get(ChronosClient);
    for (let i = 0; i < 3; i++) await client.enqueue('flaky', { error: 'db timeout' }, { maxRetry: 0 });
    for (let i = 0; i < 2; i++) await client.enqueue('flaky', { error: 'bad input' }, { maxRetry: 0 });
    await waitFor(async () => (await inspector.queue('default')).dead === 5, 'the flaky tasks to die');
    // a paused queue whose pending tasks wait in groups
    await inspector.pauseQueue('imports');
    for (let i = 0; i < 6; i++) await client.enqueue('hold', { i }, { queue: 'imports', group: `tenant-${i % 2}` });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 }, timezoneId: 'UTC' });
    page.on('pageerror', (e) => void process.stderr.write(`page error: ${e.message}\n`));
    page.on('dialog', (d: Dialog) => {
      dialogs.push(d.message());
      void d.accept();
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  const rows = () => page.locator('[data-testid=task-table] tbody tr[data-task]');

  test('a selection is dropped when the listing changes: another error group, another state tab', async () => {
    await page.goto(base + '#/queues/default/dead');
    await page.locator('[data-testid=dead-group]', { hasText: 'db timeout' }).click();
    await waitFor(async () => (await rows().count()) === 3, 'the 3 db timeout tasks listed');
    await rows().nth(0).locator('input[type=checkbox]').check();
    await rows().nth(1).locator('input[type=checkbox]').check();
    await page.locator('[data-testid=selected-retry]').getByText('retry 2 selected').waitFor();
    // another group: its 2 tasks are shown, none of them selected, and no button acts on the hidden 2
    await page.locator('[data-testid=dead-group]', { hasText: 'bad input' }).click();
    await waitFor(async () => (await rows().count()) === 2, 'the 2 bad input tasks listed');
    expect(await page.locator('[data-testid=selected-retry]').count()).toBe(0);
    expect(await page.locator('[data-testid=task-table] input[type=checkbox]:checked').count()).toBe(0);
    // the same across the state tabs
    await rows().nth(0).locator('input[type=checkbox]').check();
    await page.locator('[data-testid=selected-delete]').getByText('delete 1 selected').waitFor();
    await page.locator('[data-testid=tab-retry]').click();
    await page.getByText('No retry tasks.').waitFor();
    expect(await page.locator('[data-testid=selected-delete]').count()).toBe(0);
    expect((await inspector.queue('default')).dead).toBe(5);
  });

  test("a grouped queue's pending tab says its tasks wait in groups, unlisted, and delete all says it does not reach them", async () => {
    await page.goto(base + '#/queues/imports/pending');
    const note = page.locator('[data-testid=grouped-note]');
    await note.waitFor();
    expect(await note.textContent()).toMatch(/6 of the 6 pending tasks wait in groups/);
    dialogs.length = 0;
    await page.locator('[data-testid=all-delete]').click();
    await page.locator('[data-testid=notice]').waitFor();
    expect(dialogs[0]).toMatch(/the 6 tasks waiting in groups are not deleted/);
    expect((await inspector.queue('imports')).pending).toBe(6);
    // the overview's latency: not "0 ms" for a queue whose pending tasks all wait in groups
    await page.goto(base);
    await page.locator('tr[data-queue=imports] [data-testid=latency]').getByText('in groups').waitFor();
  });
});
