// Headless Chromium from Debian's `chromium` package, driven by playwright-core (never a downloaded browser).
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
/** Where the browser tests save their screenshots (git-ignored). */
export const ARTIFACTS = fileURLToPath(new URL('../artifacts', import.meta.url));

/** True when the browser tests can run; else says why once on stderr (they are skipped). */
export function haveChromium(): boolean {
  if (existsSync(CHROMIUM)) return true;
  process.stderr.write(`SKIPPED: the console browser tests need ${CHROMIUM} (apt-get install -y chromium)\n`);
  return false;
}

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}
