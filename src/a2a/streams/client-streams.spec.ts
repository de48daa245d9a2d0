import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { ClientStreams } from './client-streams';

class FakeSocket extends EventEmitter {
  writableNeedDrain = false;
}

/** What ClientStreams reads of a response: its close, its buffer's state, its socket's drains. */
class FakeResponse extends EventEmitter {
  destroyed = false;
  writableNeedDrain = false;
  writableFinished = false;
  readonly socket = new FakeSocket();

  close(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

const STALLED_MS = 100;

describe('ClientStreams', () => {
  let streams: ClientStreams;

  beforeEach(() => {
    jest.useFakeTimers();
    streams = new ClientStreams({ stalledStreamTimeoutMs: STALLED_MS });
  });

  afterEach(() => {
    streams.onModuleDestroy();
    jest.useRealTimers();
  });

  function track(response: FakeResponse, onStalled: () => void = () => undefined): FakeResponse {
    streams.track(response as unknown as ServerResponse, onStalled);
    return response;
  }

  it("runs a stream's own close callback first, in its one close listener; a response closed already gets the callback alone", () => {
    const seen: number[] = [];
    const response = new FakeResponse();
    streams.track(response as unknown as ServerResponse, () => undefined, () => seen.push(streams.size));
    expect(response.listenerCount('close')).toBe(1);
    response.close();
    // Still counted while the callback runs, then untracked.
    expect(seen).toEqual([1]);
    expect(streams.size).toBe(0);
    const gone = new FakeResponse();
    gone.destroyed = true;
    streams.track(gone as unknown as ServerResponse, () => undefined, () => seen.push(-1));
    expect(streams.size).toBe(0);
    gone.emit('close');
    expect(seen).toEqual([1, -1]);
    // A callback that throws still leaves the stream untracked.
    const throwing = new FakeResponse();
    streams.track(throwing as unknown as ServerResponse, () => undefined, () => {
      throw new Error('boom');
    });
    expect(() => throwing.close()).toThrow('boom');
    expect(streams.size).toBe(0);
  });

  it('counts each stream until its response closes, in whatever order they close', async () => {
    const [a, b, c] = [track(new FakeResponse()), track(new FakeResponse()), track(new FakeResponse())];
    expect(streams.size).toBe(3);
    b.close();
    expect(streams.size).toBe(2);
    b.close();
    expect(streams.size).toBe(2);
    const d = track(new FakeResponse());
    a.close();
    expect(streams.size).toBe(2);
    // The ones left are c and d: flushed() waits for exactly those.
    d.writableFinished = true;
    await expect(streams.flushed(0)).resolves.toBe(1);
    c.writableFinished = true;
    await expect(streams.flushed(0)).resolves.toBe(0);
    c.close();
    d.close();
    expect(streams.size).toBe(0);
  });

  it('does not track a response already closed', () => {
    const closed = new FakeResponse();
    closed.destroyed = true;
    track(closed);
    expect(streams.size).toBe(0);
    expect(closed.listenerCount('close')).toBe(0);
  });

  it('closes a stream whose buffer stays full without a drain for stalledMs, not one that drains or is not full', () => {
    const stalled = jest.fn();
    const draining = jest.fn();
    const flowing = jest.fn();
    const stuck = track(new FakeResponse(), stalled);
    const slow = track(new FakeResponse(), draining);
    const fine = track(new FakeResponse(), flowing);
    stuck.writableNeedDrain = true;
    slow.socket.writableNeedDrain = true;
    for (let t = 0; t < 4 * STALLED_MS; t += STALLED_MS / 4) {
      jest.advanceTimersByTime(STALLED_MS / 4);
      slow.socket.emit('drain');
    }
    expect(stalled).toHaveBeenCalledTimes(1);
    expect(draining).not.toHaveBeenCalled();
    expect(flowing).not.toHaveBeenCalled();
    expect(streams.stalledStreamsClosed).toBe(1);
    expect(streams.size).toBe(2);
    // Drains are listened for only on a socket found full, and no longer once its stream is untracked.
    expect(stuck.socket.listenerCount('drain')).toBe(0);
    expect(slow.socket.listenerCount('drain')).toBe(1);
    expect(fine.socket.listenerCount('drain')).toBe(0);
    slow.close();
    expect(slow.socket.listenerCount('drain')).toBe(0);
  });

  it('starts the time of a full stream again after a drain between two looks', () => {
    const stalled = jest.fn();
    const response = track(new FakeResponse(), stalled);
    response.writableNeedDrain = true;
    // Found full at the first look (after STALLED_MS / 4): without a drain it would close at the
    // look STALLED_MS after that one.
    jest.advanceTimersByTime(STALLED_MS);
    response.socket.emit('drain');
    jest.advanceTimersByTime(STALLED_MS / 2);
    expect(stalled).not.toHaveBeenCalled();
    jest.advanceTimersByTime(STALLED_MS);
    expect(stalled).toHaveBeenCalledTimes(1);
  });
});
