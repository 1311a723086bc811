// The console's limits form: a value that is not a whole number is sent as typed, so the engine refuses it
// naming it, and no limit changes (trial 43). Before, the form sent Number(text): 'abc', '5 tasks' or
// 'Infinity' became NaN or Infinity, which JSON writes as null — "clear this limit" — so a typo cleared the
// queue's concurrency and the page said the limits were set; '0x10' was taken as 16.
import type { Browser } from 'playwright-core';
import { startConsoleServer, type ConsoleServer } from '../../lib/console/server.js';
import { haveChromium, launchChromium } from '../helpers/browser.js';
import { QueueRig } from '../helpers/queue.js';

const run = haveChromium() ? test : test.skip;

run(
  'a limit typed as other than a whole number is refused, naming it, and the stored limits stay',
  async () => {
    const rig = new QueueRig();
    let srv: ConsoleServer | undefined;
    let browser: Browser | undefined;
    try {
      await rig.client.enqueue('t', {}, { queue: 'l' });
      await rig.inspector.setQueueLimits('l', { concurrency: 5, groupConcurrency: 2 });
      srv = await startConsoleServer({ inspector: rig.inspector, port: 0, warn: () => {} });
      browser = await launchChromium();
      const page = await browser.newPage({ timezoneId: 'UTC' });
      await page.goto(srv.url + '#/queues/l/pending');
      await page.locator('[data-testid=edit-limits]').click();
      for (const [field, typed] of [
        ['concurrency', 'abc'],
        ['concurrency', 'Infinity'],
        ['groupConcurrency', '0x10'],
      ]) {
        // a refused value leaves the form open with what was typed, to correct
        await page.locator('[data-testid=limit-concurrency]').fill('5');
        await page.locator('[data-testid=limit-groupConcurrency]').fill('2');
        await page.locator(`[data-testid=limit-${field}]`).fill(typed);
        await page.locator('[data-testid=save-limits]').click();
        const notice = page.locator('[data-testid=notice]');
        await notice.getByText(`got "${typed}"`).waitFor();
        expect(await notice.textContent()).toContain(
          `Invalid queue limits (1 problem):\n  - ${field}: expected an integer >= 1 or null, got "${typed}"`,
        );
        expect(await rig.inspector.queueLimits('l')).toEqual({ concurrency: 5, groupConcurrency: 2 });
      }
      expect(await page.locator('[data-testid=limit-groupConcurrency]').inputValue()).toBe('0x10');
      // a whole number (spaces around it allowed) and an empty field (clears) work as before, and close the form
      await page.locator('[data-testid=limit-concurrency]').fill(' 7 ');
      await page.locator('[data-testid=limit-groupConcurrency]').fill('');
      await page.locator('[data-testid=save-limits]').click();
      await page
        .locator('[data-testid=notice]')
        .getByText(/set limits/)
        .waitFor();
      expect(await rig.inspector.queueLimits('l')).toEqual({ concurrency: 7 });
      await page.locator('[data-testid=edit-limits]').waitFor();
    } finally {
      await browser?.close();
      await srv?.close();
      await rig.close();
    }
  },
  60_000,
);
