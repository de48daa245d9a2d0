/**
 * What each package entry point pulls in, read from esbuild's module graph (no build needed):
 * `toolstream/client` bundles for browsers, `toolstream/extensions` loads no framework, and the
 * A2A front and the runtime load neither LangGraph nor OpenAI.
 */
import { build, type Metafile } from 'esbuild';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..');

async function graph(entry: string, platform: 'browser' | 'node'): Promise<Metafile> {
  const result = await build({
    entryPoints: [join(ROOT, entry)],
    bundle: true,
    write: false,
    platform,
    format: platform === 'browser' ? 'iife' : 'cjs',
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: ROOT,
    // Node: packages stay external, so the graph lists what each of our files imports.
    ...(platform === 'node' ? { packages: 'external' as const } : {}),
  });
  return result.metafile;
}

/** Every package a graph reaches: bundled inputs (browser) and external imports (node). */
function packagesIn(meta: Metafile): string[] {
  const found = new Set<string>();
  for (const [path, input] of Object.entries(meta.inputs)) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    if (m) found.add(m[1]);
    for (const imported of input.imports) if (imported.external) found.add(imported.path);
  }
  return [...found].sort();
}

describe('package entry points', () => {
  it('toolstream/client bundles for the browser with no Node built-ins and no framework', async () => {
    // A Node built-in would fail the browser build outright.
    const meta = await graph('src/client/index.ts', 'browser');
    const packages = packagesIn(meta);
    expect(packages.filter((p) => /^(?:node:|@nestjs\/|@langchain\/|rxjs$)/.test(p))).toEqual([]);
    expect(Object.keys(meta.inputs).filter((p) => p.startsWith('src/') && !/^src\/(?:client|extensions)\//.test(p))).toEqual([]);
  });

  it('toolstream/extensions loads no Nest and no LangChain', async () => {
    const packages = packagesIn(await graph('src/extensions/index.ts', 'node'));
    expect(packages.filter((p) => /^(?:@nestjs\/|@langchain\/|rxjs$|reflect-metadata$)/.test(p))).toEqual([]);
  });

  it('toolstream/testing is the doubles, without the Nest modules', async () => {
    const packages = packagesIn(await graph('src/testing/index.ts', 'node'));
    expect(packages.filter((p) => p.startsWith('@nestjs/'))).toEqual([]);
  });

  it.each(['src/a2a/a2a.module.ts', 'src/runtime/runtime.module.ts'])('%s loads neither LangGraph nor OpenAI', async (entry) => {
    const packages = packagesIn(await graph(entry, 'node'));
    expect(packages.filter((p) => /^@langchain\/(?:langgraph|openai)/.test(p))).toEqual([]);
  });
});
