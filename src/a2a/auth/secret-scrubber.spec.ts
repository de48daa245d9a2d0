import { SCRUBBED, SecretScrubber } from './secret-scrubber';

describe('SecretScrubber', () => {
  const key = 'sk-live-0123456789abcdef';
  const token = 'tok-9876543210fedcba-zz';
  const scrubber = new SecretScrubber([key, token]);

  it('replaces every occurrence of every secret in text', () => {
    expect(scrubber.text(`a ${key} b ${key}${token}`)).toBe(`a ${SCRUBBED} b ${SCRUBBED}${SCRUBBED}`);
    expect(scrubber.text('nothing here')).toBe('nothing here');
  });

  it('replaces a secret that contains another one whole', () => {
    expect(new SecretScrubber(['abcd1234', 'abcd1234-longer']).text('x abcd1234-longer y')).toBe(`x ${SCRUBBED} y`);
  });

  it('scrubs the start of a secret that a cap cut off just before its truncation marker', () => {
    expect(scrubber.text(`args: ${key.slice(0, 10)}…[truncated: 9000 bytes]`)).toBe(`args: ${SCRUBBED}…[truncated: 9000 bytes]`);
    // Too short a tail to tell from ordinary text: left alone.
    expect(scrubber.text(`args: sk-…[truncated: 9000 bytes]`)).toBe('args: sk-…[truncated: 9000 bytes]');
  });

  it('copies plain data with every string and key scrubbed, keeping "__proto__" an own key', () => {
    const input = JSON.parse(`{"a":["${key}",{"deep":"x${token}x"}],"${key}":1,"n":2,"__proto__":{"p":"${key}"}}`) as Record<string, unknown>;
    const out = scrubber.value(input) as Record<string, unknown>;
    expect(JSON.stringify(out)).not.toContain(key);
    expect(JSON.stringify(out)).not.toContain(token);
    expect(out).toMatchObject({ a: [SCRUBBED, { deep: `x${SCRUBBED}x` }], [SCRUBBED]: 1, n: 2 });
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyNames(out)).toContain('__proto__');
    expect(input).toHaveProperty('a.0', key);
  });

  it('does nothing, not even copy, without secrets', () => {
    const value = { a: 1 };
    expect(new SecretScrubber([]).value(value)).toBe(value);
    expect(new SecretScrubber(['']).active).toBe(false);
  });
});
