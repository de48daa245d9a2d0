/**
 * The `toolstream` entry exports exactly the names in public-api.txt (values and types). A new
 * export is a decision: add it to the list in the same change, or keep it internal.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';

function exportedNames(entry: string): string[] {
  const program = ts.createProgram([entry], { noEmit: true, skipLibCheck: true, resolveJsonModule: true, esModuleInterop: true, experimentalDecorators: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry);
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  if (!moduleSymbol) throw new Error(`cannot read the exports of ${entry}`);
  return checker.getExportsOfModule(moduleSymbol).map((s) => s.getName()).sort();
}

describe('the toolstream entry point', () => {
  it('exports the allowed public API and nothing else', () => {
    const allowed = readFileSync(join(__dirname, 'public-api.txt'), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'))
      .sort();
    const actual = exportedNames(join(__dirname, 'index.ts'));
    expect({ notInTheList: actual.filter((n) => !allowed.includes(n)), listedButMissing: allowed.filter((n) => !actual.includes(n)) }).toEqual({
      notInTheList: [],
      listedButMissing: [],
    });
  });
});
