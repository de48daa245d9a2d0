/**
 * The page in a real browser against the real app: headless Chromium opens `/`, asks the
 * offline demo agent for tools in parallel and for one that fails, and checks the live
 * timeline (spinners, then ✓ and ✗ with durations), the answer, phone legibility, and a
 * reconnect after a dropped connection. Screenshots go to test/artifacts/ (and the README's
 * to docs/ when UPDATE_SCREENSHOTS is set or it is missing). Where every spinner must be seen, the events pass through a proxy that paces
 * them like a slow link: the demo tools are so fast that a tool's start and end otherwise
 * often land in one animation frame, and a spinner never drawn cannot be checked.
 */
import { Test } from '@nestjs/testing';
import { Module, type INestApplication } from '@nestjs/common';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { A2aModule, ExecutorModule, RuntimeModule, WebModule } from '../src';
import type { Page } from 'playwright-core';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppModule } from '../src/app.module';
import { WEB_MODULE_OPTIONS } from '../src/web';
import { buildWebBundle } from '../src/web/web-bundle';
import { describeWithChromium, launchChromium, type Chromium } from './web-chromium';
import { startStreamProxy, type StreamProxy } from './web-stream-proxy';

const ARTIFACTS = join(__dirname, 'artifacts');
const DOCS = join(__dirname, '..', 'docs');

/** Four asks the demo planner runs in parallel: three succeed (one takes 1.5 s), read_doc fails. */
const PACE_MS = 120;
const QUESTION = 'Weather in Paris, the time in Tokyo, wait 1500 ms and read the doc nope';
const EXPECTED = { weather: 'completed', world_clock: 'completed', slow_task: 'completed', read_doc: 'failed' };

declare global {
  interface Window {
    /** Every status each tool card showed, in order, keyed by toolCallId (recorded by the test). */
    statusLog: Record<string, string[]>;
  }
}

/** Records each card's statuses from the DOM itself, so a spinner shown for one frame still counts. */
function recordStatuses(): void {
  window.statusLog = {};
  const note = (el: Element): void => {
    const id = el.getAttribute('data-tool-call-id');
    const status = el.getAttribute('data-status');
    if (!id || !status) return;
    const log = (window.statusLog[id] ??= []);
    if (log[log.length - 1] !== status) log.push(status);
  };
  new MutationObserver((mutations) => {
    for (const m of mutations) {
      if (m.type === 'attributes') note(m.target as Element);
      m.addedNodes.forEach((node) => {
        if (node instanceof Element) [node, ...Array.from(node.querySelectorAll('[data-tool-call-id]'))].forEach(note);
      });
    }
  }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-status'] });
}

interface Card {
  id: string;
  name: string;
  status: string;
  duration: string;
  error: string;
  top: number;
  left: number;
}

function cards(page: Page): Promise<Card[]> {
  return page.$$eval('.tool', (els) =>
    els.map((el) => {
      const box = el.getBoundingClientRect();
      return {
        id: el.getAttribute('data-tool-call-id') ?? '',
        name: el.getAttribute('data-tool-name') ?? '',
        status: el.getAttribute('data-status') ?? '',
        duration: el.querySelector('.tool__duration')?.textContent ?? '',
        error: el.querySelector('.tool__error')?.textContent ?? '',
        top: Math.round(box.top),
        left: Math.round(box.left),
      };
    }),
  );
}

async function ask(page: Page, base: string, question: string): Promise<void> {
  await page.goto(base);
  await page.waitForFunction(() => document.getElementById('agent')?.textContent?.includes('JSONRPC 1.0'));
  await page.fill('#question', question);
  await page.click('#send');
}

/**
 * Closes a second app started by a test. Chromium may keep a connection to it open; closing must
 * not wait on the browser, so connections still open after the drain are cut.
 */
async function closeApp(app: INestApplication): Promise<void> {
  const server = app.getHttpServer() as import('node:http').Server;
  const cut = setTimeout(() => server.closeAllConnections(), 5_000);
  try {
    await app.close();
  } finally {
    clearTimeout(cut);
  }
}

async function waitForEnd(page: Page): Promise<void> {
  await page.waitForSelector('#app[data-task-state="completed"]', { timeout: 20_000 });
  await page.waitForSelector('#answer-section:not([hidden])');
}

/** A host's own agent, page and A2A under one prefix: the page must show this agent, not the demo. */
@Module({
  imports: [
    RuntimeModule.forRoot({
      executor: ExecutorModule.forRoot({
        tools: [
          tool(async ({ ticker }) => ({ ticker, price: 42.5 }), { name: 'stock_price', description: 'Latest price of a stock', schema: z.object({ ticker: z.string() }) }),
        ],
      }),
    }),
    A2aModule.forRoot({
      path: 'desk',
      auth: false,
      card: {
        name: 'Stock desk',
        description: 'Looks up stock prices.',
        skills: [{ id: 'prices', name: 'Prices', description: 'Latest stock prices', examples: ['stock_price ticker=ACME'] }],
      },
    }),
    WebModule.forRoot({ path: 'desk' }),
  ],
})
class StockDeskModule {}

describeWithChromium('the page in headless Chromium, against the real app (e2e)', () => {
  let publicDir: string;
  let app: INestApplication;
  let base: string;
  let browser: Chromium;
  const proxies: StreamProxy[] = [];

  beforeAll(async () => {
    publicDir = await mkdtemp(join(tmpdir(), 'toolstream-web-'));
    await buildWebBundle({ outDir: publicDir });
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(WEB_MODULE_OPTIONS)
      .useValue({ publicDir })
      .compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    browser = await launchChromium();
    await mkdir(ARTIFACTS, { recursive: true });
  });

  afterAll(async () => {
    await Promise.all(proxies.map((p) => p.close()));
    await browser?.close();
    await app?.close();
    if (publicDir) await rm(publicDir, { recursive: true, force: true });
  });

  async function newPage(origin = base): Promise<{ page: Page; problems: string[]; foreign: string[] }> {
    const page = await browser.context.newPage();
    const problems: string[] = [];
    const foreign: string[] = [];
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(msg.text());
    });
    page.on('request', (req) => {
      if (!req.url().startsWith(origin) && !req.url().startsWith('data:')) foreign.push(req.url());
    });
    await page.addInitScript(recordStatuses);
    return { page, problems, foreign };
  }

  it('shows spinners for parallel tools, resolves them to ✓ and ✗ with durations, then the answer', async () => {
    const proxy = await startStreamProxy(base, { delayPerEventMs: PACE_MS });
    proxies.push(proxy);
    const { page, problems, foreign } = await newPage(proxy.url);
    await ask(page, proxy.url, QUESTION);

    // Live: the slow tool's spinner is on screen while the task works.
    await page.waitForSelector('.tool[data-tool-name="slow_task"][data-status="running"]', { timeout: 10_000 });
    await page.screenshot({ path: join(ARTIFACTS, 'web-page-running.png'), fullPage: true });
    expect(await page.isVisible('#narration')).toBe(true);

    await waitForEnd(page);
    const final = await cards(page);
    expect(Object.fromEntries(final.map((c) => [c.name, c.status]))).toEqual(EXPECTED);
    expect(final).toHaveLength(4);
    for (const card of final) expect(card.duration).toMatch(/^\d+(\.\d)? (ms|s)$/);
    expect(final.find((c) => c.name === 'read_doc')?.error).toMatch(/nope/);

    // Every card began as a spinner and resolved exactly once.
    const log = await page.evaluate(() => window.statusLog);
    for (const card of final) expect(log[card.id]).toEqual(['running', card.status]);
    // The marks the user sees.
    const marks = await page.$$eval('.tool', (els) => els.map((el) => el.querySelector('.tool__mark')?.getAttribute('aria-label')));
    expect(marks.sort()).toEqual(['completed', 'completed', 'completed', 'failed']);

    // Parallel tools side by side on a laptop: one group, cards on one row.
    expect(await page.$$eval('.group--parallel', (groups) => groups.length)).toBe(1);
    expect(new Set(final.map((c) => c.top)).size).toBe(1);
    expect(new Set(final.map((c) => c.left)).size).toBe(4);

    // Args and results expand.
    const weather = page.locator('.tool[data-tool-name="weather"]');
    await weather.locator('.tool__args summary').click();
    expect(await weather.locator('.tool__args pre').innerText()).toContain('Paris');
    await weather.locator('.tool__result summary').click();
    expect(await weather.locator('.tool__result pre').isVisible()).toBe(true);

    expect((await page.textContent('#answer'))?.trim().length).toBeGreaterThan(0);
    expect(await page.isVisible('#narration')).toBe(false);
    expect(problems).toEqual([]);
    expect(foreign).toEqual([]);

    await page.screenshot({ path: join(ARTIFACTS, 'web-page.png'), fullPage: true });
    // The README's copy is committed: refreshed on request (or when missing), so a test run
    // does not leave a changed picture behind each time (durations and the clock differ).
    if (process.env.UPDATE_SCREENSHOTS || !existsSync(join(DOCS, 'web-page.png'))) {
      await mkdir(DOCS, { recursive: true });
      await copyFile(join(ARTIFACTS, 'web-page.png'), join(DOCS, 'web-page.png'));
    }
    await page.close();
  });

  it('is legible on a phone: nothing overflows sideways, parallel tools stack', async () => {
    const { page, problems } = await newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await ask(page, base, QUESTION);
    await waitForEnd(page);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    const final = await cards(page);
    expect(Object.fromEntries(final.map((c) => [c.name, c.status]))).toEqual(EXPECTED);
    // At full speed a fast tool may start and end within one frame: never a step back, never twice.
    const log = await page.evaluate(() => window.statusLog);
    for (const card of final) expect([['running', card.status], [card.status]]).toContainEqual(log[card.id]);
    expect(log[final.find((c) => c.name === 'slow_task')?.id ?? '']).toEqual(['running', 'completed']);
    expect(new Set(final.map((c) => c.left)).size).toBe(1);
    expect(new Set(final.map((c) => c.top)).size).toBe(4);
    const smallest = await page.$$eval('body *', (els) =>
      Math.min(...els.filter((el) => el.textContent?.trim()).map((el) => parseFloat(getComputedStyle(el).fontSize))),
    );
    expect(smallest).toBeGreaterThanOrEqual(13);
    expect(problems).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, 'web-page-phone.png'), fullPage: true });
    await page.close();
  });

  it('draws a delegated agent\'s calls nested under the delegating call, indented and foldable', async () => {
    // A second app that delegates to the first one as "researcher".
    const saved = process.env.TOOLSTREAM_REMOTE_AGENTS;
    process.env.TOOLSTREAM_REMOTE_AGENTS = `researcher=${base}`;
    let parent: INestApplication;
    try {
      const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).overrideProvider(WEB_MODULE_OPTIONS).useValue({ publicDir }).compile();
      parent = moduleRef.createNestApplication({ logger: false });
    } finally {
      if (saved === undefined) delete process.env.TOOLSTREAM_REMOTE_AGENTS;
      else process.env.TOOLSTREAM_REMOTE_AGENTS = saved;
    }
    await parent.listen(0, '127.0.0.1');
    try {
      const parentBase = (await parent.getUrl()).replace('[::1]', '127.0.0.1');
      const { page, problems } = await newPage(parentBase);
      await ask(page, parentBase, 'ask researcher: weather in Paris and the time in Tokyo');
      await waitForEnd(page);
      const delegating = page.locator('.tool[data-tool-name="researcher"]');
      const nested = delegating.locator(':scope > .tool__nested .tool');
      expect(await nested.evaluateAll((els) => els.map((el) => [el.getAttribute('data-tool-name'), el.getAttribute('data-status')]).sort())).toEqual([
        ['weather', 'completed'],
        ['world_clock', 'completed'],
      ]);
      expect(await delegating.getAttribute('data-status')).toBe('completed');
      expect((await delegating.locator(':scope > .tool__nested > summary').innerText()).trim()).toBe('2 nested calls');
      // Indented under the delegating call, inside its card.
      const outer = await delegating.boundingBox();
      const inner = await nested.first().boundingBox();
      expect(inner && outer && inner.x > outer.x && inner.y > outer.y).toBe(true);
      await page.screenshot({ path: join(ARTIFACTS, 'web-page-nested.png'), fullPage: true });
      // Folding hides them, unfolding shows them again.
      await delegating.locator(':scope > .tool__nested > summary').click();
      expect(await nested.first().isVisible()).toBe(false);
      await delegating.locator(':scope > .tool__nested > summary').click();
      expect(await nested.first().isVisible()).toBe(true);
      expect(problems).toEqual([]);
      await page.close();
    } finally {
      await closeApp(parent);
    }
  }, 120_000);

  it('reconnects by itself after a dropped connection, without losing or repeating a frame', async () => {
    // Cut after the Task, "thinking", the narration and the first tool frames.
    const proxy = await startStreamProxy(base, { delayPerEventMs: PACE_MS, cutAfterEvents: 5 });
    proxies.push(proxy);
    {
      const { page, problems } = await newPage(proxy.url);
      await ask(page, proxy.url, QUESTION);
      await waitForEnd(page);
      const final = await cards(page);
      expect(Object.fromEntries(final.map((c) => [c.name, c.status]))).toEqual(EXPECTED);
      expect(new Set(final.map((c) => c.id)).size).toBe(4);
      const log = await page.evaluate(() => window.statusLog);
      for (const card of final) expect(log[card.id]).toEqual(['running', card.status]);

      const streams = proxy.requests.filter((r) => r.rpcMethod);
      expect(streams[0].rpcMethod).toBe('SendStreamingMessage');
      expect(streams[1]).toMatchObject({ rpcMethod: 'SubscribeToTask' });
      expect(streams[1].lastEventId).toMatch(/^\d+$/);
      expect(proxy.deliveredBeforeCut).toBe(5);
      // Chromium itself reports the cut response; the page has nothing else to complain about.
      expect(problems.filter((p) => !p.includes('net::ERR_INCOMPLETE_CHUNKED_ENCODING'))).toEqual([]);
      await page.screenshot({ path: join(ARTIFACTS, 'web-page-reconnected.png'), fullPage: true });
      await page.close();
    }
  });

  it('Stop cancels the task on the server, then drops the stream: the stopped tool fails with the reason and its clock stops', async () => {
    const proxy = await startStreamProxy(base, {});
    proxies.push(proxy);
    const { page, problems } = await newPage(proxy.url);
    await ask(page, proxy.url, 'take a slow step of 8000 ms');
    await page.waitForSelector('.tool[data-status="running"]', { timeout: 20_000 });
    await page.click('#stop');
    await page.waitForSelector('.tool[data-status="failed"]', { timeout: 20_000 });
    await page.waitForSelector('#stop[hidden]', { state: 'attached' });
    expect(proxy.requests.map((r) => r.rpcMethod).filter(Boolean)).toEqual(['SendStreamingMessage', 'CancelTask']);
    const [card] = await cards(page);
    expect(card).toMatchObject({ name: 'slow_task', status: 'failed' });
    expect(card.error).toMatch(/cancel/i);
    // Nothing ticks any more: the duration stays put.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await cards(page))[0].duration).toBe(card.duration);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("follows the agent it is served with: under a prefix, the card's name, description and examples, and asking works", async () => {
    const moduleRef = await Test.createTestingModule({ imports: [StockDeskModule] }).overrideProvider(WEB_MODULE_OPTIONS).useValue({ publicDir }).compile();
    const desk = moduleRef.createNestApplication({ logger: false });
    await desk.listen(0, '127.0.0.1');
    const deskBase = (await desk.getUrl()).replace('[::1]', '127.0.0.1');
    try {
      const { page, problems, foreign } = await newPage(deskBase);
      await page.goto(`${deskBase}/desk`);
      await page.waitForFunction(() => document.getElementById('agent')?.textContent?.includes('JSONRPC 1.0'));
      expect(page.url()).toBe(`${deskBase}/desk/`);
      expect(await page.title()).toBe('Stock desk · live tool timeline');
      expect(await page.textContent('#title')).toBe('Stock desk');
      expect(await page.textContent('#tagline')).toBe('Looks up stock prices.');
      expect(await page.$$eval('#examples button', (buttons) => buttons.map((b) => b.textContent))).toEqual(['stock_price ticker=ACME']);
      await page.click('#examples button');
      await waitForEnd(page);
      expect((await cards(page)).map((c) => [c.name, c.status])).toEqual([['stock_price', 'completed']]);
      expect(problems).toEqual([]);
      expect(foreign).toEqual([]);
      await page.close();
    } finally {
      await closeApp(desk);
    }
  }, 120_000);
});
