/** Linux `perf stat` output, read per thread (bench/frame-syscalls.ts, bench/stream-levels.ts). */

/**
 * `perf stat --per-thread -x,` output summed per event for the main thread and the others. A
 * thread's line can appear twice (perf prints a thread again when it saw it twice): one each.
 */
export function sumPerfStat(text: string, mainTid: number): Map<string, { main: number; others: number }> {
  const seen = new Set<string>();
  const sums = new Map<string, { main: number; others: number }>();
  for (const line of text.split('\n')) {
    const [thread, value, , event] = line.split(',');
    const count = Number(value);
    if (!event || value === '' || !Number.isFinite(count)) continue;
    const key = `${thread},${event}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const tid = Number(thread.slice(thread.lastIndexOf('-') + 1));
    const sum = sums.get(event) ?? { main: 0, others: 0 };
    if (tid === mainTid) sum.main += count;
    else sum.others += count;
    sums.set(event, sum);
  }
  return sums;
}
