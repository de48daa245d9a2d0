import { SteadyMap } from './steady-map';

describe('SteadyMap', () => {
  it('shows only the entries set through it', () => {
    const map = new SteadyMap<number>();
    expect(map.size).toBe(0);
    expect(map.keys()).toEqual([]);
    expect(map.values()).toEqual([]);
    // No string, the empty one included, reaches the entry it keeps for itself.
    expect(map.has('')).toBe(false);
    expect(map.get('[object Object]')).toBeUndefined();
    expect(map.delete('')).toBe(false);
    expect(map.size).toBe(0);
  });

  it('sets, gets, replaces and deletes like a Map, in insertion order', () => {
    const map = new SteadyMap<string>();
    map.set('b', 'one').set('a', 'two');
    map.set('b', 'three');
    expect(map.size).toBe(2);
    expect(map.get('b')).toBe('three');
    expect(map.has('a')).toBe(true);
    expect(map.keys()).toEqual(['b', 'a']);
    expect(map.values()).toEqual(['three', 'two']);
    expect(map.delete('b')).toBe(true);
    expect(map.delete('b')).toBe(false);
    expect(map.keys()).toEqual(['a']);
    expect(map.size).toBe(1);
  });

  it('lists copies, so the caller may delete while it walks them', () => {
    const map = new SteadyMap<number>();
    for (let i = 0; i < 5; i++) map.set(`k${i}`, i);
    for (const key of map.keys()) map.delete(key);
    expect(map.size).toBe(0);
    expect(map.values()).toEqual([]);
  });

  it('stays usable through many entries coming and going, and after clear', () => {
    const map = new SteadyMap<number>();
    for (let i = 0; i < 1_000; i++) {
      map.set(`task-${i}`, i);
      expect(map.size).toBe(1);
      expect(map.get(`task-${i}`)).toBe(i);
      map.delete(`task-${i}`);
    }
    map.set('x', 1).set('y', 2);
    map.clear();
    expect(map.size).toBe(0);
    expect(map.keys()).toEqual([]);
    map.set('z', 3);
    expect([map.size, map.get('z'), map.has('x')]).toEqual([1, 3, false]);
  });

  it('keeps insertion order, size and lookups the same past the entries its arrays hold, and back', () => {
    const map = new SteadyMap<number>();
    const expected = new Map<string, number>();
    const check = (): void => {
      expect(map.size).toBe(expected.size);
      expect(map.keys()).toEqual([...expected.keys()]);
      expect(map.values()).toEqual([...expected.values()]);
      for (const [key, value] of expected) expect([map.has(key), map.get(key)]).toEqual([true, value]);
    };
    // Grows one at a time past any small size, with deletes from the middle and replaced values on the way.
    for (let i = 0; i < 40; i++) {
      map.set(`k${i}`, i);
      expected.set(`k${i}`, i);
      if (i % 3 === 2) {
        map.delete(`k${i - 1}`);
        expected.delete(`k${i - 1}`);
      }
      if (i % 5 === 4) {
        // An existing key keeps its place; a deleted one comes back last (as a Map does).
        map.set(`k${i - 4}`, -i);
        expected.set(`k${i - 4}`, -i);
      }
      check();
    }
    // Then down to nothing, oldest first, and up again.
    for (const key of map.keys()) {
      expect(map.delete(key)).toBe(true);
      expected.delete(key);
      check();
    }
    expect(map.get('k0')).toBeUndefined();
    for (let i = 0; i < 12; i++) {
      map.set(`again${i}`, i);
      expected.set(`again${i}`, i);
    }
    check();
    map.clear();
    expected.clear();
    check();
  });

  it('drops what it held once deleted (no value kept alive by the arrays)', () => {
    const map = new SteadyMap<object>();
    const held = { big: true };
    map.set('a', held);
    map.set('b', {});
    map.delete('a');
    expect(map.values()).not.toContain(held);
    expect((map as unknown as { smallValues: unknown[] }).smallValues).not.toContain(held);
  });
});
