/** The entry a SteadyMap's Map keeps: an object, so no string key is ever equal to it. */
const KEPT = Object.freeze({});

/** Entries held in the two small arrays before a Map takes over. */
const SMALL = 8;

/**
 * A map by string key for entries that come and go one per task (live runs, a task's topic
 * subscribers). V8 gives a Map a new hash table, from a runtime call, each time a delete empties
 * it, and again each time deleted slots fill it; a table is made in the generation of the one
 * it replaces, so once one has been promoted every later one is old garbage at once (152 B per
 * `set` + `delete` of a new key in a scratch loop). Up to SMALL entries live here in two arrays
 * made once and searched in order (nothing allocated per entry); past that, in a Map that keeps
 * an entry of its own under a key no caller can pass, so it never empties (its table is rebuilt
 * every few deletes only: 51 B per pair), until the entries fit the arrays again.
 */
export class SteadyMap<V> {
  private readonly smallKeys: (string | undefined)[] = new Array<string | undefined>(SMALL).fill(undefined);
  private readonly smallValues: (V | undefined)[] = new Array<V | undefined>(SMALL).fill(undefined);
  private smallCount = 0;
  /** While there are more entries than the arrays hold (they are then empty). */
  private large: Map<string | typeof KEPT, V | undefined> | undefined = undefined;

  get size(): number {
    return this.large ? this.large.size - 1 : this.smallCount;
  }

  get(key: string): V | undefined {
    if (this.large) return this.large.get(key);
    const at = this.indexOf(key);
    return at < 0 ? undefined : this.smallValues[at];
  }

  has(key: string): boolean {
    return this.large ? this.large.has(key) : this.indexOf(key) >= 0;
  }

  set(key: string, value: V): this {
    if (this.large) {
      this.large.set(key, value);
      return this;
    }
    const at = this.indexOf(key);
    if (at >= 0) {
      this.smallValues[at] = value;
    } else if (this.smallCount < SMALL) {
      this.smallKeys[this.smallCount] = key;
      this.smallValues[this.smallCount] = value;
      this.smallCount += 1;
    } else {
      const large = new Map<string | typeof KEPT, V | undefined>([[KEPT, undefined]]);
      for (let i = 0; i < this.smallCount; i++) large.set(this.smallKeys[i] as string, this.smallValues[i]);
      large.set(key, value);
      this.clearSmall();
      this.large = large;
    }
    return this;
  }

  delete(key: string): boolean {
    const large = this.large;
    if (large) {
      if (!large.delete(key)) return false;
      // Back to the arrays once nothing is left in the Map (the next task starts from there).
      if (large.size === 1) this.large = undefined;
      return true;
    }
    const at = this.indexOf(key);
    if (at < 0) return false;
    // Later entries move down one: the listing keeps insertion order.
    const last = this.smallCount - 1;
    for (let i = at; i < last; i++) {
      this.smallKeys[i] = this.smallKeys[i + 1];
      this.smallValues[i] = this.smallValues[i + 1];
    }
    this.smallKeys[last] = undefined;
    this.smallValues[last] = undefined;
    this.smallCount = last;
    return true;
  }

  clear(): void {
    this.large = undefined;
    this.clearSmall();
  }

  /** The keys, in insertion order (a copy: the caller may delete while it walks them). */
  keys(): string[] {
    if (!this.large) return this.smallKeys.slice(0, this.smallCount) as string[];
    const keys: string[] = [];
    for (const key of this.large.keys()) if (key !== KEPT) keys.push(key as string);
    return keys;
  }

  /** The values, in insertion order (a copy, as keys()). */
  values(): V[] {
    if (!this.large) return this.smallValues.slice(0, this.smallCount) as V[];
    const values: V[] = [];
    for (const [key, value] of this.large) if (key !== KEPT) values.push(value as V);
    return values;
  }

  private indexOf(key: string): number {
    const keys = this.smallKeys;
    for (let i = 0; i < this.smallCount; i++) if (keys[i] === key) return i;
    return -1;
  }

  private clearSmall(): void {
    this.smallKeys.fill(undefined);
    this.smallValues.fill(undefined);
    this.smallCount = 0;
  }
}
