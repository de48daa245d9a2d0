import type Redis from 'ioredis';

/**
 * µs Redis spent per command since the last CONFIG RESETSTAT (INFO commandstats), by command,
 * most first. A script's time includes the commands it ran, which are listed too.
 */
export async function commandTimes(client: Redis): Promise<[string, number][]> {
  const times: [string, number][] = [];
  for (const [, name, usec] of (await client.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=\d+,usec=(\d+)/gm)) times.push([name, Number(usec)]);
  return times.sort((a, b) => b[1] - a[1]);
}
