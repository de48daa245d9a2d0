/**
 * `node -r ts-node/register/transpile-only bench/used-alloc.ts <toolCalls> [--states=fresh,used] [--empty=17200] [--curve=100,1000,3000,10000] [--top=20] [[checkout:]toolstream ...]`
 *
 * What one stream of `toolCalls` calls allocates per frame, by function, on a fresh server and on
 * one that has first served what a full run's curve server serves before it (as bench/used-server.ts
 * replays it: `--empty` empty tasks one after another, then the curves' earlier points, 3
 * repetitions each). V8's sampling heap profile of the stream, every allocation counted (also what
 * the GC collected since), sampled every 16 KiB. Servers run compiled, as in a full run; each
 * (variant, state) gets a new server, which runs one unmeasured stream of `toolCalls` first (the
 * code then optimised as for the profiled one). The columns are the (variant, state) pairs, B per
 * frame; the rows the functions whose figure differs most between them (inlined functions count
 * as their caller, and inlining can differ between servers: compare a caller with its callees).
 * Counts, not times: they do not move with the machine's load.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoadProcess } from './lib/processes';
import { FRAMES_PER_TOOL_CALL } from './lib/scenario';
import { parseVariant, serverProcessOf } from './server-variant';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

function option(args: string[], name: string, fallback: string): string {
  return args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
}

/** Bytes allocated by function (`name file:line`), from a sampling heap profile. */
function byFunction(head: ProfileNode): Map<string, number> {
  const by = new Map<string, number>();
  const walk = (node: ProfileNode): void => {
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName || '(anonymous)'} ${url.replace(/.*\/(node_modules|src|bench)\//, '$1/')}:${lineNumber + 1}`;
    by.set(key, (by.get(key) ?? 0) + node.selfSize);
    node.children.forEach(walk);
  };
  walk(head);
  return by;
}

async function main(args: string[]): Promise<void> {
  const positional = args.filter((a) => !a.startsWith('--'));
  const toolCalls = Number(positional[0]);
  const variants = (positional.length > 1 ? positional.slice(1) : ['toolstream']).map(parseVariant);
  const states = option(args, 'states', 'fresh,used').split(',');
  const emptyTasks = Number(option(args, 'empty', '17200'));
  const curve = option(args, 'curve', '100,1000,3000,10000').split(',').filter(Boolean).map(Number);
  const top = Number(option(args, 'top', '20'));
  if (!(toolCalls > 0) || variants.some((v) => v.target !== 'toolstream')) throw new Error('usage: see the head of bench/used-alloc.ts (toolstream variants only)');
  for (const v of variants) serverProcessOf(v.checkout, true);
  const dir = mkdtempSync(join(tmpdir(), 'used-alloc-'));
  const load = await LoadProcess.start();
  const columns: { key: string; perFrame: number; by: Map<string, number> }[] = [];
  try {
    for (const variant of variants) {
      for (const state of states) {
        const key = `${variant.label} [${state}]`;
        const server = await serverProcessOf(variant.checkout, true).start(variant.target, {}, variant.flags);
        try {
          const run = async (streams: number, calls: number): Promise<number> => {
            const r = await load.run({ url: server.url, streams, maxOpen: 1, scenario: { toolCalls: calls, intervalMs: 0, idle: false }, timeLimitMs: 180_000 });
            if (r.completed !== streams) throw new Error(`${key}: ${r.completed} of ${streams} streams completed (${r.errors.join('; ')})`);
            return r.frames;
          };
          await load.run({ url: server.url, streams: 20, maxOpen: 4, scenario: { toolCalls: 500, intervalMs: 0, idle: false }, timeLimitMs: 60_000 });
          if (state === 'used') {
            for (let done = 0; done < emptyTasks; done += 100) await run(Math.min(100, emptyTasks - done), 0);
            for (const calls of curve) for (let rep = 0; rep < 3; rep++) await run(Math.max(1, Math.round(10_000 / (calls * FRAMES_PER_TOOL_CALL))), calls);
          } else if (state !== 'fresh') throw new Error(`unknown state ${state}`);
          await run(1, toolCalls);
          const file = join(dir, `${columns.length}.heapprofile`);
          await server.startAllocationProfile();
          const frames = await run(1, toolCalls);
          await server.stopAllocationProfile(file);
          const by = byFunction((JSON.parse(readFileSync(file, 'utf8')) as { head: ProfileNode }).head);
          const total = [...by.values()].reduce((a, b) => a + b, 0);
          for (const [k, v] of by) by.set(k, v / frames);
          columns.push({ key, perFrame: total / frames, by });
          console.log(`${key}: ${(total / frames).toFixed(0)} B allocated per frame (sampled)`);
        } finally {
          await server.stop();
        }
      }
    }
  } finally {
    await load.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const names = new Set(columns.flatMap((c) => [...c.by.keys()]));
  const at = (c: (typeof columns)[number], name: string): number => c.by.get(name) ?? 0;
  const spreadOf = (name: string): number => Math.max(...columns.map((c) => at(c, name))) - Math.min(...columns.map((c) => at(c, name)));
  const rows = [...names].sort((a, b) => (columns.length > 1 ? spreadOf(b) - spreadOf(a) : at(columns[0], b) - at(columns[0], a))).slice(0, top);
  console.log(`B per frame, columns: ${columns.map((c, i) => `(${i + 1}) ${c.key}`).join(', ')}`);
  console.log(`${columns.map((c) => c.perFrame.toFixed(0).padStart(7)).join('')}  all`);
  for (const name of rows) console.log(`${columns.map((c) => at(c, name).toFixed(1).padStart(7)).join('')}  ${name}`);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
