import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { ScriptedChatModel } from './scripted-chat-model';

describe('ScriptedChatModel', () => {
  const script = new ScriptedChatModel({
    turns: [{ toolCalls: [{ name: 'weather', args: { city: 'Paris' } }, { name: 'weather', id: 'mine' }] }, { text: 'It is sunny.' }],
  });

  it('plays turn k of the current request, counted from the last user message', async () => {
    const first = await script.invoke([new HumanMessage('old'), new AIMessage('old answer'), new HumanMessage('weather?')]);
    expect(first.tool_calls).toEqual([
      { id: 'call_3_0', name: 'weather', args: { city: 'Paris' }, type: 'tool_call' },
      { id: 'mine', name: 'weather', args: {}, type: 'tool_call' },
    ]);
    const second = await script.invoke([
      new HumanMessage('weather?'),
      first,
      new ToolMessage({ tool_call_id: 'call_3_0', content: 'sunny' }),
      new ToolMessage({ tool_call_id: 'mine', content: 'sunny' }),
    ]);
    expect(second.text).toBe('It is sunny.');
  });

  it('omits ids when asked to, keeping explicit ones (even empty)', async () => {
    const model = new ScriptedChatModel({ omitIds: true, turns: [{ toolCalls: [{ name: 'a' }, { name: 'b', id: '' }] }] });
    const reply = await model.invoke([new HumanMessage('go')]);
    expect(reply.tool_calls?.map((c) => c.id)).toEqual([undefined, '']);
  });

  it('fails with the scripted error, and past the end of the script', async () => {
    await expect(new ScriptedChatModel({ turns: [{ error: 'model overloaded' }] }).invoke([new HumanMessage('x')])).rejects.toThrow('model overloaded');
    await expect(new ScriptedChatModel({ turns: [] }).invoke([new HumanMessage('x')])).rejects.toThrow('the script has no turn 1 (it has 0)');
  });

  it('waits its delay unless aborted', async () => {
    const model = new ScriptedChatModel({ turns: [{ text: 'late', delayMs: 10_000 }] });
    const controller = new AbortController();
    const pending = model.invoke([new HumanMessage('x')], { signal: controller.signal });
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow();
  });
});
