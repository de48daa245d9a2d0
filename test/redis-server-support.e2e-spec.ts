import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

const accepts = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

// The redis-server that tests and the bench start (test/support/redis-server.ts).
describe('a redis-server of a test or bench of its own (e2e)', () => {
  it('ends with the process that started it, even when that process crashes', async () => {
    // A process that starts one, says where, and dies of an uncaught error without stopping it.
    const script = `
      const { startRedis } = require(${JSON.stringify(join(__dirname, 'support', 'redis-server'))});
      startRedis().then((redis) => {
        console.log(JSON.stringify({ port: redis.port, dir: redis.dir }));
        setImmediate(() => { throw new Error('crash'); });
      });`;
    const child = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(child.stderr).toContain('Error: crash');
    const { port, dir } = JSON.parse(child.stdout.trim()) as { port: number; dir: string };
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await accepts(port)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  });
});
