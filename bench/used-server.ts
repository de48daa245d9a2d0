/**
 * `node -r ts-node/register/transpile-only bench/used-server.ts <rounds> <toolCalls> [reps=2] [--states=fresh,used] [--empty=26400] [--curve=100,1000,3000,10000] [--rows=] [--streams=1] [--idle=10000] [--profile=<dir>] <[checkout:]target[ flag,flag]>...`
 *
 * One stream of `toolCalls` calls on a fresh server against one that has first served what a
 * full bench run's curve server serves before the curves' last point: the empty-task section
 * (`--empty` tasks one after another: its 12,000 warm-up tasks and 3 x 4 x 1,200 in its
 * repetitions, two uncounted and two counted runs each since toolstream is paired with the
 * limit; the store keeps the last 10,000
 * finished for replay), then the curves' earlier points (3
 * repetitions each, tasks one after another up to 10,000 frames per repetition, as in
 * bench/lib/config.ts's full config). `--states=used:empty` or `used:curve` replays only one of
 * the two. Every server runs under `--trace-gc-nvp`; for each measured stream the script prints
 * the server's CPU per frame, frames/s, and the GCs of that stream by kind: count, pause, and
 * for scavenges the bytes promoted per frame, for mark-compacts the heap they started from and
 * their marking time (main thread + helper threads). Each (variant, state) pair gets a new server
 * per round; rounds rotate the order. The byte and count figures do not move with load; the CPU
 * figures do: compare pairs of one sitting.
 *
 * `--streams=N` makes each measured run N streams of `toolCalls` calls, all open at once (the
 * side-by-side section's flat-out rows: `--streams=1000` with 100 calls is the 1,000-stream
 * target's row, 200,000 frames per run). `--rows=100,...` has a used server first serve those
 * flat-out rows, 3 runs each of that many streams x `toolCalls` (the full run's 100-stream row
 * comes before the 1,000-stream one). A curve point listed twice in `--curve` runs twice as many
 * repetitions (the full run's 30,000 point is paired: 6 runs). Each measured run also prints the
 * server's heap used at its start (what earlier runs promoted and no mark-compact has freed yet
 * included).
 */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { LoadProcess } from './lib/processes';
import { FRAMES_PER_TOOL_CALL } from './lib/scenario';
import { spread } from './lib/stats';
import { parseVariant, serverProcessOf } from './server-variant';

const MARK = 'used-server:';

function option(args: string[], name: string, fallback: string): string {
  return args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
}

/** What the server did between two marks: its GC lines summed. */
class GcWindow {
  readonly kinds = new Map<string, { count: number; pauseMs: number }>();
  promoted = 0;
  /** Bytes scavenges copied within the young generation (survived once). */
  survived = 0;
  allocated = 0;
  mcHeapBefore: number[] = [];
  mcMarkMs = 0;
  mcBackgroundMarkMs = 0;
  /** With --trace-opt / --trace-deopt on the server: functions optimised, and deoptimisations. */
  optimised = 0;
  deopts = 0;
  /** Their compile time (--trace-opt's "took a, b, c ms"): on the main thread (a + c) and off it (b, on a helper thread when compiled concurrently). */
  compileMainMs = 0;
  compileOffMs = 0;

  add(line: string): void {
    const kind = / gc=(\w+)/.exec(line)?.[1];
    if (!kind) return;
    const num = (field: string): number => Number(new RegExp(` ${field.replace(/\./g, '\\.')}=([\\d.]+)`).exec(line)?.[1] ?? 0);
    const seen = this.kinds.get(kind) ?? { count: 0, pauseMs: 0 };
    seen.count += 1;
    seen.pauseMs += num('pause');
    this.kinds.set(kind, seen);
    if (kind === 's') {
      this.promoted += num('promoted');
      this.survived += num('new_space_survived');
      this.allocated += num('allocated');
    } else if (kind === 'mc') {
      this.mcHeapBefore.push(num('total_size_before'));
      this.mcMarkMs += num('mark') + num('incremental');
      this.mcBackgroundMarkMs += num('background.mark');
    }
  }

  describe(frames: number): string {
    const kinds = [...this.kinds].map(([k, v]) => `${k} ${v.count}x ${v.pauseMs.toFixed(1)} ms`).join(', ');
    const mc = this.mcHeapBefore.length
      ? `; mark-compacts from ${this.mcHeapBefore.map((b) => (b / 2 ** 20).toFixed(0)).join('/')} MiB, marking ${this.mcMarkMs.toFixed(1)} ms main + ${this.mcBackgroundMarkMs.toFixed(1)} ms helpers`
      : '';
    const jit =
      this.optimised || this.deopts
        ? `; ${this.optimised} functions optimised (compiling ${this.compileMainMs.toFixed(0)} ms main + ${this.compileOffMs.toFixed(0)} ms helpers), ${this.deopts} deoptimisations`
        : '';
    return `GC ${kinds || 'none'}; scavenges promoted ${(this.promoted / frames).toFixed(0)} B, kept young ${(this.survived / frames).toFixed(0)} B and allocated ${(this.allocated / frames).toFixed(0)} B per frame${mc}${jit}`;
  }
}

/** CPU ticks (user + system, 1/100 s) of the process's main thread and of all its other threads, and its minor page faults. */
function threadTicks(pid: number | undefined): { main: number; others: number; faults: number } {
  const ticks = { main: 0, others: 0, faults: 0 };
  if (pid === undefined) return ticks;
  const own = readFileSync(`/proc/${pid}/stat`, 'utf8');
  ticks.faults = Number(own.slice(own.lastIndexOf(')') + 2).split(' ')[7]);
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const used = Number(fields[11]) + Number(fields[12]);
    if (Number(tid) === pid) ticks.main += used;
    else ticks.others += used;
  }
  return ticks;
}

/** The parent: runs the script again with its stdout (and so the servers' GC lines) piped, and sums them between marks. */
async function parent(args: string[]): Promise<void> {
  const child = spawn(process.execPath, [...process.execArgv, __filename, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, USED_SERVER_CHILD: '1' } });
  let window: GcWindow | undefined;
  const summary = new Map<string, { cpu: number[]; main: number[]; others: number[]; fps: number[]; promoted: number[]; young: number[]; faults: number[]; mc: number[] }>();
  for await (const line of createInterface({ input: child.stdout })) {
    if (line.startsWith(`${MARK} start`)) {
      window = new GcWindow();
    } else if (line.startsWith(`${MARK} end `)) {
      const [key, frames, cpuUs, fps, mainUs, othersUs, faults] = JSON.parse(line.slice(`${MARK} end `.length)) as [string, number, number, number, number, number, number];
      const w = window ?? new GcWindow();
      window = undefined;
      console.log(`${key}: ${(cpuUs / frames).toFixed(1)} µs per frame (main thread ${mainUs.toFixed(1)}, other threads ${othersUs.toFixed(1)}), ${fps.toFixed(0)} frames/s, ${(faults * 1000).toFixed(1)} page faults per 1,000 frames; ${w.describe(frames)}`);
      const s = summary.get(key) ?? { cpu: [], main: [], others: [], fps: [], promoted: [], young: [], faults: [], mc: [] };
      s.cpu.push(cpuUs / frames);
      s.main.push(mainUs);
      s.others.push(othersUs);
      s.faults.push(faults * 1000);
      s.young.push(w.survived / frames);
      s.fps.push(fps);
      s.promoted.push(w.promoted / frames);
      s.mc.push(w.kinds.get('mc')?.count ?? 0);
      summary.set(key, s);
    } else if (/ gc=\w+ /.test(line)) {
      if (window) window.add(line);
      else if (/ gc=mc /.test(line)) {
        // Its marking too: the end's full GC marks what the server retains (what a mark-compact falling into a stream marks).
        const num = (field: string): number => Number(new RegExp(` ${field.replace(/\./g, '\\.')}=([\\d.]+)`).exec(line)?.[1] ?? 0);
        console.log(
          `  (a mark-compact between measured streams, from ${(num('total_size_before') / 2 ** 20).toFixed(0)} MiB to ${(num('total_size_after') / 2 ** 20).toFixed(0)}, marking ${(num('mark') + num('incremental')).toFixed(1)} ms main + ${num('background.mark').toFixed(1)} ms helpers)`,
        );
      }
    } else if (line.startsWith('[completed compiling') || line.startsWith('[completed optimizing')) {
      if (window) {
        window.optimised += 1;
        const took = / took ([\d.]+), ([\d.]+), ([\d.]+) ms/.exec(line);
        if (took) {
          window.compileMainMs += Number(took[1]) + Number(took[3]);
          window.compileOffMs += Number(took[2]);
        }
      }
    } else if (line.startsWith('[bailout')) {
      if (window) window.deopts += 1;
    } else if (line.startsWith(MARK)) {
      console.log(line.slice(MARK.length + 1));
    } else if (!line.startsWith('[')) {
      console.log(line);
    }
  }
  await new Promise((done) => child.once('close', done));
  const mmm = (xs: number[], digits: number): string => {
    const s = spread(xs);
    return `${s.min.toFixed(digits)} / ${s.median.toFixed(digits)} / ${s.max.toFixed(digits)}`;
  };
  console.log('min / median / max over every measured stream:');
  for (const [key, s] of summary) {
    console.log(`  ${key}: ${mmm(s.cpu, 1)} µs per frame (main thread ${mmm(s.main, 1)}, other threads ${mmm(s.others, 1)}), ${mmm(s.fps, 0)} frames/s, ${mmm(s.promoted, 0)} B promoted and ${mmm(s.young, 0)} B kept young per frame, ${mmm(s.faults, 1)} page faults per 1,000 frames, ${mmm(s.mc, 0)} mark-compacts per stream`);
  }
}

async function child(args: string[]): Promise<void> {
  const positional = args.filter((a) => !a.startsWith('--'));
  const [rounds, toolCalls] = positional.slice(0, 2).map(Number);
  const reps = Number(positional[2] ?? 2);
  const variants = positional.slice(/^\d+$/.test(positional[2] ?? '') ? 3 : 2).map(parseVariant);
  const states = option(args, 'states', 'fresh,used').split(',');
  const emptyTasks = Number(option(args, 'empty', '26400'));
  const idleMs = Number(option(args, 'idle', '10000'));
  const profileDir = option(args, 'profile', '');
  const curve = option(args, 'curve', '100,1000,3000,10000').split(',').filter(Boolean).map(Number);
  const rows = option(args, 'rows', '').split(',').filter(Boolean).map(Number);
  const streams = Number(option(args, 'streams', '1'));
  if (!(rounds > 0 && toolCalls > 0 && reps > 0 && streams > 0) || variants.length === 0) throw new Error('usage: see the head of bench/used-server.ts');
  for (const v of variants) serverProcessOf(v.checkout, true);
  const load = await LoadProcess.start();
  const pairs = variants.flatMap((variant) => states.map((state) => ({ variant, state })));
  try {
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < pairs.length; k++) {
        const { variant, state } = pairs[(k + round) % pairs.length];
        const key = `${variant.label} [${state}]`;
        // `+idle`: the server sits idle before each measured stream and after each curve run, as
        // the curve server does while the other servers take their turn.
        const idle = state.endsWith('+idle') ? (): Promise<void> => new Promise((done) => setTimeout(done, idleMs)) : (): Promise<void> => Promise.resolve();
        const history = state.replace(/\+idle$/, '');
        const server = await serverProcessOf(variant.checkout, true).start(variant.target, {}, ['--trace-gc-nvp', ...variant.flags]);
        try {
          const run = async (count: number, calls: number, maxOpen: number | undefined = 1): Promise<void> => {
            const r = await load.run({ url: server.url, streams: count, maxOpen, scenario: { toolCalls: calls, intervalMs: 0, idle: false }, timeLimitMs: 180_000 });
            if (r.completed !== count) throw new Error(`${key}: ${r.completed} of ${count} streams completed (${r.errors.join('; ')})`);
          };
          await load.run({ url: server.url, streams: 20, maxOpen: 4, scenario: { toolCalls: 500, intervalMs: 0, idle: false }, timeLimitMs: 60_000 });
          if (history === 'used' || history === 'used:empty') for (let done = 0; done < emptyTasks; done += 100) await run(Math.min(100, emptyTasks - done), 0);
          if (history === 'used' || history === 'used:curve') {
            for (const calls of curve) {
              for (let rep = 0; rep < 3; rep++) {
                await run(Math.max(1, Math.round(10_000 / (calls * FRAMES_PER_TOOL_CALL))), calls);
                await idle();
              }
            }
            for (const count of rows) {
              for (let rep = 0; rep < 3; rep++) {
                await run(count, toolCalls, undefined);
                await idle();
              }
            }
          }
          const held = await server.memory(false);
          console.log(`${MARK} ${key}: heap used ${(held.heapUsed / 2 ** 20).toFixed(1)} MiB before the measured streams, load average ${loadavg()[0].toFixed(1)}`);
          for (let rep = 0; rep < reps; rep++) {
            await idle();
            // Not gcPauses(): its observer would be in every later stream, and the full run's flat-out rows run without it.
            const heapAtStart = await server.memory(false);
            console.log(`${MARK} run ${rep + 1}: heap used ${(heapAtStart.heapUsed / 2 ** 20).toFixed(1)} MiB at its start, load average ${loadavg()[0].toFixed(1)}`);
            const c0 = await server.cpuUs();
            const t0 = threadTicks(server.pid);
            console.log(`${MARK} start`);
            if (profileDir) await server.startProfile();
            const r = await load.run({ url: server.url, streams, scenario: { toolCalls, intervalMs: 0, idle: false }, timeLimitMs: 180_000 });
            const used = (await server.cpuUs()) - c0;
            const t1 = threadTicks(server.pid);
            if (profileDir) await server.stopProfile(join(resolve(profileDir), `${state}-${round + 1}-${rep + 1}.cpuprofile`));
            if (r.completed !== streams) throw new Error(`${key}: ${r.completed} of ${streams} measured streams completed (${r.errors.join('; ')})`);
            console.log(`${MARK} end ${JSON.stringify([key, r.frames, used, r.framesPerSec, ((t1.main - t0.main) * 1e4) / r.frames, ((t1.others - t0.others) * 1e4) / r.frames, (t1.faults - t0.faults) / r.frames])}`);
          }
          const after = await server.memory(true);
          console.log(`${MARK} ${key}: heap used ${(after.heapUsed / 2 ** 20).toFixed(1)} MiB after a full GC at the end, round ${round + 1}`);
        } finally {
          await server.stop();
        }
      }
    }
  } finally {
    await load.stop();
  }
}

const argv = process.argv.slice(2);
(process.env.USED_SERVER_CHILD ? child(argv) : parent(argv)).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
