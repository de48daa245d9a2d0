import { DELEGATION_METADATA_KEY, delegationOf, nextHopMetadata } from './delegation';
import { causeOf, describeFromCard, displayUrl, remoteAgentTool } from './remote-agent.tool';

describe('remoteAgentTool options', () => {
  it('refuses bad options at once, naming the option and never a secret', () => {
    const ok = { name: 'researcher', url: 'http://127.0.0.1:3001' };
    expect(() => remoteAgentTool({ ...ok, name: 'has space' })).toThrow('name must be 1 to 64 letters, digits, "_" or "-"');
    expect(() => remoteAgentTool({ ...ok, url: 'not a url' })).toThrow('url is not a URL');
    expect(() => remoteAgentTool({ ...ok, url: 'ftp://host' })).toThrow('url must be http or https, got ftp:');
    expect(() => remoteAgentTool({ ...ok, timeoutMs: 0 })).toThrow('timeoutMs must be a positive whole number of milliseconds');
    expect(() => remoteAgentTool({ ...ok, maxDepth: 0 })).toThrow('maxDepth must be a whole number from 1 to 32, got 0');
    expect(() => remoteAgentTool({ ...ok, bearerToken: 'secret-token\nX-Other: 1' })).toThrow(/bearerToken must be a non-empty single-line string$/);
    expect(remoteAgentTool(ok).name).toBe('researcher');
  });

  it('shows a URL without user info or query', () => {
    expect(displayUrl('https://user:pass@agents.example.com/researcher?key=abc')).toBe('https://agents.example.com/researcher');
    expect(displayUrl('http://127.0.0.1:3001/')).toBe('http://127.0.0.1:3001');
  });

  it('says the network cause of fetch failures', () => {
    const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) });
    expect(causeOf(refused)).toBe('connect ECONNREFUSED 127.0.0.1:1');
    const reset = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });
    expect(causeOf(reset)).toBe('UND_ERR_SOCKET: other side closed');
    expect(causeOf('text')).toBe('text');
    expect(causeOf(undefined)).toBe('unknown error');
  });

  it('describes a tool from the agent card', () => {
    const card = { name: 'Research agent', description: 'Finds facts.', skills: [{ id: 'w', name: 'Weather' }, { id: 'clock', name: '' }] };
    expect(describeFromCard('researcher', card as never)).toBe(
      'Asks the remote agent "researcher" (Research agent) a question in plain language and returns its answer. Finds facts. Skills: Weather, clock.',
    );
  });
});

describe('delegation depth in the message metadata', () => {
  it('reads none as a user run, and counts one hop further', () => {
    expect(delegationOf(undefined, 4)).toEqual({ depth: 0, maxDepth: 4 });
    const inbound = { [DELEGATION_METADATA_KEY]: { depth: 2, maxDepth: 3 } };
    expect(delegationOf(inbound, 4)).toEqual({ depth: 2, maxDepth: 3 });
    expect(nextHopMetadata(delegationOf(inbound, 4))).toEqual({ [DELEGATION_METADATA_KEY]: { depth: 3, maxDepth: 3 } });
  });

  it('keeps the smallest limit on the way and ignores values that are not whole numbers in range', () => {
    expect(delegationOf({ [DELEGATION_METADATA_KEY]: { depth: 1, maxDepth: 10 } }, 4)).toEqual({ depth: 1, maxDepth: 4 });
    expect(delegationOf({ [DELEGATION_METADATA_KEY]: { depth: -1, maxDepth: 'x' } }, 4)).toEqual({ depth: 0, maxDepth: 4 });
    expect(delegationOf({ [DELEGATION_METADATA_KEY]: { depth: 1e9 } }, 4)).toEqual({ depth: 32, maxDepth: 4 });
    expect(delegationOf({ [DELEGATION_METADATA_KEY]: { depth: 1.5, maxDepth: 0 } }, 4)).toEqual({ depth: 0, maxDepth: 4 });
    expect(delegationOf({ [DELEGATION_METADATA_KEY]: 'deep' }, 4)).toEqual({ depth: 0, maxDepth: 4 });
  });
});
