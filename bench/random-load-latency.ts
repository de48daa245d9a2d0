/**
 * `node -r ts-node/register/transpile-only bench/random-load-latency.ts [reps=3]`
 *
 * What one load from a random place in memory costs on this machine, by how much memory the
 * places are spread over (round 28 `strtable`): a chain of 64-byte steps in random order
 * through a typed array of 0.25-256 MB, each load's address given by the last one, so nothing
 * overlaps. A string-table lookup of a new text is such a chain in V8 11.3: the table's slot,
 * then the header of each string met on the way (the table keeps pointers, not hashes), both
 * anywhere in a table and old generation of tens of MB in a server with 1,000 live tasks.
 * Prints ns per load, min / median / max over the repetitions.
 */
import { loadavg } from 'node:os';

const SIZES_MB = [0.25, 1, 4, 16, 64, 256];
const STEPS = 2_000_000;
const LINE = 16; // 64 bytes of 32-bit slots

function chain(mb: number): Int32Array {
  const slots = new Int32Array((mb * 1024 * 1024) / 4);
  const lines = slots.length / LINE;
  const order = new Int32Array(lines);
  for (let i = 0; i < lines; i++) order[i] = i;
  for (let i = lines - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  for (let i = 0; i < lines; i++) slots[order[i] * LINE] = order[(i + 1) % lines] * LINE;
  return slots;
}

function nsPerLoad(slots: Int32Array): number {
  let at = 0;
  const start = process.hrtime.bigint();
  for (let s = 0; s < STEPS; s++) at = slots[at];
  const ns = Number(process.hrtime.bigint() - start) / STEPS;
  if (at < 0) throw new Error('unreachable');
  return ns;
}

const reps = Number(process.argv[2] ?? 3);
if (!(reps > 0)) throw new Error('usage: bench/random-load-latency.ts [reps=3]');
for (const mb of SIZES_MB) {
  const slots = chain(mb);
  nsPerLoad(slots); // warm-up: pages touched, code optimized
  const ns = Array.from({ length: reps }, () => nsPerLoad(slots)).sort((a, b) => a - b);
  console.log(`${mb} MB: ${ns[0].toFixed(1)} / ${ns[ns.length >> 1].toFixed(1)} / ${ns[ns.length - 1].toFixed(1)} ns per dependent load (min / median / max of ${reps}); load average ${loadavg()[0].toFixed(1)}`);
}
