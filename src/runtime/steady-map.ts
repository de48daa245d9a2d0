/** The entry every SteadyMap keeps: an object, so no string key is ever equal to it. */
const KEPT = Object.freeze({});

/**
 * A Map by string key for entries that come and go one per task (live runs, a task's topic
 * subscribers). V8 gives a Map a new hash table, from a runtime call, each time a delete empties
 * it (the smallest table is rebuilt at the same size): with tasks one at a time, one table per
 * task and per such Map, 152 B and a slow-path call each. This one keeps an entry of its own
 * under a key no caller can pass, so it never empties; what it shows (size, get, has, the
 * listing) is the caller's entries only. A table still rebuilds once its deleted slots fill it
 * (every third task at the smallest size: 51 B per set and delete, a scratch loop).
 */
export class SteadyMap<V> {
  private readonly entries = new Map<string | typeof KEPT, V | undefined>([[KEPT, undefined]]);

  get size(): number {
    return this.entries.size - 1;
  }

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  set(key: string, value: V): this {
    this.entries.set(key, value);
    return this;
  }

  delete(key: string): boolean {
    return this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.entries.set(KEPT, undefined);
  }

  /** The keys, in insertion order (a copy: the caller may delete while it walks them). */
  keys(): string[] {
    const keys: string[] = [];
    for (const key of this.entries.keys()) if (key !== KEPT) keys.push(key as string);
    return keys;
  }

  /** The values, in insertion order (a copy, as keys()). */
  values(): V[] {
    const values: V[] = [];
    for (const [key, value] of this.entries) if (key !== KEPT) values.push(value as V);
    return values;
  }
}
