import type { ServerResponse } from 'node:http';

const out = Buffer.allocUnsafe(1 << 20);

/**
 * A stand-in response for the in-process per-frame probes (frame-path-cost, stage-cost): what a
 * socket does with a written string, measured (flattened) and copied, and nothing else.
 */
export function fakeResponse(): ServerResponse {
  // As a socket: corked and uncorked by count; a write to an uncorked one corks it until the next tick, as Node's response does.
  const socket = {
    writableCorked: 0,
    cork() {
      this.writableCorked += 1;
    },
    uncork() {
      if (this.writableCorked > 0) this.writableCorked -= 1;
    },
  };
  const uncork = (): void => socket.uncork();
  return {
    writableHighWaterMark: 16 * 1024,
    writableLength: 0,
    destroyed: false,
    writableEnded: false,
    socket,
    write(chunk: string) {
      if (socket.writableCorked === 0) {
        socket.cork();
        process.nextTick(uncork);
      }
      // What the socket write does with a string: measure it (flattening it) and copy it.
      const bytes = Buffer.byteLength(chunk);
      out.write(chunk, 0, bytes);
      return true;
    },
    // The stream listens for the response's close (on since the sixteenth round, once before); this one never closes.
    on() {
      return this;
    },
    once() {
      return this;
    },
    end() {},
  } as unknown as ServerResponse;
}
