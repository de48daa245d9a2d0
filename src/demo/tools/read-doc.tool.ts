import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { throwIfAborted } from '../../executor/abortable';
import { bundledCorpus, type DocsCorpus } from './docs-corpus';

export const READ_DOC_TOOL = 'read_doc';

/** Reads one corpus document by id; an unknown id is a real "no document named …" error. */
export function createReadDocTool(corpus: () => DocsCorpus = bundledCorpus) {
  return tool(
    ({ id }, config) => {
      throwIfAborted(config?.signal);
      const docs = corpus();
      const doc = docs.get(id);
      if (!doc) throw new Error(`no document named "${id}" (available: ${docs.ids.join(', ')})`);
      return doc;
    },
    {
      name: READ_DOC_TOOL,
      description: 'Reads a toolstream document by its id (as returned by search_docs).',
      schema: z.object({ id: z.string().min(1).max(200).describe('Document id, e.g. "replay"') }),
    },
  );
}
