/**
 * The garbage collector's pauses in this process, by kind, while watched: for the in-process
 * scripts (bench/empty-task-gc.ts, bench/frame-cost.ts) that run a server beside the watch.
 */
import { PerformanceObserver, constants } from 'node:perf_hooks';

const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};

export type GcPausesByKind = Map<string, { count: number; ms: number }>;

/** Starts counting GC pauses; `stop` waits `settleMs` (entries arrive after their pause) and returns them. */
export function watchGcPauses(): { stop: (settleMs: number) => Promise<GcPausesByKind> } {
  const pauses: GcPausesByKind = new Map();
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = KINDS[(entry as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'other';
      const seen = pauses.get(kind) ?? { count: 0, ms: 0 };
      seen.count += 1;
      seen.ms += entry.duration;
      pauses.set(kind, seen);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    stop: async (settleMs) => {
      await new Promise((resolve) => setTimeout(resolve, settleMs));
      observer.disconnect();
      return pauses;
    },
  };
}

/** A server's GC pauses over a run (ms), as bench/servers/serve.ts reports them. */
export interface GcPauses {
  scavenges: number[];
  others: number[];
}

/**
 * A server's GC over one run, and the old generation's free bytes when the run started
 * (committed but unused, left by earlier collections): a scavenge promotes into that space
 * without taking new pages, and a server that has none (fresh, or shrunk while idle) pays for
 * new pages (docs/deploying.md, "A fresh server's scavenges").
 */
export interface GcDuringRun extends GcPauses {
  oldSpaceFreeBytesAtStart: number;
  /** The young generation's capacity when the run started and when it ended (V8 shrinks it while a server idles). */
  newSpaceBytesAtStart: number;
  newSpaceBytesAtEnd: number;
}

/** Pauses sorted, with their median and max (0 when there are none). */
function pauseStats(pauses: number[]): { sorted: number[]; median: number; max: number } {
  const sorted = [...pauses].sort((a, b) => a - b);
  return { sorted, median: sorted[sorted.length >> 1] ?? 0, max: sorted[sorted.length - 1] ?? 0 };
}

/** Median and max of a run's scavenge pauses (ms), with their count, the old space's free MiB at its start and the young generation's MiB at its start and end: what results.json keeps. */
export function gcFigures(gc: GcDuringRun): {
  scavenges: number;
  scavengeMedianMs: number;
  scavengeMaxMs: number;
  otherGcs: number;
  oldSpaceFreeMiBAtStart: number;
  newSpaceMiBAtStart: number;
  newSpaceMiBAtEnd: number;
} {
  const { sorted, median, max } = pauseStats(gc.scavenges);
  return {
    scavenges: sorted.length,
    scavengeMedianMs: median,
    scavengeMaxMs: max,
    otherGcs: gc.others.length,
    oldSpaceFreeMiBAtStart: gc.oldSpaceFreeBytesAtStart / 2 ** 20,
    newSpaceMiBAtStart: gc.newSpaceBytesAtStart / 2 ** 20,
    newSpaceMiBAtEnd: gc.newSpaceBytesAtEnd / 2 ** 20,
  };
}

/** One run's figures as the sections log them: scavenges × median/max pause, the other GCs' count, old space free at the start, young generation at the start → end. */
export function describeRunGc(gc: ReturnType<typeof gcFigures> | undefined): string {
  return gc
    ? `${gc.scavenges} × ${gc.scavengeMedianMs.toFixed(1)}/${gc.scavengeMaxMs.toFixed(1)} ms, other GCs ${gc.otherGcs}, ${gc.oldSpaceFreeMiBAtStart.toFixed(1)} MiB free, young ${gc.newSpaceMiBAtStart.toFixed(1)} → ${gc.newSpaceMiBAtEnd.toFixed(1)} MiB`
    : '-';
}

/** Scavenges: count, median, max, over 5 ms, total; the other GCs: count, total (ms). */
export function gcSummary({ scavenges, others }: GcPauses): string {
  const { sorted, median, max } = pauseStats(scavenges);
  const total = (pauses: number[]): string => pauses.reduce((sum, ms) => sum + ms, 0).toFixed(1);
  return (
    `scavenges ${sorted.length} (median ${median.toFixed(2)}, max ${max.toFixed(2)}, ` +
    `${sorted.filter((ms) => ms > 5).length} over 5 ms, ${total(sorted)} ms in all), other GCs ${others.length} (${total(others)} ms)`
  );
}
