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

/** Redis's own CPU so far (INFO cpu), user and system, in µs. */
export async function redisCpu(client: Redis): Promise<{ user: number; system: number }> {
  const info = await client.info('cpu');
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN) * 1e6;
  return { user: field('used_cpu_user'), system: field('used_cpu_sys') };
}

/** Redis's own CPU so far (user + system), in µs. */
export async function redisCpuUs(client: Redis): Promise<number> {
  const { user, system } = await redisCpu(client);
  return user + system;
}
