/**
 * `node -r ts-node/register/transpile-only bench/old-to-new-slots.ts <variant> [reps=4]`
 *
 * What a scavenge pays per old-to-new pointer against per promoted object, away from the server
 * (round 32 `framegc`; built on bench/kept-string-cost.ts): 1,000 tasks take a frame in turn, 200
 * frames each (a tool call's started, then its completed frame); every frame makes ~3.3 KB of
 * short-lived garbage and one tool frame's JSON (~110 characters, as JSON.stringify makes it),
 * kept in each task's lists of 128 slots, as the open event block keeps it. Each completed frame
 * also gets a finished entry of four slots (id, JSON, two numbers) in lists of 128, as the task
 * record's finished tools. The lists are old when the young strings are written into them, so
 * every string slot is an old-to-new pointer the next scavenge visits. The variants:
 * - `numbers`: the entries hold numbers only (one old-to-new slot per frame: the block's);
 * - `entry`: the entry holds the completed frame's JSON too (the same string: 1.5 slots per frame,
 *   the same objects and bytes as `numbers`), as the task record's finished entries do;
 * - `entry-id`: and a tool call id of its own (`call_N`, made per frame, as a model's or the
 *   bench's ids are: 0.5 objects and 0.5 slots per frame more), as they did before 0d3b1bb.
 * So `entry` − `numbers` is half an old-to-new slot per frame, and `entry-id` − `entry` half a
 * promoted small object with its slot. It runs itself again under `node --trace-gc-nvp` and
 * prints per repetition the scavenges, their main-thread pause and helper threads' time per
 * frame, the bytes promoted and copied within the young generation per frame, the mark-compacts,
 * and CPU per frame. Pauses move with the machine's load: run the variants in turn, several times.
 */
import { printNvpByRepetition } from './lib/nvp-repetitions';

const TASKS = 1000;
const FRAMES = 200;
const CHUNK = 128;
const VARIANTS = ['numbers', 'entry', 'entry-id'];
const RESULT = 'old-to-new-slots:';

let sink: unknown;

/** ~3.3 KB of short-lived objects and strings. */
function garbage(i: number): void {
  const list: object[] = [];
  for (let k = 0; k < 24; k++) list.push({ k, i, s: 'x' + k, next: null });
  sink = list;
  sink = JSON.stringify({ i, n: list.length }) + 'y'.repeat(20);
}

/** Counts repetitions, so that each one's texts differ from the last one's (see `intern`). */
let repetition = 0;

function frameJson(task: number, i: number): string {
  const publishedAtUs = 1_733_450_000_000_000 + repetition * 1_000_000_000 + i * 7 + task;
  const json = JSON.stringify({ toolCallId: `call_${i >> 1}`, name: 'bench_tool', phase: i & 1 ? 'completed' : 'started', result: { seq: i, publishedAtUs } });
  // Flattened, as the task record's `flat` does.
  if (json.charCodeAt(0) !== 123) throw new Error('not JSON');
  return json;
}

function put(chunks: unknown[][], n: number, value: unknown): void {
  if (n % CHUNK === 0) chunks.push(new Array<unknown>(CHUNK));
  chunks[chunks.length - 1][n % CHUNK] = value;
}

function run(variant: string): unknown[][][] {
  repetition += 1;
  const kept: unknown[][][] = [];
  const entries: unknown[][][] = [];
  const counts = new Array<number>(TASKS).fill(0);
  for (let t = 0; t < TASKS; t++) {
    kept.push([]);
    entries.push([]);
  }
  for (let f = 0; f < FRAMES; f++) {
    for (let t = 0; t < TASKS; t++) {
      garbage(f);
      const json = frameJson(t, f);
      const n = counts[t]++;
      put(kept[t], n, json);
      // A completed frame: its tool's finished entry (four slots).
      if ((f & 1) === 1) {
        const e = 4 * (f >> 1);
        const list = entries[t];
        put(list, e, variant === 'entry-id' ? ['call', String(f >> 1)].join('_') : 1 + (f >> 1));
        put(list, e + 1, variant === 'numbers' ? f : json);
        put(list, e + 2, f * 4);
        put(list, e + 3, f - 1);
      }
    }
  }
  sink = entries;
  return kept;
}

function measure(variant: string, reps: number, fullGc: boolean): void {
  let kept: unknown[][][] | undefined;
  // The first run warms up; its GC lines end at its result line.
  for (let rep = 0; rep <= reps; rep++) {
    kept = undefined;
    if (fullGc) (globalThis as unknown as { gc(): void }).gc();
    const cpu = process.cpuUsage();
    kept = run(variant);
    const used = process.cpuUsage(cpu);
    const frames = TASKS * FRAMES;
    console.log(`${RESULT} ${rep === 0 ? 'warm-up' : 'rep'} ${frames} ${((used.user + used.system) / frames).toFixed(2)} ${kept.length} ${typeof sink}`);
  }
}

/** Runs this script again under --trace-gc-nvp and prints each repetition's GCs summed (lib/nvp-repetitions.ts). */
async function main(): Promise<void> {
  const [variant, repsArg] = process.argv.slice(2);
  const reps = Number(repsArg ?? 4);
  if (!VARIANTS.includes(variant) || !(reps > 0)) throw new Error(`usage: bench/old-to-new-slots.ts <${VARIANTS.join('|')}> [reps=4]`);
  const fullGc = process.argv.includes('--full-gc');
  if (process.argv.includes('--child')) return measure(variant, reps, fullGc);
  await printNvpByRepetition(__filename, RESULT, variant, reps, fullGc);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
