import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** A frame's name without its address, map file and the compiled copy's directory. */
export function frameName(text: string): string {
  return text
    .replace(/^[0-9a-f]+\s+/, '')
    .replace(/\s+\([^()]*\)$/, '')
    .replace(/^(\S+ )?\S*\/(src|bench)\//, (_m, kind: string | undefined, dir: string) => `${kind ?? ''}${dir}/`)
    .replace(/\S*\/node_modules\//, '');
}

/**
 * The call chains of a `perf record -g` file, one sample at a time: its frames' names
 * (frameName), innermost first, as `perf script` prints them.
 */
export async function* perfCallChains(file: string): AsyncGenerator<string[]> {
  const perf = spawn('perf', ['script', '-i', file, '-F', 'tid,ip,sym,dso'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let frames: string[] = [];
  for await (const line of createInterface({ input: perf.stdout })) {
    if (line.trim() === '') continue;
    // A sample's header is its thread id alone, right-aligned (a short id starts with spaces, as a frame does).
    if (/^\s*\d+\s*$/.test(line)) {
      if (frames.length !== 0) yield frames;
      frames = [];
      continue;
    }
    frames.push(frameName(line.trim()));
  }
  if (frames.length !== 0) yield frames;
}
