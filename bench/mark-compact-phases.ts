/**
 * `node -r ts-node/register/transpile-only bench/mark-compact-phases.ts <log> [<log>...] [--after=<text>] [--pid=<pid>] [--each]`
 *
 * What each mark-compact's main-thread pause is made of, read from a server's `--trace-gc-nvp`
 * lines (and `--trace-incremental-marking`'s, when given too): the bench's servers write V8's
 * traces to the script's stdout, so e.g.
 * `bench/paced-latency.ts 100 24 toolstream-redis --server-flags=--trace-gc-nvp,--trace-incremental-marking > log`
 * or `bench/side-redis-history.ts used 4 --idle-after-curves=60 --idle-between=20 --server-flags=...`.
 * `--after=<text>` counts only the mark-compacts after the first line holding that text (e.g.
 * `rep 0` to leave out the server's start and warm-up); `--pid` only the lines of that server
 * (V8 starts each with `[<pid>:`; for a log of several targets' servers); `--each` prints every one.
 *
 * Prints min / median / max over the mark-compacts of: the pause and its phases (mark, and in it
 * the roots and the closure left after incremental marking; clear, and in it weak references and
 * weak collections (WeakMap / WeakSet entries); evacuate, and in it the copy and the pointer
 * updates; finish, and in it the ArrayBuffer extensions' sweep; sweep), the incremental marking
 * that led to it (main-thread steps, the longest, and the ArrayBuffer sweep its start waits for),
 * the heap before and after, and the reasons incremental marking started. nvp's times are wall
 * time: on a loaded machine a pause also holds time its helper threads or itself waited for a
 * core. The main thread's own CPU in each pause (one-off, not in this script): `perf record -F
 * 2000 -g -t <server pid>` over the run, the samples under `Heap::MarkCompact` grouped by time.
 */
import { readFileSync } from 'node:fs';
import { percentile } from './lib/stats';

/** The nvp fields printed, with a label; sizes are shown in MiB. */
const FIELDS: [string, string][] = [
  ['pause', 'pause'],
  ['mark', 'mark'],
  ['mark.roots', '  roots'],
  ['mark.full_closure_parallel', '  closure (parallel)'],
  ['mark.ephemeron.marking', '  ephemerons'],
  ['clear', 'clear'],
  ['clear.weak_references', '  weak references'],
  ['clear.weak_collections', '  weak collections'],
  ['clear.maps', '  maps'],
  ['evacuate', 'evacuate'],
  ['evacuate.copy', '  copy'],
  ['evacuate.rebalance', '  rebalance'],
  ['evacuate.update_pointers', '  update pointers'],
  ['evacuate.update_pointers.to_new_roots', '    to new roots'],
  ['evacuate.update_pointers.slots.main', '    slots (main)'],
  ['finish', 'finish'],
  ['finish.sweep_array_buffers', '  array buffers'],
  ['sweep', 'sweep'],
  ['incremental', 'incremental steps (main thread, in all)'],
  ['incremental_steps_count', '  steps'],
  ['incremental_longest_step', '  longest step'],
  ['incremental.sweep_array_buffers', '  array buffers at its start'],
  ['background.mark', 'marking on helper threads'],
  ['total_size_before', 'heap before (MiB)'],
  ['total_size_after', 'heap after (MiB)'],
  ['promoted', 'promoted (MiB)'],
];

const SIZES = new Set(['total_size_before', 'total_size_after', 'promoted']);

function option(name: string): string | undefined {
  return process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
}

function fieldsOf(line: string): Map<string, number> {
  const fields = new Map<string, number>();
  for (const [, key, value] of line.matchAll(/(\S+?)=(-?[\d.]+)/g)) fields.set(key, Number(value));
  return fields;
}

function main(): void {
  const files = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const after = option('after');
  const each = process.argv.includes('--each');
  const pid = option('pid');
  const compacts: Map<string, number>[] = [];
  const starts = new Map<string, number>();
  for (const file of files) {
    let counting = after === undefined;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!counting) {
        counting = line.includes(after as string);
        continue;
      }
      if (pid !== undefined && line.startsWith('[') && !line.startsWith(`[${pid}:`)) continue;
      if (line.includes('gc=mc')) compacts.push(fieldsOf(line));
      const start = /\[IncrementalMarking\] Start \(([^)]+)\)/.exec(line);
      if (start) starts.set(start[1], (starts.get(start[1]) ?? 0) + 1);
    }
  }
  console.log(`${compacts.length} mark-compacts in ${files.join(', ')}${after === undefined ? '' : ` after "${after}"`} (ms unless said; min / median / max)`);
  if (compacts.length === 0) return;
  for (const [key, label] of FIELDS) {
    const values = compacts.map((c) => (c.get(key) ?? NaN) / (SIZES.has(key) ? 2 ** 20 : 1)).filter(Number.isFinite);
    if (values.length === 0) continue;
    const digits = key === 'incremental_steps_count' ? 0 : 1;
    console.log(`  ${label.padEnd(42)} ${[0, 50, 100].map((p) => percentile(values, p).toFixed(digits).padStart(7)).join(' /')}`);
  }
  if (starts.size > 0) console.log(`  incremental marking started by: ${[...starts].map(([reason, n]) => `${reason} ${n}`).join(', ')}`);
  if (each) {
    for (const c of compacts) {
      console.log(`  ${FIELDS.filter(([key]) => !key.includes('.') || key.startsWith('evacuate.')).map(([key]) => `${key}=${((c.get(key) ?? NaN) / (SIZES.has(key) ? 2 ** 20 : 1)).toFixed(1)}`).join(' ')}`);
    }
  }
}

main();
