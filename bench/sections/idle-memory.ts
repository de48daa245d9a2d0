/**
 * RSS per open idle stream: a fresh, warmed-up server; RSS after a full GC; N streams opened,
 * each having received its first frame and then nothing; RSS after a full GC again. The
 * difference over N is what one open stream costs the server.
 */
import { loadavg } from 'node:os';
import type { BenchConfig } from '../lib/config';
import type { Target } from '../lib/ipc';
import type { ServerPool } from '../lib/server-pool';
import { spread, type Spread } from '../lib/stats';

export interface IdleMemoryRep {
  rep: number;
  loadAverage: number;
  opened: number;
  rssBeforeMiB: number;
  rssOpenMiB: number;
  rssPerStreamKiB: number;
}

export interface IdleMemoryRow {
  target: Target;
  streams: number;
  rssPerStreamKiB: Spread;
  /** Fewest streams open with their first frame over the repetitions. */
  openedMin: number;
  reps: IdleMemoryRep[];
}

const OPEN_TIME_LIMIT_MS = 120_000;
/** The reference is left out: opening 10,000 of its streams, three times, would cost the run minutes. */
const IDLE_TARGETS: readonly Target[] = ['toolstream', 'limit'];

export async function measureIdleMemory(config: BenchConfig, pool: ServerPool, log: (line: string) => void): Promise<IdleMemoryRow[]> {
  const rows: IdleMemoryRow[] = [];
  const streams = config.idleStreams;
  for (const target of IDLE_TARGETS) {
    const reps: IdleMemoryRep[] = [];
    for (let rep = 0; rep < config.reps; rep++) {
      await pool.retire(target);
      const server = await pool.server(target);
      const loadAverage = loadavg()[0];
      const rss0 = await server.rssAfterGc();
      const result = await pool.load.openIdle({
        url: server.url,
        streams,
        scenario: { toolCalls: 0, intervalMs: 0, idle: true },
        timeLimitMs: OPEN_TIME_LIMIT_MS,
      });
      const rss1 = await server.rssAfterGc();
      await pool.load.closeAll();
      await pool.retire(target);
      const opened = result.frames;
      if (opened < streams) log(`idle ${target} ${streams}: only ${opened} streams opened (${result.errors.join('; ')})`);
      reps.push({
        rep,
        loadAverage,
        opened,
        rssBeforeMiB: rss0 / 2 ** 20,
        rssOpenMiB: rss1 / 2 ** 20,
        rssPerStreamKiB: opened > 0 ? (rss1 - rss0) / opened / 1024 : NaN,
      });
    }
    const row: IdleMemoryRow = {
      target,
      streams,
      rssPerStreamKiB: spread(reps.map((r) => r.rssPerStreamKiB)),
      openedMin: Math.min(...reps.map((r) => r.opened)),
      reps,
    };
    rows.push(row);
    log(`idle ${target} ${streams} streams: ${reps.map((r) => r.rssPerStreamKiB.toFixed(1)).join(', ')} KiB/stream`);
  }
  return rows;
}
