import { TOOL_CALL_V1_EXTENSION_URI } from '../extensions/tool-call-v1';
import { cardEndpoints, declaresToolCallV1, discoverAgent, selectEndpoint } from './agent-card';
import { A2aClientError } from './errors';
import { json, startFakeServer, type FakeServer } from './fixtures/fake-a2a-server';

const CARD_URL = 'http://agent.test/.well-known/agent-card.json';

const card10 = {
  name: 'toolstream demo',
  supportedInterfaces: [
    { url: 'http://agent.test/', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
    { url: 'http://agent.test/grpc', protocolBinding: 'GRPC', protocolVersion: '1.0' },
    { url: '/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: 'http://agent.test/a2a', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
  ],
  capabilities: { streaming: true, extensions: [{ uri: TOOL_CALL_V1_EXTENSION_URI }] },
};

describe('agent card', () => {
  it('lists the interfaces it can speak, URLs made absolute, gRPC left out', () => {
    expect(cardEndpoints(card10, CARD_URL)).toEqual([
      { url: 'http://agent.test/', binding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url: 'http://agent.test/a2a', binding: 'JSONRPC', protocolVersion: '1.0' },
      { url: 'http://agent.test/a2a', binding: 'JSONRPC', protocolVersion: '0.3' },
    ]);
  });

  it('prefers JSON-RPC 1.0, then honours an explicit preference', () => {
    expect(selectEndpoint(card10, CARD_URL)).toEqual({ url: 'http://agent.test/a2a', binding: 'JSONRPC', protocolVersion: '1.0' });
    expect(selectEndpoint(card10, CARD_URL, { binding: 'HTTP+JSON' }).binding).toBe('HTTP+JSON');
    expect(selectEndpoint(card10, CARD_URL, { protocolVersion: '0.3' }).protocolVersion).toBe('0.3');
  });

  it('reads an A2A 0.3 card (url, preferredTransport, additionalInterfaces)', () => {
    const card03 = {
      url: 'http://old.test/rpc',
      preferredTransport: 'JSONRPC',
      protocolVersion: '0.3.0',
      additionalInterfaces: [{ url: 'http://old.test/rest', transport: 'HTTP+JSON' }],
    };
    expect(cardEndpoints(card03, CARD_URL)).toEqual([
      { url: 'http://old.test/rpc', binding: 'JSONRPC', protocolVersion: '0.3' },
      { url: 'http://old.test/rest', binding: 'HTTP+JSON', protocolVersion: '0.3' },
    ]);
  });

  it('says why when no interface fits', () => {
    expect(() => selectEndpoint({ supportedInterfaces: [{ url: 'x', protocolBinding: 'GRPC', protocolVersion: '1.0' }] }, CARD_URL)).toThrow(
      `the agent card at ${CARD_URL} lists no interface this client speaks (JSONRPC or HTTP+JSON, A2A 1.0 or 0.3)`,
    );
    expect(() => selectEndpoint([], CARD_URL)).toThrow(A2aClientError);
  });

  it('tells whether tool-call-v1 is declared', () => {
    expect(declaresToolCallV1(card10)).toBe(true);
    expect(declaresToolCallV1({ capabilities: { extensions: [{ uri: 'other' }] } })).toBe(false);
    expect(declaresToolCallV1(null)).toBe(false);
  });

  describe('discoverAgent', () => {
    let server: FakeServer;
    afterEach(() => server.close());

    it('fetches the well-known card and picks the endpoint', async () => {
      server = await startFakeServer((req, res) =>
        req.path === '/.well-known/agent-card.json' ? json(res, 200, card10) : json(res, 404, {}),
      );
      const found = await discoverAgent(`${server.url}/some/page`);
      expect(found.endpoint).toEqual({ url: `${server.url}/a2a`, binding: 'JSONRPC', protocolVersion: '1.0' });
      expect(found.toolCallV1).toBe(true);
    });

    it('reports HTTP errors and bodies that are not JSON', async () => {
      server = await startFakeServer((_req, res) => json(res, 404, {}));
      await expect(discoverAgent(server.url)).rejects.toThrow(`the agent card at ${server.url}/.well-known/agent-card.json answered HTTP 404`);
      await server.close();
      server = await startFakeServer((_req, res) => res.end('<html>'));
      await expect(discoverAgent(server.url)).rejects.toThrow('is not valid JSON');
    });

    it('reports an unreachable server and a bad URL', async () => {
      server = await startFakeServer((_req, res) => res.end());
      const url = server.url;
      await server.close();
      await expect(discoverAgent(url)).rejects.toThrow(`could not fetch the agent card at ${url}/.well-known/agent-card.json`);
      await expect(discoverAgent('not a url')).rejects.toThrow('not a URL: "not a url"');
    });
  });
});
