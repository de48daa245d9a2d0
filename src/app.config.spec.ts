import { ChatOpenAI } from '@langchain/openai';
import { PlannerChatModel } from './demo/planner/planner-chat-model';
import { REMOTE_AGENTS_ENV } from './demo/remote-agents';
import { DEMO_ENV, DEMO_RUN_TIMEOUT_MS, DEMO_TOOL_TIMEOUT_MS, a2aOptionsFromEnv, executorOptionsFromEnv, portFromEnv, roleFromEnv } from './app.config';

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

  it('loads no OpenAI client and no remote-agent client unless they are configured', async () => {
    // A fresh module registry: the demo app's whole module graph, its executor settings and its remote agents.
    const loads = { openai: 0, a2aClient: 0 };
    jest.doMock('@langchain/openai', () => {
      loads.openai += 1;
      return jest.requireActual('@langchain/openai');
    });
    jest.doMock('@a2a-js/sdk/client', () => {
      loads.a2aClient += 1;
      return jest.requireActual('@a2a-js/sdk/client');
    });
    // The app reads these at boot; this test is about their absence.
    const unset = ['OPENAI_API_KEY', 'OPENAI_BASE_URL', DEMO_ENV.remoteAgents];
    const saved = unset.map((name) => [name, process.env[name]] as const);
    for (const name of unset) delete process.env[name];
    try {
      await jest.isolateModulesAsync(async () => {
        const app = await import('./app.module');
        const config = await import('./app.config');
        // Nest from this registry too: the app's decorators name its classes.
        const { Test } = await import('@nestjs/testing');
        const module = await Test.createTestingModule({ imports: [app.AppModule] }).compile();
        await module.close();
        expect(loads).toEqual({ openai: 0, a2aClient: 0 });
        config.executorOptionsFromEnv({ OPENAI_API_KEY: 'sk-test' });
        expect(loads.openai).toBe(1);
        expect((await import('./demo/remote-agents')).remoteAgentsFromEnv({ [DEMO_ENV.remoteAgents]: 'a=http://127.0.0.1:9' })).toEqual([{ name: 'a', url: 'http://127.0.0.1:9' }]);
        expect(loads.a2aClient).toBe(1);
      });
    } finally {
      jest.dontMock('@langchain/openai');
      jest.dontMock('@a2a-js/sdk/client');
      for (const [name, value] of saved) if (value !== undefined) process.env[name] = value;
    }
  });

  it('names the remote agents variable as the demo reads it', () => {
    expect(DEMO_ENV.remoteAgents).toBe(REMOTE_AGENTS_ENV);
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
