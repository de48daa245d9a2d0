/**
 * What a V8 heap snapshot holds beyond an earlier one of the same process
 * (bench/running-task-heap.ts, running-run-heap.ts): the objects whose id the earlier one did not
 * have, per running run (the new `Run` objects; else per the unit given). Printed: by owner group
 * (an object belongs to the first known owner kind among its dominators, the objects through
 * which alone the heap reaches it: task record, Redis store, stream path, runtime run, Node's
 * http...), each group's kinds; by kind (an object's constructor, a closure's function name,
 * V8's internal kinds by type and name); by nearest new named dominator; and the new subtrees'
 * tops with their retained size (all they alone keep alive). Weak edges are left out.
 * Alone: `node -r ts-node/register/transpile-only bench/lib/heap-snapshot.ts <before> <after> <units> [top=40]`,
 * or `... <before> <after> show=<Kind>[/<edge>/...] [count=2]` for a new object's edges (each
 * target's self and retained size, `*` where it dominates it) and what points at it.
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

function load(path: string): Snapshot {
  return JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
}

/** Ids of every object in a snapshot. */
function idsOf(path: string): Set<number> {
  const s = load(path);
  const width = s.snapshot.meta.node_fields.length;
  const idAt = s.snapshot.meta.node_fields.indexOf('id');
  const ids = new Set<number>();
  for (let i = 0; i < s.nodes.length; i += width) ids.add(s.nodes[i + idAt]);
  return ids;
}

/** Object kinds that say nothing of who owns them: attributed to a named holder above them. */
const GENERIC = new Set([
  'Object',
  'Array',
  'Map',
  'Set',
  'WeakMap',
  'WeakSet',
  'WeakRef',
  'Promise',
  'Function',
  'Error',
  'system / Context',
  'Arguments',
]);

interface Graph {
  count: number;
  type: Uint8Array;
  name: Uint32Array;
  id: Uint32Array;
  self: Uint32Array;
  firstEdge: Uint32Array;
  edgeTo: Uint32Array;
  edgeType: Uint8Array;
  edgeName: Uint32Array;
  types: string[];
  edgeTypes: string[];
  strings: string[];
}

function graphOf(s: Snapshot): Graph {
  const meta = s.snapshot.meta;
  const width = meta.node_fields.length;
  const count = s.nodes.length / width;
  const at = (f: string): number => meta.node_fields.indexOf(f);
  const [typeAt, nameAt, idAt, sizeAt, edgeCountAt] = [at('type'), at('name'), at('id'), at('self_size'), at('edge_count')];
  const ew = meta.edge_fields.length;
  const eTypeAt = meta.edge_fields.indexOf('type');
  const eNameAt = meta.edge_fields.indexOf('name_or_index');
  const eToAt = meta.edge_fields.indexOf('to_node');
  const g: Graph = {
    count,
    type: new Uint8Array(count),
    name: new Uint32Array(count),
    id: new Uint32Array(count),
    self: new Uint32Array(count),
    firstEdge: new Uint32Array(count + 1),
    edgeTo: new Uint32Array(s.edges.length / ew),
    edgeType: new Uint8Array(s.edges.length / ew),
    edgeName: new Uint32Array(s.edges.length / ew),
    types: meta.node_types[0],
    edgeTypes: meta.edge_types[0],
    strings: s.strings,
  };
  let e = 0;
  for (let n = 0; n < count; n++) {
    const base = n * width;
    g.type[n] = s.nodes[base + typeAt];
    g.name[n] = s.nodes[base + nameAt];
    g.id[n] = s.nodes[base + idAt];
    g.self[n] = s.nodes[base + sizeAt];
    g.firstEdge[n] = e;
    e += s.nodes[base + edgeCountAt];
  }
  g.firstEdge[count] = e;
  for (let i = 0; i < g.edgeTo.length; i++) {
    g.edgeType[i] = s.edges[i * ew + eTypeAt];
    g.edgeName[i] = s.edges[i * ew + eNameAt];
    g.edgeTo[i] = s.edges[i * ew + eToAt] / width;
  }
  return g;
}

/** Immediate dominators from node 0 (the snapshot's root), weak edges left out (Cooper, Harvey, Kennedy). */
function dominators(g: Graph): Int32Array {
  const weak = g.edgeTypes.indexOf('weak');
  const n = g.count;
  const post = new Int32Array(n).fill(-1);
  const order: number[] = [];
  const stack: number[] = [0];
  const edgeAt = new Uint32Array(n);
  const seen = new Uint8Array(n);
  seen[0] = 1;
  edgeAt[0] = g.firstEdge[0];
  while (stack.length) {
    const v = stack[stack.length - 1];
    if (edgeAt[v] < g.firstEdge[v + 1]) {
      const e = edgeAt[v]++;
      if (g.edgeType[e] === weak) continue;
      const w = g.edgeTo[e];
      if (!seen[w]) {
        seen[w] = 1;
        edgeAt[w] = g.firstEdge[w];
        stack.push(w);
      }
    } else {
      stack.pop();
      post[v] = order.length;
      order.push(v);
    }
  }
  // Predecessors (reachable ones only), as lists.
  const predCount = new Uint32Array(n + 1);
  for (let v = 0; v < n; v++) {
    if (!seen[v]) continue;
    for (let e = g.firstEdge[v]; e < g.firstEdge[v + 1]; e++) if (g.edgeType[e] !== weak) predCount[g.edgeTo[e] + 1]++;
  }
  for (let v = 0; v < n; v++) predCount[v + 1] += predCount[v];
  const preds = new Uint32Array(predCount[n]);
  const fill = predCount.slice(0, n);
  for (let v = 0; v < n; v++) {
    if (!seen[v]) continue;
    for (let e = g.firstEdge[v]; e < g.firstEdge[v + 1]; e++) if (g.edgeType[e] !== weak) preds[fill[g.edgeTo[e]]++] = v;
  }
  const idom = new Int32Array(n).fill(-1);
  idom[0] = 0;
  const intersect = (a: number, b: number): number => {
    while (a !== b) {
      while (post[a] < post[b]) a = idom[a];
      while (post[b] < post[a]) b = idom[b];
    }
    return a;
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (let i = order.length - 2; i >= 0; i--) {
      const v = order[i];
      let next = -1;
      for (let p = predCount[v]; p < predCount[v + 1]; p++) {
        const u = preds[p];
        if (idom[u] === -1) continue;
        next = next === -1 ? u : intersect(u, next);
      }
      if (next !== -1 && idom[v] !== next) {
        idom[v] = next;
        changed = true;
      }
    }
  }
  return idom;
}

/** Retained sizes (self + all it dominates), children summed before parents: by depth in the dominator tree. */
function retainedSizes(g: Graph, idom: Int32Array): Float64Array {
  const depth = new Int32Array(g.count).fill(-1);
  depth[0] = 0;
  const order: number[] = [];
  for (let v = 0; v < g.count; v++) {
    if (idom[v] === -1) continue;
    order.push(v);
    const path: number[] = [];
    let u = v;
    while (depth[u] === -1) {
      path.push(u);
      u = idom[u];
    }
    let d = depth[u];
    for (let i = path.length - 1; i >= 0; i--) depth[path[i]] = ++d;
  }
  order.sort((a, b) => depth[b] - depth[a]);
  const retained = new Float64Array(g.count);
  for (const v of order) {
    retained[v] += g.self[v];
    if (v !== 0) retained[idom[v]] += retained[v];
  }
  return retained;
}

function kindOf(g: Graph, v: number): string {
  const type = g.types[g.type[v]];
  const name = g.strings[g.name[v]];
  switch (type) {
    case 'object':
      return name;
    case 'closure':
      return `closure ${name || '(anonymous)'}`;
    case 'string':
    case 'concatenated string':
    case 'sliced string':
      return `(${type})`;
    case 'number':
    case 'bigint':
    case 'symbol':
      return `(${type})`;
    default:
      return `(${type}) ${name.length > 40 ? name.slice(0, 40) + '…' : name}`;
  }
}

function isNamed(g: Graph, v: number): boolean {
  return g.types[g.type[v]] === 'object' && !GENERIC.has(g.strings[g.name[v]]) && /^[A-Za-z_$]/.test(g.strings[g.name[v]]);
}

/** Owners by the kinds of their objects: a new object belongs to the first of these above it in the dominator tree. */
const OWNERS: [string, string[]][] = [
  ['task record and event log', ['StoredTask', 'TaskRecord', 'EventLog', 'OpenTaskEventBlock', 'TaskEventBlock', 'KeptTool', 'ToolFrameEvent', 'TaskEvent']],
  ['Redis store', ['RedisTaskAppender', 'RedisTaskReplica', 'RedisTaskStore', 'RedisRunQueue', 'RedisLiveLimits']],
  ['ioredis', ['Redis', 'Command', 'Pipeline', 'DataHandler']],
  ['stream path', ['ResponseSink', 'Follower', 'ResponseWriter', 'SseMessageFraming', 'Watch']],
  ['bus binding', ['TaskTopicListeners', 'TaskPublisherHere']],
  ['runtime run', ['Run', 'AbortController', 'AbortSignal']],
  ['node http / express', ['ExpressRequest', 'ExpressResponse', 'IncomingMessage', 'ServerResponse', 'Socket', 'TCP', 'HTTPParser', 'TCPSocketWrap', 'ReadableState', 'WritableState', 'Url', 'HTTPServerAsyncResource', '(synthetic) Node / TCPSocketWrap']],
  ['timers', ['Timeout', 'TimersList']],
];
const OWNER_OF = new Map(OWNERS.flatMap(([owner, kinds]) => kinds.map((kind) => [kind, owner] as const)));

interface Row {
  count: number;
  bytes: number;
}

function add(map: Map<string, Row>, key: string, bytes: number, count = 1): void {
  const row = map.get(key);
  if (row) {
    row.count += count;
    row.bytes += bytes;
  } else map.set(key, { count, bytes });
}

function print(title: string, map: Map<string, Row>, units: number, top: number): void {
  const rows = [...map.entries()].sort((a, b) => b[1].bytes - a[1].bytes);
  console.log(`  ${title}:`);
  for (const [key, row] of rows.slice(0, top)) {
    console.log(`    ${(row.bytes / units).toFixed(0).padStart(7)} B ${(row.count / units).toFixed(2).padStart(8)} obj  ${key}`);
  }
  const rest = rows.slice(top).reduce((s, [, r]) => ({ count: s.count + r.count, bytes: s.bytes + r.bytes }), { count: 0, bytes: 0 });
  if (rest.count) console.log(`    ${(rest.bytes / units).toFixed(0).padStart(7)} B ${(rest.count / units).toFixed(2).padStart(8)} obj  (${rows.length - top} more kinds)`);
}

/** Prints what `after` holds beyond `before`, per unit. */
export function reportGrowth(before: string, after: string, units: number, label: string, top = 40): void {
  const old = idsOf(before);
  const g = graphOf(load(after));
  const idom = dominators(g);
  const isNew = new Uint8Array(g.count);
  let newCount = 0;
  let newBytes = 0;
  let oldGone = old.size;
  for (let v = 0; v < g.count; v++) {
    if (idom[v] === -1) continue; // unreachable (not kept by the snapshot's GC)
    if (old.has(g.id[v])) oldGone--;
    else {
      isNew[v] = 1;
      newCount++;
      newBytes += g.self[v];
    }
  }
  const retained = retainedSizes(g, idom);
  const byKind = new Map<string, Row>();
  const byOwner = new Map<string, Row>();
  const tops = new Map<string, Row>();
  const byGroup = new Map<string, Row>();
  const groupKinds = new Map<string, Map<string, Row>>();
  for (let v = 0; v < g.count; v++) {
    if (!isNew[v]) continue;
    add(byKind, kindOf(g, v), g.self[v]);
    let group: string | undefined;
    for (let u = v, i = 0; u !== 0 && i < 64 && group === undefined; u = idom[u], i++) group = OWNER_OF.get(kindOf(g, u));
    if (group === undefined) {
      let top = v;
      while (isNew[idom[top]] && idom[top] !== top) top = idom[top];
      group = `(other) ${kindOf(g, top)} under ${kindOf(g, idom[top])}`;
    }
    add(byGroup, group, g.self[v]);
    let kinds = groupKinds.get(group);
    if (!kinds) groupKinds.set(group, (kinds = new Map()));
    add(kinds, `${kindOf(g, v)} (in ${kindOf(g, idom[v])})`, g.self[v]);
    let owner = -1;
    let u = v;
    for (;;) {
      if (owner === -1 && isNamed(g, u)) owner = u;
      if (!isNew[idom[u]] || idom[u] === u) break;
      u = idom[u];
    }
    // u is the top of v's new subtree.
    const holder = `${kindOf(g, u)} under ${kindOf(g, idom[u])}`;
    add(byOwner, owner === -1 ? `(no named owner) ${holder}` : kindOf(g, owner), g.self[v]);
    if (u === v) add(tops, holder, retained[v]);
  }
  // Per running run (the runtime's Run objects that are new) when there are any: at 1,000 paced
  // streams not every stream asked for has started by the snapshot.
  const runs = byKind.get('Run')?.count ?? 0;
  const asked = units;
  if (runs > 0) units = runs;
  // Kept tool frames: the new strings that are a frame's JSON or hold one.
  let frames = 0;
  for (let v = 0; v < g.count; v++) if (isNew[v] && g.types[g.type[v]] === 'string' && g.strings[g.name[v]].includes('"phase":"')) frames++;
  console.log(
    `${label}: ${newCount} objects, ${newBytes} B new; ${runs} new Run objects (${asked} asked for), per ${runs > 0 ? 'run' : 'unit'}: ${(newCount / units).toFixed(1)} objects, ${(newBytes / units).toFixed(0)} B, ${(frames / units).toFixed(1)} strings holding a tool frame; ${oldGone} objects of before gone`,
  );
  print('by owner group (first known owner among its dominators, self sizes)', byGroup, units, top);
  for (const [group] of OWNERS) {
    const kinds = groupKinds.get(group);
    if (kinds && (byGroup.get(group)?.bytes ?? 0) / units >= 200) print(`  ${group}, by kind (and its immediate dominator)`, kinds, units, 16);
  }
  print('by kind (self size)', byKind, units, top);
  print('by owner (nearest new named dominator, self sizes)', byOwner, units, top);
  print('new subtrees by top kind and its dominator (retained size)', tops, units, top);
}

function edgeLabel(g: Graph, e: number): string {
  const type = g.edgeTypes[g.edgeType[e]];
  return type === 'element' || type === 'hidden' ? `[${g.edgeName[e]}]` : `${type === 'property' ? '' : type + ':'}${g.strings[g.edgeName[e]]}`;
}

/** Prints up to `limit` new objects of one kind: retained size, dominator chain, and their outgoing edges with each target's retained size. */
export function showKind(before: string, after: string, kind: string, limit = 2): void {
  const old = idsOf(before);
  const g = graphOf(load(after));
  const idom = dominators(g);
  const retained = retainedSizes(g, idom);
  let shown = 0;
  // `Kind/edge/edge`: from a new object of that kind along those edges (by label).
  const [first, ...path] = kind.split('/');
  for (let start = 0; start < g.count && shown < limit; start++) {
    if (idom[start] === -1 || old.has(g.id[start]) || kindOf(g, start) !== first) continue;
    let v = start;
    for (const step of path) {
      let next = -1;
      for (let e = g.firstEdge[v]; e < g.firstEdge[v + 1] && next === -1; e++) if (edgeLabel(g, e) === step) next = g.edgeTo[e];
      if (next === -1) break;
      v = next;
    }
    shown++;
    const chain: string[] = [];
    for (let u = idom[v], i = 0; u !== 0 && i < 8; u = idom[u], i++) chain.push(kindOf(g, u));
    console.log(`${kind} @${g.id[v]}: self ${g.self[v]}, retained ${retained[v]}; dominators: ${chain.join(' < ')}`);
    for (let e = g.firstEdge[v]; e < g.firstEdge[v + 1]; e++) {
      const w = g.edgeTo[e];
      const mark = idom[w] === v ? '*' : ' ';
      console.log(`   ${mark} ${edgeLabel(g, e).slice(0, 40).padEnd(40)} ${kindOf(g, w).slice(0, 50).padEnd(50)} self ${g.self[w]} retained ${retained[w]}${old.has(g.id[w]) ? ' (old)' : ''}${g.types[g.type[w]] === 'string' ? ' ' + JSON.stringify(g.strings[g.name[w]].slice(0, 60)) : ''}`);
    }
    // Who points at it.
    let refs = 0;
    for (let u = 0; u < g.count && refs < 6; u++)
      for (let e = g.firstEdge[u]; e < g.firstEdge[u + 1]; e++)
        if (g.edgeTo[e] === v) {
          console.log(`   <- ${kindOf(g, u)} .${edgeLabel(g, e)}`);
          refs++;
        }
  }
}

if (require.main === module) {
  const [before, after, units, top] = process.argv.slice(2);
  if (units.startsWith('show=')) showKind(before, after, units.slice(5), Number(top ?? 2));
  else reportGrowth(before, after, Number(units), 'growth', Number(top ?? 40));
}
