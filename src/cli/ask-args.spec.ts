import { DEFAULT_AGENT_URL, parseAskArgs } from './ask-args';

describe('ask command line', () => {
  it('takes the question, joined from its words, and --url in either spelling', () => {
    expect(parseAskArgs(['weather in Paris'])).toEqual({ kind: 'ask', question: 'weather in Paris', url: DEFAULT_AGENT_URL });
    expect(parseAskArgs(['what', 'is', '-5', '+', '3', '--url', 'http://h:1'])).toEqual({
      kind: 'ask',
      question: 'what is -5 + 3',
      url: 'http://h:1',
    });
    expect(parseAskArgs(['--url=https://agent.example', 'hi'])).toMatchObject({ url: 'https://agent.example' });
    expect(parseAskArgs(['hi'], { TOOLSTREAM_URL: 'http://env:9' })).toMatchObject({ url: 'http://env:9' });
  });

  it('says what is wrong', () => {
    expect(parseAskArgs([])).toEqual({ kind: 'error', message: 'no question given' });
    expect(parseAskArgs(['  '])).toEqual({ kind: 'error', message: 'no question given' });
    expect(parseAskArgs(['q', '--url'])).toEqual({ kind: 'error', message: '--url needs a URL' });
    expect(parseAskArgs(['q', '--verbose'])).toEqual({ kind: 'error', message: 'unknown option --verbose' });
    expect(parseAskArgs(['q', '--url', 'ftp://x'])).toEqual({ kind: 'error', message: '--url must be an http(s) URL, got "ftp://x"' });
    expect(parseAskArgs(['q', '-u', 'nope'])).toEqual({ kind: 'error', message: '--url must be an http(s) URL, got "nope"' });
    expect(parseAskArgs(['q', '--help'])).toEqual({ kind: 'help' });
  });
});
