import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Gc = (options: { type: 'minor' | 'major' }) => void;

/**
 * Returns a function that runs two scavenges: for a sampling heap profile that leaves out what
 * scavenges collect, called just before it stops. Without them the profile also holds whatever
 * the young generation still has at the stop (up to a young generation's worth of allocation,
 * spread over every site), not only what outlived a scavenge. Two, so that what the first copied
 * within the young generation is judged again. Take it before the profile starts: the context it
 * makes `gc` in would be sampled too. Needs no --expose-gc: the flag is set here for that context.
 */
export function youngCollector(): () => void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as Gc;
  return () => {
    gc({ type: 'minor' });
    gc({ type: 'minor' });
  };
}
