import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * Runs a probe `file` again as a child under `--trace-gc-nvp` (its argv: `variant reps --child`,
 * and `--full-gc` with `--expose-gc` when asked) and prints, for each of its measured
 * repetitions, the scavenges' pause and helpers' time per frame, the bytes they promoted and
 * copied per frame, the mark-compacts and the child's CPU per frame. The child prints
 * `<result> warm-up|rep <frames> <cpu µs per frame> ...` after each repetition; the GC lines
 * before it are that repetition's.
 */
export async function printNvpByRepetition(file: string, result: string, variant: string, reps: number, fullGc: boolean): Promise<void> {
  const flags = ['--trace-gc-nvp', ...(fullGc ? ['--expose-gc'] : []), ...process.execArgv];
  const child = spawn(process.execPath, [...flags, file, variant, String(reps), '--child', ...(fullGc ? ['--full-gc'] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
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
    else if (line.startsWith(result)) {
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
