import vm from 'node:vm';

/**
 * Watches the real Node process (Jest hands test code a copy of `process` whose listeners never
 * fire) for unhandled rejections and uncaught exceptions, and snapshots the built-in prototypes
 * so a test can prove nothing polluted them.
 */
export class ProcessGuards {
  readonly unhandled: unknown[] = [];
  private readonly real = vm.runInThisContext('process') as NodeJS.Process;
  private readonly prototypes = PROTOTYPES.map((proto) => ({ proto, names: Object.getOwnPropertyNames(proto).sort().join(',') }));
  private readonly onRejection = (reason: unknown): void => void this.unhandled.push(reason);
  private readonly onException = (error: unknown): void => void this.unhandled.push(error);

  install(): this {
    this.real.on('unhandledRejection', this.onRejection);
    this.real.on('uncaughtException', this.onException);
    return this;
  }

  uninstall(): void {
    this.real.off('unhandledRejection', this.onRejection);
    this.real.off('uncaughtException', this.onException);
  }

  /** Built-in prototypes whose own properties changed since the guards were made. */
  pollutedPrototypes(): string[] {
    return this.prototypes.filter(({ proto, names }) => Object.getOwnPropertyNames(proto).sort().join(',') !== names).map(({ proto }) => String(proto.constructor?.name));
  }
}

/** The built-ins of this (Jest) realm, where the app's modules run, and of Node's own realm, where its core modules run. */
const PROTOTYPES: { constructor?: { name: string } }[] = [
  Object.prototype,
  Array.prototype,
  Function.prototype,
  String.prototype,
  Number.prototype,
  Promise.prototype,
  ...(vm.runInThisContext('[Object.prototype, Array.prototype, Function.prototype, String.prototype]') as object[]),
];
