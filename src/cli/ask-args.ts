/** Command line of `npm run ask -- "question" [--url http://host:port]`. */

export const DEFAULT_AGENT_URL = 'http://localhost:3000';

export const ASK_USAGE = `usage: npm run ask -- "question" [--url http://host:port]

Asks an A2A agent that speaks tool-call-v1 and draws its tool timeline live.
  --url URL   the agent's base URL, where /.well-known/agent-card.json is served
              (default: $TOOLSTREAM_URL or ${DEFAULT_AGENT_URL})
  --help      this text

Exit status: 0 answered; 1 the task did not complete (failed, canceled, rejected, needs
input); 2 bad usage; 3 the server or the connection failed; 130 interrupted.`;

export type AskArgs = { kind: 'ask'; question: string; url: string } | { kind: 'help' } | { kind: 'error'; message: string };

export function parseAskArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>> = {}): AskArgs {
  const words: string[] = [];
  let url = env.TOOLSTREAM_URL || DEFAULT_AGENT_URL;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') return { kind: 'help' };
    if (arg === '--url' || arg === '-u') {
      const value = argv[++i];
      if (value === undefined) return { kind: 'error', message: `${arg} needs a URL` };
      url = value;
    } else if (arg.startsWith('--url=')) {
      url = arg.slice('--url='.length);
    } else if (arg.startsWith('--')) {
      return { kind: 'error', message: `unknown option ${arg}` };
    } else {
      words.push(arg);
    }
  }
  const question = words.join(' ').trim();
  if (!question) return { kind: 'error', message: 'no question given' };
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
  } catch {
    return { kind: 'error', message: `--url must be an http(s) URL, got ${JSON.stringify(url)}` };
  }
  return { kind: 'ask', question, url };
}
