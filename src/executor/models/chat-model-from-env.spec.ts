import { ChatOpenAI } from '@langchain/openai';
import { chatModelFromEnv, DEFAULT_OPENAI_MODEL } from './chat-model-from-env';
import { OfflineToolModel } from './offline-tool-model';

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

  it('defaults the model name when only a key is set', () => {
    const model = chatModelFromEnv({ OPENAI_API_KEY: 'sk-test' }) as ChatOpenAI;
    expect(model.model).toBe(DEFAULT_OPENAI_MODEL);
    expect(model.apiKey).toBe('sk-test');
  });
});
