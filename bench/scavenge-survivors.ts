/**
 * `node -r ts-node/register/transpile-only bench/scavenge-survivors.ts <streams> <toolCalls> [--target=limit] [--at=0.5] [--top=30] [--sites]`
 *
 * What a run's live tasks keep, by object count and type: what the young-generation GC copies
 * and promotes (round 27 `scavenge`). The server runs in this process (as bench/frame-cost.ts),
 * the load generator in its own. After a warm-up run a heap snapshot is taken and counted by
 * type; the same run starts again, and once `at` of its frames have gone by (toolstream: its
 * tool frames counted at TaskRecord.toolFrame; the limit: by the warm-up's frames/s) a second
 * one is taken. What the second holds more than the first, by type (strings by what their text
 * is: a frame's JSON, an event's, a tool call id…), per frame sent by then, is what the run's
 * tasks keep: objects, bytes and pointer fields (what the scavenger visits in each object it
 * copies). Then who holds the four types that grew most (the holder's type and field, and for
 * a list its own holder). By count differences (Node's native nodes carry ids out of
 * allocation order, so a bound on the first snapshot's ids does not say what is new). A snapshot
 * runs a full GC first: these are what is alive, not what a
 * scavenge promoted that died since (`node --trace-gc-nvp` runs of bench/frame-cost.ts give
 * those bytes, and each scavenge phase's time).
 * `--sites` instead samples, over a whole run, what outlives a scavenge (V8's sampling heap
 * profile without what scavenges collect; two scavenges before the stop), by allocation site,
 * in bytes per frame (`node --no-turbo-inlining` splits inlined functions). Read it beside
 * nvp's bytes promoted: with the profile on, toolstream's sampled total (330-368 B per frame)
 * came out above what nvp counts promoted without it (262-275), with ~32 B per frame at the
 * JSON.stringify call of a tool frame's event (a cons string's size): cons strings a profiler
 * keeps that scavenges otherwise drop, I think (not checked in V8).
 */
import type { Server } from 'node:http';
import { Session } from 'node:inspector';
import { loadavg } from 'node:os';
import { allocationSites, type AllocationNode } from './lib/allocation-sites';
import { youngCollector } from './lib/collect-young';
import { LoadProcess } from './lib/processes';
import { inspectorPost as post } from './lib/inspector-post';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

type Counts = { count: number; bytes: number; pointers: number };
type Census = Map<string, Counts>;

async function takeSnapshot(session: Session): Promise<Snapshot> {
  const chunks: string[] = [];
  const onChunk = (m: { params: { chunk: string } }): void => void chunks.push(m.params.chunk);
  session.on('HeapProfiler.addHeapSnapshotChunk', onChunk);
  await post(session, 'HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  session.off('HeapProfiler.addHeapSnapshotChunk', onChunk);
  return JSON.parse(chunks.join('')) as Snapshot;
}

/** What a string is, by its text (a snapshot names a string by its text). */
function kindOf(text: string): string {
  if (text.startsWith('{"toolCallId"')) return "a frame's JSON";
  if (/^\{"(task|statusUpdate|artifactUpdate)"/.test(text)) return "an event's JSON";
  if (/^call_\d+$/.test(text)) return 'a tool call id';
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-/.test(text)) return 'a uuid';
  if (/^-?\d+$/.test(text)) return "a number's digits";
  if (text.startsWith('id: ')) return 'an SSE message';
  return 'other';
}

/** A node's type as these counts name it: strings by their kind, objects by their constructor. */
function labelOf(s: Snapshot, node: number): string {
  const fields = s.snapshot.meta.node_fields;
  const type = s.snapshot.meta.node_types[0][s.nodes[node + fields.indexOf('type')]];
  const name = s.strings[s.nodes[node + fields.indexOf('name')]];
  if (type === 'string' || type === 'concatenated string' || type === 'sliced string') return `${type}: ${kindOf(name)}`;
  if (type === 'number') return 'heap number';
  return `${type} ${name}`.slice(0, 70);
}

/** Every object of the snapshot by type: count, bytes, pointer fields. */
function census(s: Snapshot): Census {
  const meta = s.snapshot.meta;
  const n = meta.node_fields.length;
  const sizeAt = meta.node_fields.indexOf('self_size');
  const edgesAt = meta.node_fields.indexOf('edge_count');
  const en = meta.edge_fields.length;
  const eTypeAt = meta.edge_fields.indexOf('type');
  const eTypes = meta.edge_types[0];
  const by: Census = new Map();
  let edge = 0;
  for (let node = 0; node < s.nodes.length; node += n) {
    const edges = s.nodes[node + edgesAt];
    let pointers = 0;
    for (let e = 0; e < edges; e++, edge += en) {
      // Weak and shortcut edges are the snapshot's own; internal, element, property, context and hidden ones are fields.
      const eType = eTypes[s.edges[edge + eTypeAt]];
      if (eType !== 'weak' && eType !== 'shortcut') pointers += 1;
    }
    const key = labelOf(s, node);
    const row = by.get(key) ?? { count: 0, bytes: 0, pointers: 0 };
    row.count += 1;
    row.bytes += s.nodes[node + sizeAt];
    row.pointers += pointers;
    by.set(key, row);
  }
  return by;
}

/** What `after` holds more than `before`, by type, largest change first. */
function grown(before: Census, after: Census): [string, Counts][] {
  const rows: [string, Counts][] = [];
  for (const [key, a] of after) {
    const b = before.get(key) ?? { count: 0, bytes: 0, pointers: 0 };
    rows.push([key, { count: a.count - b.count, bytes: a.bytes - b.bytes, pointers: a.pointers - b.pointers }]);
  }
  for (const [key, b] of before) if (!after.has(key)) rows.push([key, { count: -b.count, bytes: -b.bytes, pointers: -b.pointers }]);
  return rows.sort((x, y) => Math.abs(y[1].count) - Math.abs(x[1].count));
}

/** Who holds the objects of these types (every one in the snapshot): the holder's type and field, and a list's own holder. */
function holders(s: Snapshot, labels: string[]): Map<string, number> {
  const meta = s.snapshot.meta;
  const n = meta.node_fields.length;
  const [typeAt, nameAt, edgesAt] = ['type', 'name', 'edge_count'].map((f) => meta.node_fields.indexOf(f));
  const types = meta.node_types[0];
  const en = meta.edge_fields.length;
  const [eTypeAt, eNameAt, toAt] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f));
  const eTypes = meta.edge_types[0];
  const edgeName = (edge: number): string => {
    const eType = eTypes[s.edges[edge + eTypeAt]];
    return eType === 'element' || eType === 'hidden' ? eType : `${eType} ${String(s.strings[s.edges[edge + eNameAt]]).slice(0, 30)}`;
  };
  // A list's holder (the last one met, for a list held twice).
  const listOwner = new Map<number, string>();
  let edge = 0;
  for (let node = 0; node < s.nodes.length; node += n) {
    const edges = s.nodes[node + edgesAt];
    for (let e = 0; e < edges; e++, edge += en) {
      const to = s.edges[edge + toAt];
      if (types[s.nodes[to + typeAt]] !== 'object' || s.strings[s.nodes[to + nameAt]] !== 'Array' || eTypes[s.edges[edge + eTypeAt]] === 'weak') continue;
      listOwner.set(to, `${s.strings[s.nodes[node + nameAt]].slice(0, 30)}.${edgeName(edge)}`);
    }
  }
  const by = new Map<string, number>();
  edge = 0;
  for (let node = 0; node < s.nodes.length; node += n) {
    const edges = s.nodes[node + edgesAt];
    for (let e = 0; e < edges; e++, edge += en) {
      if (eTypes[s.edges[edge + eTypeAt]] === 'weak') continue;
      const label = labelOf(s, s.edges[edge + toAt]);
      if (!labels.includes(label)) continue;
      const owner = listOwner.get(node);
      const key = `${label} <-[${edgeName(edge)}]- ${types[s.nodes[node + typeAt]]} ${s.strings[s.nodes[node + nameAt]].slice(0, 40)}${owner ? ` <- ${owner}` : ''}`;
      by.set(key, (by.get(key) ?? 0) + 1);
    }
  }
  return by;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const [streams, toolCalls] = args.filter((a) => !a.startsWith('--')).map(Number);
  const option = (name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const target = option('target') ?? 'toolstream';
  const at = Number(option('at') ?? 0.5);
  const top = Number(option('top') ?? 30);
  if (!(streams > 0 && toolCalls > 0 && at > 0 && at < 1)) throw new Error('usage: bench/scavenge-survivors.ts <streams> <toolCalls> [--target=limit] [--at=0.5] [--top=30] [--sites]');
  let frames = 0;
  let server: Server;
  let rpcPath = '/';
  if (target === 'limit') server = (await import('./servers/limit-server')).createLimitServer();
  else {
    const { TaskRecord } = await import('../src/a2a/task-record');
    const toolFrame = TaskRecord.prototype.toolFrame;
    TaskRecord.prototype.toolFrame = function (this: InstanceType<typeof TaskRecord>, ...a: Parameters<typeof toolFrame>) {
      frames += 1;
      return toolFrame.apply(this, a);
    };
    ({ server, rpcPath } = await (await import('./servers/toolstream-server')).createToolstreamServer());
  }
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}${rpcPath}`;
  const load = await LoadProcess.start();
  const session = new Session();
  session.connect();
  try {
    const scenario = { toolCalls, intervalMs: 0, idle: false };
    const warm = await load.run({ url, streams, scenario, timeLimitMs: 300_000 });
    if (args.includes('--sites')) {
      // What outlived a scavenge (promoted, or still young at the stop after two more), by allocation site, over a whole run.
      const collect = youngCollector();
      await post(session, 'HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false });
      const result = await load.run({ url, streams, scenario, timeLimitMs: 300_000 });
      collect();
      const { profile } = await post<{ profile: { head: AllocationNode } }>(session, 'HeapProfiler.stopSampling');
      const { total, top: sites } = allocationSites(profile.head, top);
      console.log(`${target} ${streams} x ${toolCalls}: outlived a scavenge, ${(total / result.frames).toFixed(1)} B per frame (sampled); by site:`);
      for (const [site, bytes] of sites) console.log(`  ${(bytes / result.frames).toFixed(1).padStart(7)} B  ${site}`);
      return;
    }
    // Only its counts are kept: the parsed snapshot (its strings list holds a copy of every string) would be in the next one.
    const counted = census(await takeSnapshot(session));
    const framesBefore = frames;
    const started = Date.now();
    const run = load.run({ url, streams, scenario, timeLimitMs: 300_000 });
    const wanted = at * warm.frames;
    // Toolstream: until its counter says; the limit: by the warm-up's rate.
    while (target === 'limit' ? (Date.now() - started) / 1000 < wanted / warm.framesPerSec : frames - framesBefore < wanted) await new Promise((r) => setTimeout(r, 5));
    const sent = target === 'limit' ? Math.round(((Date.now() - started) / 1000) * warm.framesPerSec) : frames - framesBefore;
    const after = await takeSnapshot(session);
    const result = await run;
    const rows = grown(counted, census(after));
    const total = rows.reduce((t, [, r]) => ({ count: t.count + r.count, bytes: t.bytes + r.bytes, pointers: t.pointers + r.pointers }), { count: 0, bytes: 0, pointers: 0 });
    const per = (x: number): string => (x / sent).toFixed(3);
    console.log(`${target} ${streams} x ${toolCalls}: snapshot after ~${sent} frames (${result.frames} in the run); load average ${loadavg()[0].toFixed(1)}`);
    console.log(`  grown during the run, per frame: ${per(total.count)} objects, ${(total.bytes / sent).toFixed(1)} B, ${per(total.pointers)} pointer fields`);
    console.log('  by type (objects / B / pointer fields per frame):');
    for (const [key, r] of rows.slice(0, top)) console.log(`    ${per(r.count).padStart(8)} ${(r.bytes / sent).toFixed(1).padStart(8)} ${per(r.pointers).padStart(8)}  ${key}`);
    const held = holders(after, rows.slice(0, 4).map(([key]) => key));
    console.log('  what holds the four types that grew most (all of them, not only the run\'s), per frame:');
    for (const [key, c] of [...held].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${per(c).padStart(8)}  ${key}`);
  } finally {
    session.disconnect();
    await load.stop();
    server.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
