/**
 * `node -r ts-node/register/transpile-only bench/perf-map-newest.ts /tmp/perf-<pid>.map`
 *
 * Makes the JavaScript names of a `perf record` trustworthy: rewrites the map file that node's
 * `--perf-basic-prof` wrote (one line per piece of code as V8 made it: address, size, name) so
 * that where two entries cover the same addresses only the newer one is left. V8 reuses the
 * memory of code it frees or moves, and the file keeps every entry, so without this `perf
 * script` or `perf report` names a hot function by whatever first lived at its address (module
 * bodies run at startup, say `Eval:~ …/ucs2-length.js`: the "stale names" of earlier rounds).
 * Run it after the recording, before `perf script`; the file is rewritten in place (a copy of
 * the original is left beside it, `.orig`). Code made after the samples it should name can
 * only have replaced code that was gone by then, so the newest entry is the one that ran,
 * unless code was freed and its memory reused while perf was still recording: rare once a
 * server is warm, and then a few samples are misnamed instead of most.
 */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';

interface Entry {
  start: number;
  end: number;
  line: string;
}

/** The entries of `lines` that no newer entry overlaps, in their order. */
export function newestEntries(lines: string[]): string[] {
  // Newest first; `kept` holds the kept ranges sorted by start, none overlapping.
  const kept: Entry[] = [];
  const out: string[] = [];
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i];
    const [address, size] = line.split(' ', 2);
    if (size === undefined) continue;
    const start = parseInt(address, 16);
    const end = start + parseInt(size, 16);
    if (!Number.isFinite(start) || !(end > start)) continue;
    // The first kept range that ends after this one starts.
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (kept[mid].end <= start) lo = mid + 1;
      else hi = mid;
    }
    if (lo < kept.length && kept[lo].start < end) continue;
    kept.splice(lo, 0, { start, end, line });
    out.push(line);
  }
  return out.reverse();
}

function main(): void {
  const file = process.argv[2];
  if (!file) throw new Error('usage: perf-map-newest.ts /tmp/perf-<pid>.map');
  const lines = readFileSync(file, 'utf8').split('\n').filter((line) => line !== '');
  const kept = newestEntries(lines);
  copyFileSync(file, `${file}.orig`);
  writeFileSync(file, `${kept.join('\n')}\n`);
  console.log(`${file}: ${lines.length} entries, ${kept.length} kept (${lines.length - kept.length} overlapped by newer code)`);
}

if (require.main === module) main();
