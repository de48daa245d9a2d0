/**
 * `npm run ask` against the running demo: the real app on a real port, the command spawned
 * as a user runs it, its stdout a pipe (so plain lines, not redrawing).
 */
import { Test } from '@nestjs/testing';
import type { INestApplication } from '@nestjs/common';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { AppModule } from '../src/app.module';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function npmAsk(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'ask', '--', ...args], {
      cwd: join(__dirname, '..'),
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The demo app; `env` configures it as at boot (e.g. TOOLSTREAM_RUN_TIMEOUT_MS, its run time budget). */
async function startDemo(env: Record<string, string> = {}): Promise<{ app: INestApplication; base: string }> {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  let moduleRef;
  try {
    moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  } finally {
    process.env = saved;
  }
  const app = moduleRef.createNestApplication({ logger: false, forceCloseConnections: true });
  await app.listen(0, '127.0.0.1');
  return { app, base: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}

describe('npm run ask against the demo (e2e)', () => {
  it('prints one line per tool event, marked ✓ or ✗, then the answer, and exits 0', async () => {
    const { app, base } = await startDemo();
    try {
      const run = await npmAsk(['Weather in Paris, the time in Tokyo and read the doc nope', '--url', base]);
      expect(run.stderr).toBe('');
      const lines = run.stdout.split('\n');
      expect(lines[0]).toBe('· thinking');
      expect(lines).toContain('· checking the weather; checking the clock; reading the docs');
      expect(lines).toContain('… weather {"city":"Paris"}');
      expect(lines).toContain('… world_clock {"place":"Tokyo"}');
      expect(lines).toContain('… read_doc {"id":"nope"}');
      expect(lines.find((l) => l.startsWith('✓ weather '))).toMatch(/^✓ weather \d+ ms → \{"city":"Paris"/);
      expect(lines.find((l) => l.startsWith('✓ world_clock '))).toMatch(/^✓ world_clock \d+ ms → /);
      expect(lines.find((l) => l.startsWith('✗ read_doc '))).toMatch(/^✗ read_doc \d+ ms: no document named "nope"/);
      // Each start precedes its end; every tool event is exactly one line.
      for (const name of ['weather', 'world_clock', 'read_doc']) {
        const starts = lines.filter((l) => l.startsWith(`… ${name} `));
        const ends = lines.filter((l) => /^[✓✗] /.test(l) && l.split(' ')[1] === name);
        expect([starts.length, ends.length]).toEqual([1, 1]);
        expect(lines.indexOf(starts[0])).toBeLessThan(lines.indexOf(ends[0]));
      }
      // A blank line, then the answer, last.
      const blank = lines.indexOf('');
      expect(lines[blank + 1]).toMatch(/^Paris: .*I could not read the doc "nope"/);
      expect(run.code).toBe(0);
    } finally {
      await app.close();
    }
  });

  it('exits non-zero when the task fails, saying why, its open tool closed with ✗', async () => {
    // The demo agent with a run budget shorter than the slow step it is asked for, and long
    // enough that the step has started when it ends (at 300 ms a loaded machine may not be there yet).
    const { app, base } = await startDemo({ TOOLSTREAM_RUN_TIMEOUT_MS: '2000' });
    try {
      const run = await npmAsk(['wait 10 seconds', '--url', base]);
      const lines = run.stdout.trimEnd().split('\n');
      expect(lines).toContain('… slow_task {"ms":10000}');
      expect(lines.find((l) => l.startsWith('✗ slow_task '))).toBeDefined();
      expect(lines[lines.length - 1]).toMatch(/^✗ the task failed: /);
      expect(run.code).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('exits 3 when no agent answers at the URL', async () => {
    const { app, base } = await startDemo();
    await app.close();
    const run = await npmAsk(['hello', '--url', base]);
    expect(run.stderr).toMatch(/^ask: could not fetch the agent card at /);
    expect(run.code).toBe(3);
  });
});
