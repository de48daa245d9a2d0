import { spawnSync } from 'node:child_process';

/** Pins every thread of `pid` to `cpus` (a taskset list: "0", "0,1"); throws when taskset fails. */
export function pinToCpus(pid: number | undefined, cpus: string): void {
  if (pid === undefined) throw new Error('no pid to pin');
  const done = spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { encoding: 'utf8' });
  if (done.status !== 0) throw new Error(`taskset failed: ${done.stderr}`);
}
