import type { Server } from 'node:http';

/** A server under test, not yet listening, and the path of its JSON-RPC endpoint. */
export interface ServerUnderTest {
  server: Server;
  rpcPath: string;
  /** Closes the server and whatever it runs besides (toolstream's Nest application); absent where closing the server is all. */
  close?: () => Promise<void>;
}
