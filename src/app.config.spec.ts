import { ChatOpenAI } from '@langchain/openai';
import { PlannerChatModel } from './demo/planner/planner-chat-model';
import { DEMO_RUN_TIMEOUT_MS, DEMO_TOOL_TIMEOUT_MS, a2aOptionsFromEnv, executorOptionsFromEnv, portFromEnv, roleFromEnv } from './app.config';

describe('demo app settings from the environment', () => {
  it('bounds runs and tools by default, and takes other budgets from the environment', () => {
    expect(executorOptionsFromEnv({})).toMatchObject({ runTimeoutMs: DEMO_RUN_TIMEOUT_MS, toolTimeoutMs: DEMO_TOOL_TIMEOUT_MS });
    expect(executorOptionsFromEnv({ TOOLSTREAM_RUN_TIMEOUT_MS: '5000', TOOLSTREAM_TOOL_TIMEOUT_MS: ' 250 ' })).toMatchObject({ runTimeoutMs: 5000, toolTimeoutMs: 250 });
  });

  it('runs the demo tools on the planner offline, and on an OpenAI-compatible model when one is configured', () => {
    const offline = executorOptionsFromEnv({});
    expect(offline.tools?.map((t) => t.name)).toEqual(['weather', 'world_clock', 'calculator', 'search_docs', 'read_doc', 'slow_task']);
    expect(offline.model).toBeInstanceOf(PlannerChatModel);
    expect(executorOptionsFromEnv({ OPENAI_API_KEY: 'sk-test' }).model).toBeInstanceOf(ChatOpenAI);
  });

  it('leaves A2A options unset (module defaults) unless the environment names them', () => {
    expect(a2aOptionsFromEnv({})).toEqual({ publicUrl: undefined, drainTimeoutMs: undefined, maxBodyBytes: undefined, redis: undefined });
    expect(a2aOptionsFromEnv({ TOOLSTREAM_DRAIN_TIMEOUT_MS: '1500', TOOLSTREAM_MAX_BODY_BYTES: '2048', A2A_PUBLIC_URL: 'https://a.example' })).toEqual({
      publicUrl: 'https://a.example',
      drainTimeoutMs: 1500,
      maxBodyBytes: 2048,
      redis: undefined,
    });
      expect(a2aOptionsFromEnv({ TOOLSTREAM_MAX_LIVE_TASKS: '20', TOOLSTREAM_MAX_LIVE_TASKS_PER_CALLER: '5' })).toMatchObject({ maxLiveTasks: 20, maxLiveTasksPerCaller: 5 });
    expect(() => a2aOptionsFromEnv({ TOOLSTREAM_MAX_LIVE_TASKS: '0' })).toThrow('TOOLSTREAM_MAX_LIVE_TASKS must be a positive whole number');
  });

  it('shares tasks through Redis when TOOLSTREAM_REDIS_URL is set; a bad URL stops the boot naming the variable, never the password', () => {
    expect(a2aOptionsFromEnv({ TOOLSTREAM_REDIS_URL: 'rediss://:s3cret@redis.example:6380/2' }).redis).toEqual({ connection: 'rediss://:s3cret@redis.example:6380/2' });
    expect(a2aOptionsFromEnv({ TOOLSTREAM_REDIS_URL: 'redis://127.0.0.1:6390' }).redis).toEqual({ connection: 'redis://127.0.0.1:6390' });
    expect(() => a2aOptionsFromEnv({ TOOLSTREAM_REDIS_URL: 'http://:s3cret@redis.example:6390' })).toThrow(/^TOOLSTREAM_REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/);
    expect(() => a2aOptionsFromEnv({ TOOLSTREAM_REDIS_URL: 'http://:s3cret@redis.example:6390' })).not.toThrow(/s3cret/);
    expect(() => a2aOptionsFromEnv({ TOOLSTREAM_REDIS_URL: '127.0.0.1:6390' })).toThrow('TOOLSTREAM_REDIS_URL');
  });

  it('reads PORT, refusing anything but a port number, naming it', () => {
    expect(portFromEnv({})).toBe(3000);
    expect(portFromEnv({ PORT: ' 8080 ' })).toBe(8080);
    expect(portFromEnv({ PORT: '0' })).toBe(0);
    for (const bad of ['abc', '80.5', '-1', '65536', '3e3']) {
      expect(() => portFromEnv({ PORT: bad })).toThrow(`PORT must be a whole number from 0 to 65535, got ${JSON.stringify(bad)}`);
    }
  });

  it('reads TOOLSTREAM_ROLE (all by default; api and worker need Redis), refusing anything else, naming it', () => {
    const redis = { TOOLSTREAM_REDIS_URL: 'redis://127.0.0.1:6390' };
    expect(roleFromEnv({})).toBe('all');
    expect(roleFromEnv({ TOOLSTREAM_ROLE: ' ' })).toBe('all');
    expect(roleFromEnv({ ...redis, TOOLSTREAM_ROLE: 'api' })).toBe('api');
    expect(roleFromEnv({ ...redis, TOOLSTREAM_ROLE: ' worker ' })).toBe('worker');
    for (const bad of ['Worker', 'front', 'all,api']) {
      expect(() => roleFromEnv({ ...redis, TOOLSTREAM_ROLE: bad })).toThrow(`TOOLSTREAM_ROLE must be one of all, api, worker, got ${JSON.stringify(bad)}`);
    }
    expect(() => roleFromEnv({ TOOLSTREAM_ROLE: 'worker' })).toThrow('TOOLSTREAM_ROLE=worker needs TOOLSTREAM_REDIS_URL');
  });

  it('fails at boot on a bad value, naming the variable', () => {
    expect(() => executorOptionsFromEnv({ TOOLSTREAM_TOOL_TIMEOUT_MS: '30s' })).toThrow('TOOLSTREAM_TOOL_TIMEOUT_MS must be a positive whole number, got "30s"');
    expect(() => a2aOptionsFromEnv({ TOOLSTREAM_DRAIN_TIMEOUT_MS: '-1' })).toThrow('TOOLSTREAM_DRAIN_TIMEOUT_MS');
  });
});
