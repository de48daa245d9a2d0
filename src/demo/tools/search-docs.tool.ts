import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { throwIfAborted } from '../../executor/abortable';
import { bundledCorpus, type DocsCorpus } from './docs-corpus';

export const SEARCH_DOCS_TOOL = 'search_docs';

/** Ranked search over the documents shipped with toolstream. */
export function createSearchDocsTool(corpus: () => DocsCorpus = bundledCorpus) {
  return tool(
    ({ query, limit }, config) => {
      throwIfAborted(config?.signal);
      if (query.trim() === '') throw new Error('the search query is empty');
      return { query, results: corpus().search(query, limit ?? 3) };
    },
    {
      name: SEARCH_DOCS_TOOL,
      description: 'Searches the toolstream documentation (A2A, tool-call-v1 frames, streaming, replay, cancellation, redaction).',
      schema: z.object({
        query: z.string().max(500).describe('Words to look for, e.g. "replay after reconnect"'),
        limit: z.number().int().min(1).max(10).optional().describe('How many results, 3 by default'),
      }),
    },
  );
}
