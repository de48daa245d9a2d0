/**
 * examples/host-app as a new user gets it: the library packed with `npm pack` (its prepack
 * build included), installed from the tarball into a copy of the example, compiled, then
 * reinstalled for production (`npm ci --omit=dev`: no TypeScript, no Nest CLI, no esbuild),
 * booted as its own process, and asked through the official A2A SDK client to call the example's
 * own tool. The package's own demo app (`dist/main.js`) boots from that production install too.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClientFactory } from '@a2a-js/sdk/client';
import { parseToolCall } from '../src/extensions';
import { freePort } from './support/built-server';
import { describeEvent, drain, userMessage } from './support/clients';

const ROOT = join(__dirname, '..');
const EXAMPLE = join(ROOT, 'examples', 'host-app');

function run(command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(output) : reject(new Error(`${command} ${args.join(' ')} exited ${code}:\n${output}`))));
  });
}

describe('examples/host-app from the packed tarball (e2e)', () => {
  let dir: string;
  let child: ChildProcessWithoutNullStreams | undefined;
  let output = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolstream-host-app-'));
    await cp(EXAMPLE, dir, { recursive: true, filter: (src) => !/[/\\](?:node_modules|dist)$/.test(src) });
    await run('npm', ['pack', '--silent', '--pack-destination', dir], ROOT);
    const tarball = (await readdir(dir)).find((name) => /^toolstream-.*\.tgz$/.test(name));
    if (!tarball) throw new Error('npm pack wrote no tarball');
    await rename(join(dir, tarball), join(dir, 'toolstream.tgz'));
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], dir);
    await run(process.execPath, [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], dir);
    // What a production image runs: the lockfile npm install wrote, without devDependencies.
    await run('npm', ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], dir);
  }, 600_000);

  afterAll(async () => {
    child?.kill('SIGTERM');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Starts `node <script>` in the example's directory and waits for `ready` in its output. */
  async function start(script: string, ready: string): Promise<number> {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port) };
    delete env.OPENAI_API_KEY;
    delete env.OPENAI_BASE_URL;
    output = '';
    child = spawn(process.execPath, [script], { cwd: dir, env, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 60_000;
    while (!output.includes(ready)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${script} did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return port;
  }

  async function stop(): Promise<void> {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    await exited;
  }

  it('is a production install: no TypeScript, no Nest CLI, no esbuild', () => {
    for (const tool of ['typescript', '@nestjs/cli', 'esbuild', 'ts-node']) {
      expect([tool, existsSync(join(dir, 'node_modules', tool))]).toEqual([tool, false]);
    }
    expect(existsSync(join(dir, 'node_modules', 'toolstream', 'dist', 'index.js'))).toBe(true);
  });

  it('boots without the Nest CLI and streams a task that calls its own tool', async () => {
    const port = await start('dist/main.js', 'host app listening on');

    const base = `http://127.0.0.1:${port}`;
    const client = await new ClientFactory().createFromUrl(base, '/agent/.well-known/agent-card.json');
    const events = await drain(client.sendMessageStream({ tenant: '', message: userMessage('stock_price ticker=ACME'), configuration: undefined, metadata: undefined }));
    const lines = events.map(describeEvent);
    expect(lines).toEqual(expect.arrayContaining(['started stock_price', 'completed stock_price']));
    expect(lines.indexOf('started stock_price')).toBeLessThan(lines.indexOf('completed stock_price'));
    const completed = events
      .map((e) => (e.payload?.$case === 'artifactUpdate' ? parseToolCall(e.payload.value.artifact?.parts) : undefined))
      .find((frame) => frame?.phase === 'completed');
    expect(completed).toMatchObject({ name: 'stock_price', result: { ticker: 'ACME', price: 42.5, currency: 'USD' } });
    expect(lines[lines.length - 1]).toBe('COMPLETED');
  }, 120_000);

  it("the package's own demo app starts from the production install", async () => {
    await stop();
    const port = await start(join('node_modules', 'toolstream', 'dist', 'main.js'), 'toolstream listening on');
    const base = `http://127.0.0.1:${port}`;
    const card = (await (await fetch(`${base}/.well-known/agent-card.json`)).json()) as { name: string; skills: Array<{ examples?: string[] }> };
    expect(card.name).toBe('toolstream demo agent');
    expect(card.skills.flatMap((s) => s.examples ?? []).length).toBeGreaterThan(0);
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('src="assets/app.js"');
    await stop();
  }, 120_000);
});
