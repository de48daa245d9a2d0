/**
 * `node --expose-gc -r ts-node/register/transpile-only bench/kept-tasks-objects.ts [tasks=10000] [calls=0] [top=12]`
 *
 * Heap objects per finished task the in-memory store keeps for replay, counted in V8 heap
 * snapshots: one before the tasks and one after `tasks` of them have finished (each held and
 * followed while it runs, as its stream does; `calls` tool calls each, a started and a completed
 * frame per call, then the answer), all kept (maxRetainedTasks = tasks). What a major GC marks
 * is objects and the pointers between them, not bytes: this counts both, and prints the kinds
 * that grew most. Deterministic: it does not move with the machine's load.
 */
import { getHeapSnapshot } from 'node:v8';
import { keepingStore, runKeptTask } from './lib/kept-tasks';

const TASKS = Number(process.argv[2] ?? 10_000);
const CALLS = Number(process.argv[3] ?? 0);
const TOP = Number(process.argv[4] ?? 12);

interface Census {
  objects: number;
  edges: number;
  bytes: number;
  kinds: Map<string, { count: number; bytes: number }>;
  /** Objects (and their references to objects) reachable from the store, not through a function, a shape or code. */
  kept: { objects: number; edges: number; bytes: number };
}

/** Node types a walk from the store does not enter: functions lead to whole modules, the rest is V8's own. */
const NOT_ENTERED = new Set(['closure', 'code', 'hidden', 'object shape', 'synthetic', 'native']);

async function census(): Promise<Census> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  gc();
  gc();
  const chunks: string[] = [];
  for await (const chunk of getHeapSnapshot()) chunks.push(String(chunk));
  const snapshot = JSON.parse(chunks.join('')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
    nodes: number[];
    edges: number[];
    strings: string[];
  };
  const meta = snapshot.snapshot.meta;
  const width = meta.node_fields.length;
  const typeAt = meta.node_fields.indexOf('type');
  const nameAt = meta.node_fields.indexOf('name');
  const sizeAt = meta.node_fields.indexOf('self_size');
  const edgeCountAt = meta.node_fields.indexOf('edge_count');
  const edgeWidth = meta.edge_fields.length;
  const edgeTypeAt = meta.edge_fields.indexOf('type');
  const types = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const nodes = snapshot.nodes;
  const kinds = new Map<string, { count: number; bytes: number }>();
  let objects = 0;
  let edges = 0;
  let bytes = 0;
  let edge = 0;
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt]];
    const edgeCount = nodes[i + edgeCountAt];
    // Strong references only (weak ones and V8's shortcut edges are not marked through).
    for (let e = 0; e < edgeCount; e++) {
      const edgeType = edgeTypes[snapshot.edges[edge + e * edgeWidth + edgeTypeAt]];
      if (edgeType !== 'weak' && edgeType !== 'shortcut') edges += 1;
    }
    edge += edgeCount * edgeWidth;
    // The snapshot's synthetic roots are not heap objects.
    if (type === 'synthetic') continue;
    const size = nodes[i + sizeAt];
    objects += 1;
    bytes += size;
    const name = type === 'string' || type === 'concatenated string' || type === 'sliced string' || type === 'number' ? type : `${type}:${snapshot.strings[nodes[i + nameAt]].slice(0, 40)}`;
    const kind = kinds.get(name) ?? { count: 0, bytes: 0 };
    kind.count += 1;
    kind.bytes += size;
    kinds.set(name, kind);
  }
  // The store's own graph: a breadth-first walk from InMemoryTaskStore, over strong references.
  const firstEdge = new Int32Array(nodes.length / width + 1);
  for (let n = 0, e = 0; n < nodes.length / width; n++) {
    firstEdge[n] = e;
    e += nodes[n * width + edgeCountAt] * edgeWidth;
  }
  firstEdge[nodes.length / width] = snapshot.edges.length;
  const toAt = meta.edge_fields.indexOf('to_node');
  const seen = new Uint8Array(nodes.length / width);
  const queue: number[] = [];
  for (let n = 0; n < nodes.length / width; n++) {
    if (types[nodes[n * width + typeAt]] === 'object' && snapshot.strings[nodes[n * width + nameAt]] === 'InMemoryTaskStore') {
      seen[n] = 1;
      queue.push(n);
    }
  }
  const kept = { objects: 0, edges: 0, bytes: 0 };
  for (let q = 0; q < queue.length; q++) {
    const n = queue[q];
    kept.objects += 1;
    kept.bytes += nodes[n * width + sizeAt];
    for (let e = firstEdge[n]; e < firstEdge[n + 1]; e += edgeWidth) {
      const edgeType = edgeTypes[snapshot.edges[e + edgeTypeAt]];
      if (edgeType === 'weak' || edgeType === 'shortcut') continue;
      const to = snapshot.edges[e + toAt] / width;
      if (NOT_ENTERED.has(types[nodes[to * width + typeAt]])) continue;
      kept.edges += 1;
      if (seen[to]) continue;
      seen[to] = 1;
      queue.push(to);
    }
  }
  return { objects, edges, bytes, kinds, kept };
}

async function main(): Promise<void> {
  let store = keepingStore(TASKS);
  // `store` is read at each call: the warm-up's store is replaced before the counts.
  const runOne = (id: string, contextId: string): Promise<void> => runKeptTask(store, id, contextId, CALLS);
  // A few tasks first, forgotten again, so the code they run is compiled before the first count.
  for (let i = 0; i < 2_000; i++) await runOne(`warm${i}`, `warm-c${i}`);
  await store.close();
  store = keepingStore(TASKS);
  const before = await census();
  for (let i = 0; i < TASKS; i++) await runOne(`t${i}`, `c${i}`);
  const after = await census();
  const per = (a: number, b: number): string => ((a - b) / TASKS).toFixed(1);
  console.log(
    `reachable from the store: ${per(after.kept.objects, before.kept.objects)} objects, ${per(after.kept.edges, before.kept.edges)} references to objects and ${((after.kept.bytes - before.kept.bytes) / TASKS / 1024).toFixed(2)} KiB per kept task`,
  );
  console.log(
    `whole heap: ${TASKS} kept tasks of ${CALLS} calls: ${per(after.objects, before.objects)} objects, ${per(after.edges, before.edges)} strong references and ${((after.bytes - before.bytes) / TASKS / 1024).toFixed(2)} KiB (self sizes) per kept task; retained ${store.retained().tasks} tasks, ${(store.retained().bytes / 1024 / TASKS).toFixed(2)} KiB counted each`,
  );
  const grown = [...after.kinds]
    .map(([name, kind]) => ({ name, count: kind.count - (before.kinds.get(name)?.count ?? 0), bytes: kind.bytes - (before.kinds.get(name)?.bytes ?? 0) }))
    .sort((a, b) => b.count - a.count)
    .slice(0, TOP);
  for (const kind of grown) console.log(`  ${(kind.count / TASKS).toFixed(2).padStart(8)} x ${kind.name} (${(kind.bytes / TASKS).toFixed(0)} B)`);
  await store.close();
}

void main();
