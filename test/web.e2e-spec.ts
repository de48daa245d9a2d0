import { Test } from '@nestjs/testing';
import { VersioningType, type INestApplication } from '@nestjs/common';
import { mkdtemp, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppModule } from '../src/app.module';
import { WEB_MODULE_OPTIONS } from '../src/web';
import { buildWebBundle } from '../src/web/web-bundle';

/** Plain node:http GET: fetch() adds `Cache-Control: no-cache` to conditional requests, which defeats 304s. */
function statusOf(url: string, headers: Record<string, string>): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (res) => {
      res.resume();
      resolve(res.statusCode);
    }).on('error', reject);
  });
}

async function startApp(publicDir: string, setup: (app: INestApplication) => void = () => undefined): Promise<{ app: INestApplication; base: string }> {
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
    .overrideProvider(WEB_MODULE_OPTIONS)
    .useValue({ publicDir })
    .compile();
  const app = moduleRef.createNestApplication({ logger: false });
  setup(app);
  await app.listen(0, '127.0.0.1');
  return { app, base: await app.getUrl() };
}

describe('WebModule serves the page (e2e)', () => {
  let dir: string;
  let inputs: string[];
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolstream-web-'));
    inputs = await buildWebBundle({ outDir: dir });
    ({ app, base } = await startApp(dir));
  });

  afterAll(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('bundles the client kit with nothing but the tool-call-v1 contract and the SSE parser: no Nest, no SDK runtime, no Node', () => {
    const outside = inputs.filter(
      (f) =>
        !f.startsWith('src/client/') &&
        !f.startsWith('src/web/browser/') &&
        f !== 'src/extensions/tool-call-v1.ts' &&
        // eventsource-parser: a dependency-free, browser-safe SSE parser.
        !f.startsWith('node_modules/eventsource-parser/'),
    );
    expect(outside).toEqual([]);
    expect(inputs).toContain('src/client/timeline.reducer.ts');
  });

  it("stays beside the agent card under a host's URI versioning, as the health probes stay at /healthz", async () => {
    const versioned = await startApp(dir, (a) => a.enableVersioning({ type: VersioningType.URI, defaultVersion: '1' }));
    try {
      // The page reads the card relative to itself: both unversioned, or the card is not found.
      for (const path of ['/', '/assets/app.js', '/.well-known/agent-card.json', '/healthz/live']) expect([path, (await fetch(`${versioned.base}${path}`)).status]).toEqual([path, 200]);
      expect((await fetch(`${versioned.base}/v1/`)).status).toBe(404);
    } finally {
      await versioned.app.close();
    }
  });

  it('GET / gives the page with a strict same-origin Content-Security-Policy', async () => {
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(res.headers.get('content-security-policy')).toContain("connect-src 'self'");
    const html = await res.text();
    expect(html).toContain('<script src="assets/app.js" defer></script>');
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1" />');
    // Nothing on the page points outside this server.
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('serves the script and the stylesheet with their types, and revalidates with ETags', async () => {
    const js = await fetch(`${base}/assets/app.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('no-cache');
    const body = await js.text();
    expect(body).toContain('SendStreamingMessage');
    expect(body).not.toMatch(/https?:\/\/(?!proto-labs\.ai\/a2a\/ext\/tool-call-v1)[a-z]/i);
    const etag = js.headers.get('etag') as string;
    expect(await statusOf(`${base}/assets/app.js`, { 'If-None-Match': etag })).toBe(304);
    const css = await fetch(`${base}/assets/app.css`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('answers 404 with a reason for anything else, traversal attempts included', async () => {
    for (const path of ['/assets/nope.js', '/assets/..%2Fweb.module.js', '/assets/index.html', '/assets/%2e%2e%2fpackage.json']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(404);
      expect(((await res.json()) as { message: string }).message).toMatch(/^no asset "/);
    }
  });

  it('answers 503 with what to do when the page was not built', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'toolstream-empty-'));
    const unbuilt = await startApp(empty);
    try {
      const res = await fetch(`${unbuilt.base}/`);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { message: string }).message).toBe(
        'the web page is not built (index.html, app.css, app.js missing): run npm run build',
      );
    } finally {
      await unbuilt.app.close();
      await rm(empty, { recursive: true, force: true });
    }
  });
});
