/* eslint-disable no-control-regex -- terminal escape sequences are what these tests read */
import { TOOL_CALL_V1_EXTENSION_URI } from '../extensions/tool-call-v1';
import { json, jsonRpcError, startFakeServer, startSse, writeEvents, type FakeServer } from '../client/fixtures/fake-a2a-server';
import { demoRun, events10, type Step } from '../client/fixtures/streams';
import { EXIT, runAsk } from './ask';
import { Capture } from './fixtures/capture-stream';


const card = (url: string, extensions = [{ uri: TOOL_CALL_V1_EXTENSION_URI }]) => ({
  name: 'fake',
  supportedInterfaces: [{ url: `${url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  capabilities: { streaming: true, extensions },
});

/** The lines a terminal shows after this output: `ESC[nA ESC[0J` erases the last n lines. */
function screenOf(output: string): string[] {
  const lines: string[] = [];
  for (const piece of output.split(/(\x1b\[\d+A\x1b\[0J)/)) {
    const erase = /^\x1b\[(\d+)A\x1b\[0J$/.exec(piece);
    if (erase) lines.splice(lines.length - Number(erase[1]));
    else lines.push(...piece.split('\n').slice(0, -1));
  }
  return lines;
}

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function agentStreaming(events: unknown[], cardExtensions?: Array<{ uri: string }>): Promise<string> {
  server = await startFakeServer((req, res) => {
    if (req.method === 'GET') return json(res, 200, card(`http://${req.headers.host}`, cardExtensions));
    startSse(res);
    writeEvents(res, events, { rpcId: req.body.id });
    res.end();
  });
  return server.url;
}

async function ask(argv: string[], tty = false) {
  const stdout = new Capture(tty);
  const stderr = new Capture();
  const code = await runAsk(argv, { stdout, stderr, env: { NO_COLOR: '1' } });
  return { code, out: stdout.text, err: stderr.text };
}

describe('ask (non-TTY): plain lines', () => {
  it('prints one line per narration and tool event, marked ✓ or ✗, then the answer; exit 0', async () => {
    const url = await agentStreaming(events10());
    const { code, out, err } = await ask(['weather in Paris and the time in Tokyo', '--url', url]);
    expect(err).toBe('');
    expect(out.split('\n')).toEqual([
      '· thinking',
      '· checking the weather; checking the time',
      '… weather {"city":"Paris"}',
      '… world_clock {"timeZone":"Asia/Tokyo"}',
      '✓ world_clock 35 ms → {"time":"18:00"}',
      '✓ weather 420 ms → {"tempC":18,"sky":"clear"}',
      '· reading a document',
      '… read_doc {"id":"nope"}',
      '✗ read_doc 12 ms: unknown doc id "nope"',
      '',
      'Paris: 18 °C, clear. Tokyo: 18:00.',
      '',
    ]);
    expect(code).toBe(EXIT.answered);
  });

  it('exits 1 and says why when the task fails', async () => {
    const steps: Step[] = [...demoRun.slice(0, 6), { kind: 'status', state: 'failed', text: 'the model is unavailable' }];
    const url = await agentStreaming(events10(steps));
    const { code, out } = await ask(['q', '--url', url]);
    expect(out).toMatch(/^✗ weather \d+ ms: the model is unavailable$/m);
    expect(out.trimEnd().split('\n').pop()).toBe('✗ the task failed: the model is unavailable');
    expect(code).toBe(EXIT.taskFailed);
  });

  it('exits 1 when the task is canceled', async () => {
    const url = await agentStreaming(events10([demoRun[0], { kind: 'status', state: 'canceled' }]));
    const { code, out } = await ask(['q', '--url', url]);
    expect(out).toBe('✗ the task canceled: the task ended canceled\n');
    expect(code).toBe(EXIT.taskFailed);
  });

  it('exits 2 for input the server rejects as invalid (-32602), 3 with another server error, and when nothing answers', async () => {
    let code = -32602;
    server = await startFakeServer((req, res) =>
      req.method === 'GET' ? json(res, 200, card(`http://${req.headers.host}`)) : jsonRpcError(res, req.body.id, code, code === -32602 ? 'message text exceeds maxTextLength' : 'internal'),
    );
    const invalid = await ask(['q', '--url', server.url]);
    expect(invalid).toMatchObject({ code: EXIT.usage, err: 'ask: SendStreamingMessage failed: message text exceeds maxTextLength (code -32602)\n' });
    code = -32603;
    const failed = await ask(['q', '--url', server.url]);
    expect(failed).toMatchObject({ code: EXIT.error, err: 'ask: SendStreamingMessage failed: internal (code -32603)\n' });
    const url = server.url;
    await server.close();
    server = undefined;
    const down = await ask(['q', '--url', url]);
    expect(down.code).toBe(EXIT.error);
    expect(down.err).toMatch(/^ask: could not fetch the agent card at http:\/\/127\.0\.0\.1:\d+\/\.well-known\/agent-card\.json/);
  });

  it('writes the answer as it streams, piece by piece, and only once', async () => {
    const chunks: string[] = [];
    const url = await agentStreaming(
      events10([
        { kind: 'task', state: 'submitted' },
        { kind: 'answer', text: 'Paris is ' },
        { kind: 'answer', text: 'sunny.', append: true },
        { kind: 'status', state: 'completed' },
      ]),
    );
    const stdout = { isTTY: false, write: (text: string) => chunks.push(text) };
    const code = await runAsk(['q', '--url', url], { stdout, stderr: new Capture(), env: { NO_COLOR: '1' } });
    expect(code).toBe(EXIT.answered);
    expect(chunks).toContain('Paris is ');
    expect(chunks).toContain('sunny.');
    expect(chunks.join('').match(/Paris is sunny\./g)).toHaveLength(1);
    expect(chunks.join('').endsWith('Paris is sunny.\n')).toBe(true);
  });

  it('says only "interrupted" on Ctrl-C, with no verdict on the task before it; exit 130', async () => {
    const controller = new AbortController();
    server = await startFakeServer((req, res) => {
      if (req.method === 'GET') return json(res, 200, card(`http://${req.headers.host}`));
      startSse(res);
      writeEvents(res, events10(demoRun.slice(0, 4)), { rpcId: req.body.id });
      setTimeout(() => controller.abort(), 200);
    });
    const stdout = new Capture();
    const stderr = new Capture();
    const code = await runAsk(['q', '--url', server.url], { stdout, stderr, env: { NO_COLOR: '1' }, signal: controller.signal });
    expect(code).toBe(EXIT.interrupted);
    expect(stderr.text).toBe('ask: interrupted\n');
    expect(stdout.text).not.toMatch(/gave no answer|the task ended/);
    expect(stdout.text).toMatch(/interrupted/);
  });

  it('finds the card under the URL it is given: an agent mounted under a prefix', async () => {
    server = await startFakeServer((req, res) => {
      if (req.method === 'GET') {
        if (req.path !== '/agent/.well-known/agent-card.json') return json(res, 404, {});
        return json(res, 200, card(`http://${req.headers.host}/agent`));
      }
      if (req.path !== '/agent/a2a') return json(res, 404, {});
      startSse(res);
      writeEvents(res, events10(), { rpcId: req.body.id });
      res.end();
    });
    const { code, out, err } = await ask(['weather in Paris', '--url', `${server.url}/agent/`]);
    expect([code, err]).toEqual([EXIT.answered, '']);
    expect(out).toContain('✓ weather');
  });

  it('warns when the card does not declare tool-call-v1', async () => {
    const url = await agentStreaming(events10([demoRun[0], { kind: 'answer', text: 'hi' }, { kind: 'status', state: 'completed' }]), []);
    const { code, err } = await ask(['q', '--url', url]);
    expect(err).toContain('does not declare tool-call-v1');
    expect(code).toBe(EXIT.answered);
  });

  it('exits 2 with the usage on bad arguments', async () => {
    const { code, err } = await ask([]);
    expect(code).toBe(EXIT.usage);
    expect(err).toMatch(/^ask: no question given\n\nusage: npm run ask -- "question"/);
  });
});

describe('ask (TTY): a live block redrawn in place', () => {
  it('draws spinners, then ✓/✗ with durations, then the answer', async () => {
    const url = await agentStreaming(events10());
    const { code, out } = await ask(['q', '--url', url], true);
    expect(code).toBe(EXIT.answered);
    // redraws move the cursor up over the previous block and clear it
    expect(out).toMatch(/\x1b\[\d+A\x1b\[0J/);
    // spinners while running (a braille frame before the tool name)
    expect(out).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] weather \d+ ms \{"city":"Paris"\}/);
    expect(out).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] checking the weather; checking the time/);
    // what stays on the screen: every tool once, in timeline order, resolved, then the answer
    expect(screenOf(out)).toEqual([
      '✓ weather 420 ms → {"tempC":18,"sky":"clear"}',
      '✓ world_clock 35 ms → {"time":"18:00"}',
      '✗ read_doc 12 ms: unknown doc id "nope"',
      '',
      'Paris: 18 °C, clear. Tokyo: 18:00.',
    ]);
  });
});
