import type { Script } from './scripted-worker';

/** Two tools in parallel, the fast one finishing first, then the answer. */
export const parallelWeatherAndClock: Script = async (run) => {
  run.progress('thinking');
  await run.sleep(5);
  run.progress('checking the weather; checking the time');
  run.started('call_weather', 'weather', { city: 'Paris' });
  run.started('call_clock', 'world_clock', { city: 'Tokyo' });
  await run.sleep(5);
  run.completed('call_clock', 'world_clock', { time: '21:04' });
  await run.sleep(10);
  run.completed('call_weather', 'weather', { tempC: 18, sky: 'clear' });
  run.reply('It is 18 °C and clear in Paris; in Tokyo it is 21:04.');
};

/** A tool that fails, then an answer that says so. */
export const failingDocLookup: Script = async (run) => {
  run.progress('thinking');
  run.started('call_doc', 'read_doc', { page: 'missing-page' });
  await run.sleep(5);
  run.failed('call_doc', 'read_doc', 'no page named missing-page');
  run.reply('I could not find the page missing-page.');
};

/** Starts a slow tool and waits until cancelled (for cancel and disconnect tests). */
export const slowTool: Script = async (run) => {
  run.progress('thinking');
  run.started('call_slow', 'slow_search', { q: 'everything' });
  await run.sleep(60_000);
  run.completed('call_slow', 'slow_search', 'done');
  run.reply('done');
};

/**
 * `toolCalls` sequential tool calls as fast as the bus takes them (benchmarks, big tasks); with
 * `perTurn`, the run yields to the event loop after that many, as a real run does between tools.
 */
export const toolStorm =
  (toolCalls: number, perTurn = Number.POSITIVE_INFINITY): Script =>
  async (run) => {
    run.progress('thinking');
    for (let i = 0; i < toolCalls; i++) {
      if (i > 0 && i % perTurn === 0) await new Promise((resolve) => setImmediate(resolve));
      run.started(`call_${i}`, 'calculator', { i });
      run.completed(`call_${i}`, 'calculator', i * 2);
    }
    run.reply(`ran ${toolCalls} tools`);
  };

/** Holds the run open; the test drives it through the ScriptedRun it gets from `nextRun()`. */
export const manual: Script = () => undefined;
