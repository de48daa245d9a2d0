/**
 * `node -r ts-node/register/transpile-only bench/survivors-by-owner.ts <heapprofile> [<heapprofile>...] [--frames=20000] [--top=12]`
 *
 * A sampling heap profile's bytes per frame by owner: the deepest frame of each sample's stack
 * that has a script (not a builtin), grouped as the Redis store (src/a2a/store/redis-*, the run
 * queue and its scripts), ioredis (and its parser and queue), the rest of src/a2a, the runtime,
 * the bench's own code, Node's internals and the rest; then the sites under the Redis store and
 * ioredis that hold most, named by the innermost store frame (`ioredis<-` when ioredis made it).
 * For the profiles `bench/paced-latency.ts ... --alloc-profile=<dir> --alloc-profile-survivors`
 * writes (`<target>-<rep>.heapprofile`): what outlived a scavenge, e.g. what Redis mode keeps that
 * memory mode does not. `--frames` as that run's (default 100 streams × 100 calls × 2 frames). A
 * sampled profile: a site of a few bytes per frame is a few samples (V8 samples every ~16 KB here).
 */
import { readFileSync } from 'node:fs';
import type { AllocationNode } from './lib/allocation-sites';

type Frame = AllocationNode['callFrame'];

const STORE = /\/a2a\/store\/(redis-|run-queue)/;
const IOREDIS = /\/node_modules\/(ioredis|redis-parser|redis-errors|denque|cluster-key-slot)\//;

function groupOf(url: string): string | undefined {
  if (url === '') return undefined;
  if (STORE.test(url)) return 'Redis store';
  if (IOREDIS.test(url)) return 'ioredis';
  if (/\/a2a\//.test(url)) return 'a2a (other)';
  if (/\/runtime\//.test(url)) return 'runtime';
  if (/\/bench\//.test(url)) return 'bench';
  if (url.startsWith('node:') || !url.includes('/')) return 'node';
  return 'other';
}

function site(frame: Frame): string {
  return `${frame.functionName || '(anonymous)'} ${frame.url.slice(frame.url.lastIndexOf('/') + 1)}:${frame.lineNumber + 1}`;
}

function option(name: string): string | undefined {
  return process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
}

function main(): void {
  const files = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const frames = Number(option('frames') ?? 100 * 100 * 2);
  const top = Number(option('top') ?? 12);
  for (const file of files) {
    const head = (JSON.parse(readFileSync(file, 'utf8')) as { head: AllocationNode }).head;
    const groups = new Map<string, number>();
    const sites = new Map<string, number>();
    let total = 0;
    const walk = (node: AllocationNode, stack: Frame[]): void => {
      stack.push(node.callFrame);
      if (node.selfSize > 0) {
        total += node.selfSize;
        let group = '(builtins)';
        for (let i = stack.length - 1; i >= 0; i--) {
          const found = groupOf(stack[i].url);
          if (found) {
            group = found;
            break;
          }
        }
        groups.set(group, (groups.get(group) ?? 0) + node.selfSize);
        const store = [...stack].reverse().find((f) => STORE.test(f.url));
        if (store) {
          const key = `${stack.some((f) => IOREDIS.test(f.url)) ? 'ioredis<-' : ''}${site(store)}`;
          sites.set(key, (sites.get(key) ?? 0) + node.selfSize);
        }
      }
      for (const child of node.children) walk(child, stack);
      stack.pop();
    };
    walk(head, []);
    const perFrame = (bytes: number): string => (bytes / frames).toFixed(1);
    console.log(`${file}: ${perFrame(total)} B/frame`);
    console.log(`  by owner: ${[...groups].sort((a, b) => b[1] - a[1]).map(([group, bytes]) => `${group} ${perFrame(bytes)}`).join(', ')}`);
    console.log(`  under the Redis store: ${[...sites].sort((a, b) => b[1] - a[1]).slice(0, top).map(([key, bytes]) => `${key} ${perFrame(bytes)}`).join(', ')}`);
  }
}

main();
