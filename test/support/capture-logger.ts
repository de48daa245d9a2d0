import type { LoggerService } from '@nestjs/common';

/**
 * Every log line of an application (all levels, with their optional parameters), and everything
 * written to stdout, stderr and the console meanwhile: what an operator's log pipeline would keep.
 */
export class CaptureLogger implements LoggerService {
  readonly lines: string[] = [];
  /** The error and fatal lines alone. */
  readonly errors: string[] = [];
  private readonly restore: (() => void)[] = [];

  log = (...args: unknown[]): void => void this.keep(args);
  error = (...args: unknown[]): void => void this.errors.push(this.keep(args));
  warn = (...args: unknown[]): void => void this.keep(args);
  debug = (...args: unknown[]): void => void this.keep(args);
  verbose = (...args: unknown[]): void => void this.keep(args);
  fatal = (...args: unknown[]): void => void this.errors.push(this.keep(args));

  /** Also keeps what anything writes to the process's streams or the console. */
  captureOutput(): this {
    for (const stream of [process.stdout, process.stderr]) {
      const spy = jest.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
        this.lines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
        return true;
      });
      this.restore.push(() => spy.mockRestore());
    }
    for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
      const spy = jest.spyOn(console, method).mockImplementation((...args: unknown[]) => void this.keep(args));
      this.restore.push(() => spy.mockRestore());
    }
    return this;
  }

  release(): void {
    for (const undo of this.restore.splice(0)) undo();
  }

  text(): string {
    return this.lines.join('\n');
  }

  private keep(args: unknown[]): string {
    const line = args.map((a) => (a instanceof Error ? `${a.message}\n${a.stack ?? ''}` : typeof a === 'string' ? a : JSON.stringify(a))).join(' ');
    this.lines.push(line);
    return line;
  }
}
