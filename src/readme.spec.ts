/** The README's host-app snippet is the example's code, which the host-app e2e compiles and runs. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');

describe('README', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const snippets = [...readme.matchAll(/<!-- file: (\S+) -->\n```ts\n([\s\S]*?)\n```/g)].map((m) => ({ file: m[1], code: m[2] }));

  it('shows the whole example host app', () => {
    expect(snippets.map((s) => s.file)).toEqual([
      'examples/host-app/src/app.module.ts',
      'examples/host-app/src/stock-price.tool.ts',
      'examples/host-app/src/main.ts',
    ]);
  });

  it.each(['examples/host-app/src/app.module.ts', 'examples/host-app/src/stock-price.tool.ts', 'examples/host-app/src/main.ts'])(
    'shows %s exactly as it is',
    (file) => {
      expect(snippets.find((s) => s.file === file)?.code).toBe(readFileSync(join(ROOT, file), 'utf8').trimEnd());
    },
  );

  it('stays a front door (under 12 KB)', () => {
    expect(Buffer.byteLength(readme)).toBeLessThan(12 * 1024);
  });
});
