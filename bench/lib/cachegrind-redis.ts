/**
 * A redis-server of the probe's own (test/support/redis-server.ts: free loopback port, temp dir,
 * no persistence) run under cachegrind, for counting the instructions Redis spends on a script's
 * calls; or natively (`native`), for its own µs (INFO commandstats). Needs valgrind and
 * cg_annotate unless native.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { startRedis, type TestRedis } from '../../test/support/redis-server';

export interface RedisInstructions {
  /** Every instruction of the server's run (its start and timers included). */
  total: number;
  /** By function, as cg_annotate names them, most first. */
  byFunction: Map<string, number>;
}

export class CountedRedis {
  private constructor(
    private readonly server: TestRedis,
    readonly redis: Redis,
    private readonly native: boolean,
  ) {}

  static async start(options: { native?: boolean; args?: string[] } = {}): Promise<CountedRedis> {
    const native = options.native ?? false;
    const server = await startRedis({
      args: options.args,
      under: native ? undefined : (dir) => ['valgrind', '--tool=cachegrind', '--cache-sim=no', `--cachegrind-out-file=${join(dir, 'cachegrind.out')}`],
      startTimeoutMs: 30_000,
    });
    return new CountedRedis(server, new Redis(server.port, '127.0.0.1', { maxRetriesPerRequest: 2 }), native);
  }

  /** Stops the server; under cachegrind, what it counted (undefined natively). */
  async stop(): Promise<RedisInstructions | undefined> {
    this.redis.disconnect();
    await this.server.kill();
    const counted = this.native ? undefined : annotate(join(this.server.dir, 'cachegrind.out'));
    await this.server.stop();
    return counted;
  }
}

function annotate(out: string): RedisInstructions {
  const annotated = spawnSync('cg_annotate', [out], { encoding: 'utf8' }).stdout;
  const total = Number(/([\d,]+) \([\d. ]+%\)\s+PROGRAM TOTALS/.exec(annotated)?.[1].replace(/,/g, '') ?? readFileSync(out, 'utf8').match(/summary: (\d+)/)?.[1]);
  const byFunction = new Map<string, number>();
  for (const [, ir, name] of annotated.matchAll(/^\s*([\d,]+) \(\s*[\d.]+%\)\s+(\S.*)$/gm)) {
    if (!name.includes('PROGRAM TOTALS')) byFunction.set(name.trim(), (byFunction.get(name.trim()) ?? 0) + Number(ir.replace(/,/g, '')));
  }
  return { total, byFunction };
}
