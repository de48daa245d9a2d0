import { HumanMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { PlannerChatModel } from './planner/planner-chat-model';
import { remoteAgentCredentialEnv, remoteAgentsFromEnv } from './remote-agents';

describe('TOOLSTREAM_REMOTE_AGENTS', () => {
  it('reads name=url pairs with each agent\'s own credentials', () => {
    const env = {
      TOOLSTREAM_REMOTE_AGENTS: ' researcher=http://127.0.0.1:3001 , data-desk=https://agents.example.com/desk ',
      TOOLSTREAM_REMOTE_AGENT_RESEARCHER_API_KEY: 'key-0123456789abcdef',
      TOOLSTREAM_REMOTE_AGENT_DATA_DESK_BEARER_TOKEN: 'token-0123456789abcdef',
    };
    expect(remoteAgentsFromEnv(env)).toEqual([
      { name: 'researcher', url: 'http://127.0.0.1:3001', apiKey: 'key-0123456789abcdef' },
      { name: 'data-desk', url: 'https://agents.example.com/desk', bearerToken: 'token-0123456789abcdef' },
    ]);
    expect(remoteAgentCredentialEnv('data-desk', 'API_KEY')).toBe('TOOLSTREAM_REMOTE_AGENT_DATA_DESK_API_KEY');
    expect(remoteAgentsFromEnv({})).toEqual([]);
  });

  it.each([
    ['researcher', 'TOOLSTREAM_REMOTE_AGENTS must be name=url pairs separated by commas; "researcher" is not name=url'],
    ['=http://x', 'TOOLSTREAM_REMOTE_AGENTS must be name=url pairs separated by commas; "=http://x" is not name=url'],
    ['two words=http://x', 'TOOLSTREAM_REMOTE_AGENTS: the name "two words" must start with a letter'],
    ['a=http://x,A=http://y', 'TOOLSTREAM_REMOTE_AGENTS: the name A is used twice (or by a built-in tool)'],
    ['weather=http://x', 'TOOLSTREAM_REMOTE_AGENTS: the name weather is used twice (or by a built-in tool)'],
    ['a=not a url', 'TOOLSTREAM_REMOTE_AGENTS: the URL of a is not a URL: "not a url"'],
    ['a=file:///etc/passwd', 'TOOLSTREAM_REMOTE_AGENTS: the URL of a must be http or https'],
  ])('refuses %j at boot, naming the variable', (value, message) => {
    expect(() => remoteAgentsFromEnv({ TOOLSTREAM_REMOTE_AGENTS: value }, ['weather'])).toThrow(message);
  });
});

describe('the offline planner delegates "ask <name>: <question>"', () => {
  const researcher = tool(async () => 'x', { name: 'researcher', description: 'asks', schema: z.object({ question: z.string() }) });
  const weather = tool(async () => 'x', { name: 'weather', description: 'weather', schema: z.object({ city: z.string() }) });

  it.each([
    ['ask researcher: weather in Paris and the time in Tokyo', 'weather in Paris and the time in Tokyo'],
    ['Ask researcher what time it is in Tokyo?', 'what time it is in Tokyo?'],
  ])('%j → one call with the whole question', async (text, question) => {
    const model = new PlannerChatModel({}).bindTools([researcher, weather]);
    const reply = await model.invoke([new HumanMessage(text)]);
    expect(reply.tool_calls?.map((c) => [c.name, c.args])).toEqual([['researcher', { question }]]);
  });

  it('does not delegate to a tool that takes no question, nor to an unknown agent', async () => {
    const model = new PlannerChatModel({}).bindTools([researcher, weather]);
    const reply = await model.invoke([new HumanMessage('ask weather: in Paris')]);
    expect(reply.tool_calls?.map((c) => c.name)).not.toContain('researcher');
    const unknown = await model.invoke([new HumanMessage('ask nobody: weather in Paris')]);
    expect(unknown.tool_calls?.map((c) => [c.name, c.args])).toEqual([['weather', { city: 'Paris' }]]);
  });
});
