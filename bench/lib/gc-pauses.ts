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
