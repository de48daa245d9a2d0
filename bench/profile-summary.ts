/**
 * `node -r ts-node/register/transpile-only bench/profile-summary.ts <file.cpuprofile> [top]`
 *
 * Prints the functions with the most self time in a V8 CPU profile (as written by
 * `npm run bench -- --profile`), grouped by function and file, to find the hot spots.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function main(): void {
  const [file, topArg] = process.argv.slice(2);
  if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile> [top]');
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<string, number>();
  let totalUs = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const dt = profile.timeDeltas[i] ?? 0;
    if (!node) return;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url.replace(/^.*node_modules\//, '~/').replace(/^.*\/(src|bench)\//, '$1/');
    const key = `${functionName || '(anonymous)'}  ${where}:${lineNumber + 1}`;
    selfUs.set(key, (selfUs.get(key) ?? 0) + dt);
    totalUs += dt;
  });
  const top = [...selfUs.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 40));
  console.log(`total ${(totalUs / 1000).toFixed(0)} ms sampled`);
  for (const [key, us] of top) console.log(`${((100 * us) / totalUs).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(1).padStart(8)} ms  ${key}`);
}

main();
