import type { StructuredToolInterface } from '@langchain/core/tools';
import { createCalculatorTool } from './calculator.tool';
import type { DocsCorpus } from './docs-corpus';
import { bundledCorpus } from './docs-corpus';
import { createReadDocTool } from './read-doc.tool';
import { createSearchDocsTool } from './search-docs.tool';
import { createSlowTaskTool } from './slow-task.tool';
import { createWeatherTool } from './weather.tool';
import { createWorldClockTool } from './world-clock.tool';

export interface DemoToolsOptions {
  /** Clock of `world_clock` (tests pin it). */
  now?: () => Date;
  /** Corpus of `search_docs` and `read_doc`; the bundled one by default. */
  corpus?: () => DocsCorpus;
}

/** The six offline demo tools. Their names are fixed: narration phrases them by name. */
export function createDemoTools(options: DemoToolsOptions = {}): StructuredToolInterface[] {
  const corpus = options.corpus ?? bundledCorpus;
  return [
    createWeatherTool(),
    createWorldClockTool(options.now),
    createCalculatorTool(),
    createSearchDocsTool(corpus),
    createReadDocTool(corpus),
    createSlowTaskTool(),
  ];
}
