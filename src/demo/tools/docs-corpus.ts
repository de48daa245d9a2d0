/**
 * The small document corpus shipped with the project (`corpus/*.md`), and a BM25 search over
 * it. Read once from disk; the search is pure and deterministic.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CorpusDocument {
  /** File name without `.md`, e.g. "replay". */
  id: string;
  title: string;
  content: string;
}

export interface SearchHit {
  id: string;
  title: string;
  score: number;
  /** The first line of the document that mentions a query term. */
  snippet: string;
}

export const DEFAULT_CORPUS_DIR = join(__dirname, 'corpus');

const STOP_WORDS = new Set(
  'a an and are as at be by for from how i in is it its me of on or the to what when where which who why with about docs doc document documents'.split(' '),
);

/** Lower-case word stems: "replays", "replayed" and "replaying" all become "replay". */
export function terms(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9]+/g) ?? [])
    .filter((w) => !STOP_WORDS.has(w))
    .map((w) => (w.length > 5 ? w.replace(/(?:ing|ed|es|s)$/, '') : w.length > 3 ? w.replace(/s$/, '') : w));
}

const K1 = 1.2;
const B = 0.75;
const SNIPPET_CHARS = 200;

interface Indexed {
  doc: CorpusDocument;
  counts: Map<string, number>;
  length: number;
}

export class DocsCorpus {
  private readonly indexed: Indexed[];
  private readonly averageLength: number;
  private readonly byId: Map<string, CorpusDocument>;

  constructor(readonly documents: readonly CorpusDocument[]) {
    this.byId = new Map(documents.map((d) => [d.id, d]));
    this.indexed = documents.map((doc) => {
      // The title counts twice: a match there says more than one in passing.
      const words = [...terms(doc.title), ...terms(doc.title), ...terms(doc.content)];
      const counts = new Map<string, number>();
      for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
      return { doc, counts, length: words.length };
    });
    this.averageLength = this.indexed.reduce((sum, d) => sum + d.length, 0) / Math.max(documents.length, 1);
  }

  /** Reads every `*.md` file of a directory; the first `# ` line is the title. */
  static fromDirectory(dir: string = DEFAULT_CORPUS_DIR): DocsCorpus {
    const documents = readdirSync(dir)
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((file) => {
        const text = readFileSync(join(dir, file), 'utf8');
        const heading = /^#\s+(.+)$/m.exec(text);
        return {
          id: file.slice(0, -3),
          title: heading?.[1].trim() ?? file.slice(0, -3),
          content: (heading ? text.replace(heading[0], '') : text).trim(),
        };
      });
    return new DocsCorpus(documents);
  }

  get ids(): string[] {
    return [...this.byId.keys()];
  }

  /** The document with that id (case and surrounding spaces ignored, spaces read as dashes). */
  get(id: string): CorpusDocument | undefined {
    return this.byId.get(id.trim().toLowerCase().replace(/\s+/g, '-'));
  }

  /** Documents ranked by BM25 relevance to the query, best first; only those that match. */
  search(query: string, limit: number): SearchHit[] {
    const wanted = [...new Set(terms(query))];
    const n = this.indexed.length;
    return this.indexed
      .map(({ doc, counts, length }) => {
        let score = 0;
        for (const term of wanted) {
          const tf = counts.get(term) ?? 0;
          if (tf === 0) continue;
          const df = this.indexed.filter((d) => d.counts.has(term)).length;
          const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
          score += (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * length) / this.averageLength));
        }
        return { doc, score };
      })
      .filter((r) => r.score > 0)
      .sort((a, b) => b.score - a.score || a.doc.id.localeCompare(b.doc.id))
      .slice(0, limit)
      .map(({ doc, score }) => ({ id: doc.id, title: doc.title, score: Number(score.toFixed(3)), snippet: snippet(doc, wanted) }));
  }
}

function snippet(doc: CorpusDocument, wanted: string[]): string {
  const sentences = doc.content.replace(/\s+/g, ' ').split(/(?<=[.!?])\s+/);
  const hit = sentences.find((s) => terms(s).some((t) => wanted.includes(t))) ?? sentences[0] ?? '';
  return hit.length > SNIPPET_CHARS ? `${hit.slice(0, SNIPPET_CHARS - 1)}…` : hit;
}

let shared: DocsCorpus | undefined;
/** The bundled corpus, read on first use. */
export function bundledCorpus(): DocsCorpus {
  shared ??= DocsCorpus.fromDirectory();
  return shared;
}
