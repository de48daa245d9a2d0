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
});
