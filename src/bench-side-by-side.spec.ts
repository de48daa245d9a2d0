/**
 * bench/sections/side-by-side.ts: the paired 1,000-stream row gives toolstream and the limit one
 * uncounted run of the row's size before its repetitions, kept apart from the figures. Run against
 * a stand-in pool whose servers deliver what the test says, so the order and the arithmetic are seen.
 */
import { benchConfig } from '../bench/lib/config';
import type { Target } from '../bench/lib/ipc';
import type { MeasuredRun, ServerPool } from '../bench/lib/server-pool';
import type { Scenario } from '../bench/lib/scenario';
import { measureSideBySide } from '../bench/sections/side-by-side';

/** Frames/s of each server once warm; toolstream's and the reference's first run of a size deliver half as many (the limit keeps nothing). */
const RATE: Record<string, number> = { toolstream: 60_000, reference: 2_000, limit: 80_000 };

function standInPool(): { pool: ServerPool; order: string[] } {
  const order: string[] = [];
  const seen = new Set<string>();
  const run = async (target: Target, streams: number, scenario: Scenario): Promise<MeasuredRun> => {
    order.push(`${target} ${streams}`);
    const first = !seen.has(`${target} ${streams}`);
    seen.add(`${target} ${streams}`);
    const framesPerSec = RATE[target] / (first && target !== 'limit' ? 2 : 1);
    const frames = streams * scenario.toolCalls * 2;
    return {
      target,
      result: { streams, completed: streams, cut: 0, failed: 0, frames, elapsedMs: (frames / framesPerSec) * 1000, framesPerSec, clientCpuUs: 0, latency: { p50Ms: 1, p99Ms: 2 } } as unknown as MeasuredRun['result'],
      serverCpuUs: frames * (1e6 / RATE[target]),
      loadAverage: 0,
    };
  };
  return { pool: { run, retire: async () => undefined } as unknown as ServerPool, order };
}

describe('the side-by-side section', () => {
  const config = { ...benchConfig(true), reps: 2, concurrency: [100, 1_000], pairedConcurrency: [1_000], pacedStreams: [] };

  it('runs one uncounted run of toolstream and of the limit before the paired row, and counts only the repetitions', async () => {
    const { pool, order } = standInPool();
    const lines: string[] = [];
    const [unpaired, paired] = await measureSideBySide(config, pool, false, (line) => lines.push(line));
    expect(order.filter((o) => o.endsWith(' 1000'))).toEqual(
      ['toolstream', 'limit', 'toolstream', 'limit', 'limit', 'toolstream', 'reference', 'limit', 'toolstream', 'toolstream', 'limit', 'reference'].map((t) => `${t} 1000`),
    );
    expect(paired.uncountedRuns?.map((r) => [r.target, r.rep])).toEqual([
      ['toolstream', -1],
      ['limit', -1],
    ]);
    expect(paired.runs.every((r) => r.rep >= 0)).toBe(true);
    // The uncounted runs (toolstream's first of the size at half its rate) are in no figure; the reference's first run is counted.
    for (const r of paired.oursOverLimit.reps) expect(r).toBeCloseTo(0.75, 12);
    expect(paired.figures.find((f) => f.target === 'reference')?.framesPerSec.reps.map(Math.round)).toEqual([1_000, 2_000]);
    expect(lines.filter((l) => l.includes(': toolstream uncounted:') || l.includes(': limit uncounted:'))).toHaveLength(2);
    // An unpaired row has none.
    expect(unpaired.uncountedRuns).toBeUndefined();
    expect(unpaired.oursOverLimit.reps.map((r) => r.toFixed(3))).toEqual(['0.375', '0.750']);
  });
});
