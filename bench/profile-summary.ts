/**
 * `node -r ts-node/register/transpile-only bench/profile-summary.ts <file.cpuprofile> [top]`
 *
 * Summarises a V8 CPU profile (as bench/profile.ts writes them): where the sampled time went
 * by area (each src/ module, each package, Node's internals, GC) and the functions with the
 * most self time. Prints markdown.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a function lives: a src/ module, a package, Node's internals, or V8's own entries. */
function area(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const local = /\/(src|bench)\/([^/]+)/.exec(url);
  if (local) return `${local[1]}/${local[2].replace(/\.ts$/, '')}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0] === 'internal' ? 'internal' : url.slice(5)}`;
  return url;
}

function where(url: string): string {
  return url.replace(/^.*node_modules\//, '~/').replace(/^.*\/(src|bench)\//, '$1/');
}

function pct(part: number, total: number): string {
  return `${((100 * part) / total).toFixed(1)} %`;
}

/** The profile's self time by area and by function, as markdown tables. */
export function summariseProfile(profile: CpuProfile, top = 30): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  // The profiler's own stop (node:inspector serialising the profile) is sampled too: left out.
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const profilerOwn = new Map<number, boolean>();
  const isProfilerOwn = (id: number): boolean => {
    let own = profilerOwn.get(id);
    if (own === undefined) {
      const up = parent.get(id);
      own = byId.get(id)?.callFrame.url === 'node:inspector' || (up !== undefined && isProfilerOwn(up));
      profilerOwn.set(id, own);
    }
    return own;
  };
  let profiler = 0;
  const selfByFn = new Map<string, number>();
  const selfByArea = new Map<string, number>();
  let total = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const dt = profile.timeDeltas[i] ?? 0;
    if (!node) return;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') {
      idle += dt;
      return;
    }
    if (isProfilerOwn(id)) {
      profiler += dt;
      return;
    }
    total += dt;
    const fn = `${functionName || '(anonymous)'} ${url ? `${where(url)}:${lineNumber + 1}` : ''}`.trim();
    selfByFn.set(fn, (selfByFn.get(fn) ?? 0) + dt);
    const a = area(url, functionName);
    selfByArea.set(a, (selfByArea.get(a) ?? 0) + dt);
  });
  const rows = (m: Map<string, number>, limit: number): string[] =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([k, us]) => `| ${k.replace(/\|/g, '\\|')} | ${(us / 1000).toFixed(1)} | ${pct(us, total)} |`);
  return [
    `${(total / 1000).toFixed(0)} ms of CPU sampled (${(idle / 1000).toFixed(0)} ms idle and ${(profiler / 1000).toFixed(0)} ms of the profiler's own stop left out).`,
    '',
    '| area (self time) | ms | share |',
    '| --- | --- | --- |',
    ...rows(selfByArea, 25),
    '',
    '| function (self time) | ms | share |',
    '| --- | --- | --- |',
    ...rows(selfByFn, top),
    '',
  ].join('\n');
}

if (require.main === module) {
  const [file, topArg] = process.argv.slice(2);
  if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile> [top]');
  console.log(summariseProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, Number(topArg ?? 30)));
}
