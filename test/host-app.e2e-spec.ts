/**
 * examples/host-app as a new user gets it: the library packed with `npm pack` (its prepack
 * build included), installed from the tarball into a copy of the example, compiled, booted as
 * its own process, and asked through the official A2A SDK client to call the example's own tool.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
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
  }, 600_000);

  afterAll(async () => {
    child?.kill('SIGTERM');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('boots without the Nest CLI and streams a task that calls its own tool', async () => {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port) };
    delete env.OPENAI_API_KEY;
    delete env.OPENAI_BASE_URL;
    child = spawn(process.execPath, ['dist/main.js'], { cwd: dir, env, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 60_000;
    while (!output.includes('host app listening on')) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the host app did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

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
});
