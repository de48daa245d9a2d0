import { FakeListChatModel } from '@langchain/core/utils/testing';
import { ChatOpenAI } from '@langchain/openai';
import { chatModelFromEnv, DEFAULT_OPENAI_MODEL } from './chat-model-from-env';
import { OfflineToolModel } from './offline-tool-model';
import { describeChatModel } from './openai-compatible';

describe('chatModelFromEnv', () => {
  it('is the offline tool model without OpenAI settings', () => {
    expect(chatModelFromEnv({})).toBeInstanceOf(OfflineToolModel);
    expect(chatModelFromEnv({ OPENAI_API_KEY: '  ', MODEL: 'x' })).toBeInstanceOf(OfflineToolModel);
  });

  it('is the given offline model without OpenAI settings, and ChatOpenAI with them', () => {
    const offline = new OfflineToolModel({ latencyMs: 1 });
    expect(chatModelFromEnv({}, () => offline)).toBe(offline);
    expect(chatModelFromEnv({ OPENAI_API_KEY: 'sk-test' }, () => offline)).toBeInstanceOf(ChatOpenAI);
  });

  it('is ChatOpenAI on the configured endpoint and model', () => {
    const model = chatModelFromEnv({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', MODEL: 'local-llama' }) as ChatOpenAI;
    expect(model).toBeInstanceOf(ChatOpenAI);
    expect(model.model).toBe('local-llama');
    expect(model.clientConfig.baseURL).toBe('http://127.0.0.1:9/v1');
  });

  it.each(['not-a-url', 'ftp://host/v1', '127.0.0.1:8080/v1'])('refuses OPENAI_BASE_URL=%s at once, naming the variable', (value) => {
    expect(() => chatModelFromEnv({ OPENAI_BASE_URL: value })).toThrow(`OPENAI_BASE_URL must be an http(s) URL such as http://127.0.0.1:11434/v1, got "${value}"`);
  });

  it('is described for the boot log by kind, name and endpoint, never by key', () => {
    expect(describeChatModel(chatModelFromEnv({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1/', OPENAI_API_KEY: 'sk-secret', MODEL: 'llama3' }))).toBe(
      'OpenAI-compatible model "llama3" at http://127.0.0.1:9/v1',
    );
    expect(describeChatModel(chatModelFromEnv({ OPENAI_API_KEY: 'sk-secret' }))).toBe(`OpenAI-compatible model "${DEFAULT_OPENAI_MODEL}" at https://api.openai.com/v1`);
    expect(describeChatModel(chatModelFromEnv({}))).toBe('offline model OfflineToolModel (no network, no key)');
  });

  it('loads the OpenAI client only when an OpenAI-compatible model is made', async () => {
    // A fresh module registry, so the package counts as loaded only once this test's code asks for it.
    let loads = 0;
    jest.doMock('@langchain/openai', () => {
      loads += 1;
      return jest.requireActual('@langchain/openai');
    });
    try {
      await jest.isolateModulesAsync(async () => {
        const fromEnv = await import('./chat-model-from-env');
        const described = await import('./openai-compatible');
        expect(described.describeChatModel(fromEnv.chatModelFromEnv({}))).toBe('offline model OfflineToolModel (no network, no key)');
        expect(() => fromEnv.chatModelFromEnv({ OPENAI_BASE_URL: 'not-a-url' })).toThrow('OPENAI_BASE_URL');
        expect(loads).toBe(0);
        const model = fromEnv.chatModelFromEnv({ OPENAI_API_KEY: 'sk-test' });
        expect(loads).toBe(1);
        expect(described.describeChatModel(model)).toBe(`OpenAI-compatible model "${DEFAULT_OPENAI_MODEL}" at https://api.openai.com/v1`);
      });
    } finally {
      jest.dontMock('@langchain/openai');
    }
  });

  it('describes a ChatOpenAI made by the host by its endpoint, and any other model by its name', () => {
    expect(describeChatModel(new ChatOpenAI({ model: 'm', apiKey: 'sk-secret', configuration: { baseURL: 'http://10.0.0.2:8000/v1' } }))).toBe(
      'OpenAI-compatible model "m" at http://10.0.0.2:8000/v1',
    );
    expect(describeChatModel(new ChatOpenAI({ model: 'm', apiKey: 'sk-secret' }))).toBe('OpenAI-compatible model "m" at https://api.openai.com/v1');
    expect(describeChatModel(new FakeListChatModel({ responses: ['hi'] }))).toBe('model FakeListChatModel');
  });

  it('defaults the model name when only a key is set', () => {
    const model = chatModelFromEnv({ OPENAI_API_KEY: 'sk-test' }) as ChatOpenAI;
    expect(model.model).toBe(DEFAULT_OPENAI_MODEL);
    expect(model.apiKey).toBe('sk-test');
  });
});
