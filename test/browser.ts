import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Browser suites need Debian's Chromium; .ci/run installs it and sets FSM_REQUIRE_ALL=1 so they cannot skip. */
export function browserSkip(): string | false {
  if (fs.existsSync(CHROMIUM) || process.env.FSM_REQUIRE_ALL === '1') return false;
  return `no Chromium at ${CHROMIUM} (apt-get install -y chromium)`;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
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
