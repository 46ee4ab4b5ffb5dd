// Finds the Chromium the browser tests drive (never downloaded: Debian's `chromium` package, or
// CHROMIUM_PATH) and launches it headless with a quiet, fresh profile.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const chromiumPresent = existsSync(CHROMIUM_PATH);

export const SKIP_REASON =
  `Chromium not found at ${CHROMIUM_PATH}: install it (apt-get install chromium) or set CHROMIUM_PATH; ` +
  `.ci/run installs it, so CI always runs these tests`;

// Playwright's launch() makes a fresh temporary --user-data-dir per browser and adds --headless.
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
