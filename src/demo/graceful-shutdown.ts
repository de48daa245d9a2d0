import { Logger, type INestApplicationContext } from '@nestjs/common';
import { A2aDrainService } from '../a2a/shutdown/a2a-drain.service';

export interface GracefulShutdownOptions {
  /** Default SIGTERM and SIGINT. A second signal during the drain exits at once, with code 1. */
  signals?: NodeJS.Signals[];
  /** Ends the process; default `process.exit`. */
  exit?: (code: number) => void;
}

/**
 * The demo app's choice of signal handling (a library leaves signals to the application).
 * Shutdown on a signal, in order: A2aDrainService.drain() (new requests refused with 503, running
 * tasks finished or cancelled within `drainTimeoutMs`, their streams closed after the final
 * event), then `app.close()` (Nest's shutdown hooks), then exit 0 (1 if closing failed). A host
 * can use `app.enableShutdownHooks()` instead: A2aModule drains in beforeApplicationShutdown
 * alike, and Nest then re-raises the signal.
 * Returns the function that removes the signal listeners.
 */
export function enableGracefulShutdown(app: INestApplicationContext, options: GracefulShutdownOptions = {}): () => void {
  const { signals = ['SIGTERM', 'SIGINT'], exit = (code: number) => process.exit(code) } = options;
  const logger = new Logger('GracefulShutdown');
  let shuttingDown = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (shuttingDown) {
      logger.warn(`${signal} again: exiting without waiting for the drain`);
      exit(1);
      return;
    }
    shuttingDown = true;
    logger.log(`${signal}: refusing new requests and draining running tasks`);
    void app
      .get(A2aDrainService)
      .drain()
      .then(() => app.close())
      .then(
        () => exit(0),
        (err: unknown) => {
          logger.error(`shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
          exit(1);
        },
      );
  };
  for (const signal of signals) process.on(signal, onSignal);
  return () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
}
