/**
 * RSS per open idle stream: a fresh, warmed-up server; RSS after a full GC; N streams opened,
 * each having received its first frame and then nothing; RSS after a full GC again. The
 * difference over N is what one open stream costs the server.
 */
import type { BenchConfig } from '../lib/config';
import { TARGETS, type Target } from '../lib/ipc';
import type { ServerPool } from '../lib/server-pool';
import { median } from '../lib/stats';

export interface IdleMemoryRow {
  target: Target;
  streams: number;
  /** Streams that were open with their first frame when RSS was read (median run). */
  opened: number;
  runs: number;
  rssPerStreamKiB: number;
  rssBeforeMiB: number;
  rssOpenMiB: number;
}

const OPEN_TIME_LIMIT_MS = 120_000;

export async function measureIdleMemory(config: BenchConfig, pool: ServerPool, log: (line: string) => void): Promise<IdleMemoryRow[]> {
  const rows: IdleMemoryRow[] = [];
  for (const streams of config.idleStreams) {
    for (const target of TARGETS) {
      const perStream: number[] = [];
      const before: number[] = [];
      const open: number[] = [];
      const opened: number[] = [];
      const reps = streams <= 1_000 ? config.idleReps.upTo1k : config.idleReps.larger;
      for (let rep = 0; rep < reps; rep++) {
        await pool.retire(target);
        const server = await pool.server(target);
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
        const withFrame = result.frames;
        if (withFrame < streams) log(`idle ${target} ${streams}: only ${withFrame} streams opened (${result.errors.join('; ')})`);
        perStream.push(withFrame > 0 ? (rss1 - rss0) / withFrame / 1024 : NaN);
        before.push(rss0 / 2 ** 20);
        open.push(rss1 / 2 ** 20);
        opened.push(withFrame);
      }
      const row = {
        target,
        streams,
        opened: median(opened),
        runs: reps,
        rssPerStreamKiB: median(perStream),
        rssBeforeMiB: median(before),
        rssOpenMiB: median(open),
      };
      rows.push(row);
      log(`idle ${target} ${streams} streams: ${row.rssPerStreamKiB.toFixed(1)} KiB/stream (${row.rssBeforeMiB.toFixed(0)} → ${row.rssOpenMiB.toFixed(0)} MiB)`);
    }
  }
  return rows;
}
