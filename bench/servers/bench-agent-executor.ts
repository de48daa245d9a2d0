import { Injectable } from '@nestjs/common';
import { AIMessage } from '@langchain/core/messages';
import { Observable } from 'rxjs';
import { AgentExecutor, type ExecutorEvent, type ExecutorInput, type ExecutorRunOptions } from '../../src/executor';
import { parseScenario, playScenario, SCENARIO_ANSWER, SCENARIO_NARRATION } from '../lib/scenario';

/**
 * Replaces the LangGraph executor in the real app: plays the scripted scenario with
 * zero-latency tools, so the benchmark measures toolstream's pipeline (runtime, bus, A2A, SSE)
 * from the executor event on, and nothing of a model.
 */
@Injectable()
export class BenchAgentExecutor extends AgentExecutor {
  run(input: ExecutorInput, options: ExecutorRunOptions): Observable<ExecutorEvent> {
    return new Observable<ExecutorEvent>((subscriber) => {
      // As the real executor: the runtime's controller when it lends it (one signal per run), else
      // one of its own that follows the caller's signal.
      const abort = options.controller ?? new AbortController();
      const follows = abort.signal !== options.signal;
      const onAbort = (): void => abort.abort();
      if (follows) options.signal?.addEventListener('abort', onAbort, { once: true });
      if (options.signal?.aborted) abort.abort();
      subscriber.next({ type: 'progress', text: SCENARIO_NARRATION, step: 0 });
      const text = typeof input === 'string' ? input : String(input.at(-1)?.content ?? '');
      // As the real executor (src/executor/agent-run.ts): a scenario that has ended, played out
      // or failed, is not aborted on teardown; one still playing is (cancel, disconnect).
      let ended = false;
      playScenario(parseScenario(text), (frame) => subscriber.next({ type: 'toolFrame', frame }), abort.signal).then(
        () => {
          ended = true;
          if (!abort.signal.aborted) subscriber.next({ type: 'reply', message: new AIMessage(SCENARIO_ANSWER), text: SCENARIO_ANSWER });
          subscriber.complete();
        },
        (err: unknown) => {
          ended = true;
          subscriber.error(err);
        },
      );
      return () => {
        if (follows) options.signal?.removeEventListener('abort', onAbort);
        if (!ended) abort.abort();
      };
    });
  }
}
