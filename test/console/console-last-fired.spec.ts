// The console's schedule list shows a last fire enqueued ahead of its instant (a trigger is enqueued
// a moment before it is due) as "due in …, enqueued", as the CLI does, never as a last fire "in …"
// (trial 32).
import type { Browser } from 'playwright-core';
import { startConsoleServer, type ConsoleServer } from '../../lib/console/server.js';
import { QueueKeys } from '../../lib/core/redis/keys.js';
import { engineTime } from '../../lib/core/runtime/time.js';
import { haveChromium, launchChromium } from '../helpers/browser.js';
import { QueueRig } from '../helpers/queue.js';

const run = haveChromium() ? test : test.skip;

run(
  'a last fire after now is shown as due then and enqueued',
  async () => {
    const rig = new QueueRig();
    let srv: ConsoleServer | undefined;
    let browser: Browser | undefined;
    try {
      await rig.inspector.addSchedule({ name: 'ahead', spec: '@every 1h', type: 'report', queue: 'reports' });
      const at = engineTime.now() + 5 * 60_000;
      await rig.client.redis.hset(new QueueKeys(rig.namespace, 'reports').lastFired, 'ahead', String(at));
      srv = await startConsoleServer({ inspector: rig.inspector, port: 0, warn: () => {} });
      browser = await launchChromium();
      const page = await browser.newPage({ timezoneId: 'UTC' });
      await page.goto(srv.url + '#/schedules');
      const cell = page.locator('tr[data-schedule="ahead"] [data-testid=last-fired]');
      await cell.waitFor();
      const text = await cell.textContent();
      expect(text).toMatch(/\(due in [45]m( \d+s)?, enqueued\)$/);
      expect(text).not.toMatch(/\(in /);
    } finally {
      await browser?.close();
      await srv?.close();
      await rig.close();
    }
  },
  60_000,
);

run(
  "the page's times name their zone: the browser's, which the reader may not know the page uses",
  async () => {
    const rig = new QueueRig();
    let srv: ConsoleServer | undefined;
    let browser: Browser | undefined;
    try {
      await rig.inspector.addSchedule({ name: 'zoned', spec: '@every 1h', type: 'report', queue: 'reports' });
      const at = engineTime.now() + 5 * 60_000; // a fire enqueued ahead of its instant (a past one before the schedule's registration is not shown)
      await rig.client.redis.hset(new QueueKeys(rig.namespace, 'reports').lastFired, 'zoned', String(at));
      srv = await startConsoleServer({ inspector: rig.inspector, port: 0, warn: () => {} });
      browser = await launchChromium();
      // before, "12/8/2026, 10:03:00 AM (due in 4m 59s, enqueued)": Tokyo time, nothing said so
      const page = await browser.newPage({ timezoneId: 'Asia/Tokyo', locale: 'en-US' });
      await page.goto(srv.url + '#/schedules');
      const cell = page.locator('tr[data-schedule="zoned"] [data-testid=last-fired]');
      await cell.waitFor();
      expect(await cell.textContent()).toMatch(/\d:\d\d:\d\d [AP]M GMT\+9 \(due in [45]m( \d+s)?, enqueued\)$/);
    } finally {
      await browser?.close();
      await srv?.close();
      await rig.close();
    }
  },
  60_000,
);
