/**
 * Builds the page into one directory: the client kit and the page script bundled by esbuild
 * for browsers (no CDN, nothing fetched at run time), beside index.html and app.css.
 * `npm run build` runs it after `nest build` (node dist/web/web-bundle.js → dist/web/public);
 * tests call buildWebBundle() into a temporary directory.
 */
import { build } from 'esbuild';
import { copyFile, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** The sources, found the same way from src/web (ts-node, jest) and from dist/web (built). */
const PROJECT_ROOT = resolve(__dirname, '..', '..');
const WEB_SOURCES = join(PROJECT_ROOT, 'src', 'web');

export interface WebBundleOptions {
  outDir: string;
  minify?: boolean;
}

/** Builds the page; resolves with the source files that went into app.js (relative to the project root). */
export async function buildWebBundle({ outDir, minify = true }: WebBundleOptions): Promise<string[]> {
  await mkdir(outDir, { recursive: true });
  const result = await build({
    entryPoints: [join(WEB_SOURCES, 'browser', 'app.ts')],
    outfile: join(outDir, 'app.js'),
    bundle: true,
    platform: 'browser',
    format: 'iife',
    // Browsers of the last few years, phones included.
    target: 'es2020',
    minify,
    sourcemap: 'linked',
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
    absWorkingDir: PROJECT_ROOT,
  });
  await Promise.all(['index.html', 'app.css'].map((name) => copyFile(join(WEB_SOURCES, 'public', name), join(outDir, name))));
  return Object.keys(result.metafile.inputs);
}

if (require.main === module) {
  const outDir = join(__dirname, 'public');
  buildWebBundle({ outDir }).then(
    () => console.log(`web page built in ${outDir}`),
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
