/**
 * Headless Chromium for the browser tests: Debian's /usr/bin/chromium driven by playwright-core
 * (a browser is never downloaded), with a fresh profile and no background traffic.
 */
import { chromium, type BrowserContext } from 'playwright-core';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM_PATH = '/usr/bin/chromium';

const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Why Chromium cannot run here, or undefined when it can. */
export function chromiumMissing(): string | undefined {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
    return undefined;
  } catch {
    return `no executable Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium)`;
  }
}

/**
 * `describe`, or `describe.skip` with a plain notice when Chromium is missing. With the env var
 * CI set the suite always runs, so a missing Chromium fails it rather than being skipped.
 */
export function describeWithChromium(title: string, body: () => void): void {
  const missing = chromiumMissing();
  if (missing && !process.env.CI) {
    process.stderr.write(`\n  SKIPPED browser test "${title}": ${missing}. CI (env CI set) never skips it.\n\n`);
    describe.skip(title, body);
    return;
  }
  describe(title, () => {
    beforeAll(() => {
      if (missing) throw new Error(`the browser test needs Chromium in CI: ${missing}`);
    });
    body();
  });
}

export interface Chromium {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Chromium> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'toolstream-chromium-'));
  // A persistent context is how playwright takes a --user-data-dir: a fresh one per run.
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 800 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}
