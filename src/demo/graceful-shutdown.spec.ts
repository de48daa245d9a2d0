import { enableGracefulShutdown } from './graceful-shutdown';

describe('enableGracefulShutdown', () => {
  function fakeApp(close: () => Promise<void>) {
    const drain = { drain: jest.fn(() => Promise.resolve({})) };
    return { app: { get: () => drain, close: jest.fn(close) }, drain };
  }

  it('on a signal: drains, closes the app, then exits 0; a second signal exits 1 at once', async () => {
    const { app, drain } = fakeApp(() => Promise.resolve());
    const exit = jest.fn();
    const remove = enableGracefulShutdown(app as never, { signals: ['SIGUSR2'], exit });
    process.emit('SIGUSR2', 'SIGUSR2');
    await new Promise((resolve) => setImmediate(resolve));
    expect(drain.drain).toHaveBeenCalledTimes(1);
    expect(app.close).toHaveBeenCalledTimes(1);
    expect(exit).toHaveBeenCalledWith(0);
    process.emit('SIGUSR2', 'SIGUSR2');
    expect(exit).toHaveBeenLastCalledWith(1);
    remove();
    expect(process.listenerCount('SIGUSR2')).toBe(0);
  });

  it('exits 1 when closing fails', async () => {
    const { app } = fakeApp(() => Promise.reject(new Error('stuck')));
    const exit = jest.fn();
    const remove = enableGracefulShutdown(app as never, { signals: ['SIGUSR2'], exit });
    process.emit('SIGUSR2', 'SIGUSR2');
    await new Promise((resolve) => setImmediate(resolve));
    expect(exit).toHaveBeenCalledWith(1);
    remove();
  });
});
