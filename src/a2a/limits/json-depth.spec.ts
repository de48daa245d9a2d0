import { nestsDeeperThan } from './json-depth';

describe('nestsDeeperThan', () => {
  const nested = (depth: number): unknown => JSON.parse('{"a":'.repeat(depth) + '1' + '}'.repeat(depth));

  it('counts arrays and objects, not scalars', () => {
    expect(nestsDeeperThan(1, 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan({ a: [{ b: 'x' }] }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [{ b: 'x' }] }, 2)).toBe(true);
    expect(nestsDeeperThan(nested(64), 64)).toBe(false);
    expect(nestsDeeperThan(nested(65), 64)).toBe(true);
  });

  it('walks every own key, "__proto__" as JSON.parse makes it included, and only own keys', () => {
    expect(nestsDeeperThan(JSON.parse('{"__proto__":{"a":{}}}'), 2)).toBe(true);
    expect(nestsDeeperThan(JSON.parse('{"__proto__":{"a":{}}}'), 3)).toBe(false);
    expect(nestsDeeperThan(JSON.parse('[1,{"a":"x"},[[],{"b":[{}]}]]'), 4)).toBe(true);
    expect(nestsDeeperThan(JSON.parse('[1,{"a":"x"},[[],{"b":[{}]}]]'), 5)).toBe(false);
    const inherited = Object.create({ deep: { a: { b: {} } } }) as object;
    expect(nestsDeeperThan(inherited, 1)).toBe(false);
  });

  it('checks input far deeper than the call stack could walk', () => {
    expect(nestsDeeperThan(JSON.parse('['.repeat(200_000) + ']'.repeat(200_000)), 64)).toBe(true);
  });
});
