/**
 * `node -r ts-node/register/transpile-only bench/kept-string-cost.ts <variant> [reps=4] [--full-gc]`
 *
 * What the young-generation GC pays for text a running task keeps, per object and per byte,
 * away from the server (round 27 `scavenge`): 1,000 tasks take a frame in turn, 200 frames
 * each; every frame makes ~3.3 KB of short-lived garbage (about what a toolstream frame
 * allocates, so that scavenges come as often) and one tool frame's JSON (~110 characters, as
 * JSON.stringify makes it), which each task keeps in lists of 128 slots, as the open event
 * block does, until the repetition ends. The variants:
 * - `keep`: that string (one object per frame);
 * - `half`: a string of half its length instead (one object, half the bytes);
 * - `two`: both halves (two objects, the same bytes as `keep`);
 * - `join8`: each task joins its last eight into one string (the pieces kept until then);
 * - `intern`: `keep`, the string internalized first (a key of a dictionary-mode object, then
 *   deleted): V8 allocates the internalized copy in the old generation. Every repetition's texts
 *   are new (the same texts again would be found in the table, where a server's never are);
 * - `intern-in`: the same by `text in object` (one string-table lookup; the store makes two: the
 *   megamorphic IC's lookup of an existing entry, then the runtime's insert);
 * - `none`: nothing kept.
 * Three more (round 32 `framegc`): what a scavenge pays per old-to-new pointer against per promoted
 * object. Each keeps the string as `keep` does, and each completed frame (every second one: a tool
 * call's started, then its completed frame) also gets a finished entry of four slots in lists of
 * 128, as the task record's finished tools. The lists are old when the young strings are written
 * into them, so every string slot is an old-to-new pointer the next scavenge visits:
 * - `numbers`: the entries hold numbers only (one old-to-new slot per frame: the block's);
 * - `entry`: the entry holds the completed frame's JSON too (the same string: 1.5 slots per frame,
 *   the same objects and bytes as `numbers`), as the task record's finished entries do;
 * - `entry-id`: and a tool call id of its own (`call_N`, made per frame, as a model's or the
 *   bench's ids are: 0.5 objects and 0.5 slots per frame more), as they did before 0d3b1bb.
 * So `entry` − `numbers` is half an old-to-new slot per frame, and `entry-id` − `entry` half a
 * promoted small object with its slot.
 * `--full-gc` runs a full GC between repetitions (node `--expose-gc`): the last one's texts leave
 * the string table, as a server's finished tasks' do at a mark-compact (that GC counts among the
 * next repetition's mark-compacts).
 * It runs itself again under `node --trace-gc-nvp` and prints per repetition the scavenges, their
 * main-thread pause and helper threads' time per frame, the bytes promoted and copied within the
 * young generation per frame, the mark-compacts, and CPU per frame.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const TASKS = 1000;
const FRAMES = 200;
const CHUNK = 128;
const VARIANTS = ['keep', 'half', 'two', 'join8', 'intern', 'intern-in', 'none', 'numbers', 'entry', 'entry-id'];
const RESULT = 'kept-string-cost:';

let sink: unknown;
const INTERNED: Record<string, number> = Object.create(null) as Record<string, number>;

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

/** The text flattened (a `+` makes a string of pieces, and a slice one that points into its parent): what the task record's `flat` does. */
function flat(text: string): string {
  if (text.charCodeAt(0) === 0) throw new Error('unexpected text');
  return text;
}

function put<T>(chunks: T[][], n: number, value: T): void {
  if (n % CHUNK === 0) chunks.push(new Array<T>(CHUNK));
  chunks[chunks.length - 1][n % CHUNK] = value;
}

function run(variant: string): string[][][] {
  repetition += 1;
  const kept: string[][][] = [];
  const pending: string[][] = [];
  const entries: unknown[][][] = [];
  const counts = new Array<number>(TASKS).fill(0);
  for (let t = 0; t < TASKS; t++) {
    kept.push([]);
    pending.push([]);
    entries.push([]);
  }
  for (let f = 0; f < FRAMES; f++) {
    for (let t = 0; t < TASKS; t++) {
      garbage(f);
      const json = frameJson(t, f);
      const chunks = kept[t];
      const n = counts[t]++;
      if (variant === 'none') sink = json;
      else if (variant === 'keep') put(chunks, n, json);
      else if (variant === 'numbers' || variant === 'entry' || variant === 'entry-id') {
        put(chunks, n, json);
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
      else if (variant === 'intern') {
        // The store internalizes the key; nothing reads the object.
        INTERNED[json] = 0;
        Reflect.deleteProperty(INTERNED, json);
        put(chunks, n, json);
      } else if (variant === 'intern-in') {
        if (json in INTERNED) throw new Error('unexpected key');
        put(chunks, n, json);
      } else if (variant === 'half' || variant === 'two') {
        put(chunks, variant === 'two' ? 2 * n : n, flat(json.slice(0, json.length >> 1) + 'z'));
        if (variant === 'two') put(chunks, 2 * n + 1, flat(json.slice(json.length >> 1) + 'z'));
      } else {
        const p = pending[t];
        p.push(json);
        if (p.length === 8) {
          put(chunks, n >> 3, flat(p.join('')));
          p.length = 0;
        }
      }
    }
  }
  if (entries[0].length > 0) sink = entries;
  return kept;
}

function measure(variant: string, reps: number, fullGc: boolean): void {
  let kept: string[][][] | undefined;
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

/** Runs this script again under --trace-gc-nvp and sums each repetition's GCs. */
async function main(): Promise<void> {
  const [variant, repsArg] = process.argv.slice(2);
  const reps = Number(repsArg ?? 4);
  if (!VARIANTS.includes(variant) || !(reps > 0)) throw new Error(`usage: bench/kept-string-cost.ts <${VARIANTS.join('|')}> [reps=4] [--full-gc]`);
  const fullGc = process.argv.includes('--full-gc');
  if (process.argv.includes('--child')) return measure(variant, reps, fullGc);
  const flags = ['--trace-gc-nvp', ...(fullGc ? ['--expose-gc'] : []), ...process.execArgv];
  const child = spawn(process.execPath, [...flags, __filename, variant, String(reps), '--child', ...(fullGc ? ['--full-gc'] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
  const sum = { scavenges: 0, pause: 0, helpers: 0, promoted: 0, copied: 0, markCompacts: 0 };
  const field = (line: string, name: string): number => Number(new RegExp(` ${name}=([\\d.]+)`).exec(line)?.[1] ?? 0);
  for await (const line of createInterface({ input: child.stdout })) {
    if (line.includes(' gc=s ')) {
      sum.scavenges += 1;
      sum.pause += field(line, 'pause');
      sum.helpers += field(line, 'background.scavenge.parallel');
      sum.promoted += field(line, 'promoted');
      sum.copied += field(line, 'new_space_survived');
    } else if (line.includes(' gc=mc ')) sum.markCompacts += 1;
    else if (line.startsWith(RESULT)) {
      const [, kind, framesText, cpu] = line.split(' ');
      const frames = Number(framesText);
      if (kind === 'rep') {
        console.log(
          `${variant}: ${sum.scavenges} scavenges, pause ${((sum.pause * 1000) / frames).toFixed(3)} µs per frame (+ helpers ${((sum.helpers * 1000) / frames).toFixed(3)}), ` +
            `promoted ${(sum.promoted / frames).toFixed(0)} B, copied within the young generation ${(sum.copied / frames).toFixed(0)} B per frame, ${sum.markCompacts} mark-compacts; CPU ${cpu} µs per frame`,
        );
      }
      Object.assign(sum, { scavenges: 0, pause: 0, helpers: 0, promoted: 0, copied: 0, markCompacts: 0 });
    }
  }
  await new Promise((resolve) => child.once('close', resolve));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
