import { Global, Injectable, Module } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import Redis from 'ioredis';
import { TOOL_CALL_V1_EXTENSION_URI } from '../extensions';
import { ExtensionsModule } from '../extensions/extensions.module';
import { AgentBus, EventEmitterAgentBus } from '../runtime';
import { A2A_CONFIG } from './a2a.constants';
import { A2aModule } from './a2a.module';
import { resolveA2aConfig, type A2aConfig, type A2aModuleOptions } from './a2a.module-definition';
import { AgentCardService } from './agent-card.service';

@Global()
@Module({
  providers: [{ provide: AgentBus, useFactory: () => new EventEmitterAgentBus(new EventEmitter2()) }],
  exports: [AgentBus],
})
class BusModule {}

@Injectable()
class SettingsService {
  a2aOptions(): A2aModuleOptions {
    return { keepAliveMs: 5_000, card: { name: 'From settings' } };
  }
}

@Module({ providers: [SettingsService], exports: [SettingsService] })
class SettingsModule {}

describe('A2aModule', () => {
  it('forRoot: options with defaults, the card from them, the extensions module of the caller', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        BusModule,
        A2aModule.forRoot({
          cancelOnDisconnect: false,
          extensions: ExtensionsModule.forRoot({ additional: [{ uri: 'https://example.com/ext/x', description: 'x', required: false, params: undefined }] }),
        }),
      ],
    }).compile();
    expect(moduleRef.get<A2aConfig>(A2A_CONFIG)).toMatchObject({ cancelOnDisconnect: false, keepAliveMs: 15_000, toolFramesWhenNoExtensionHeader: true });
    const card = moduleRef.get(AgentCardService).card('http://h');
    expect(card.capabilities?.extensions.map((e) => e.uri)).toEqual([TOOL_CALL_V1_EXTENSION_URI, 'https://example.com/ext/x']);
  });

  it('forRootAsync: options from an injected factory', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        BusModule,
        A2aModule.forRootAsync({ imports: [SettingsModule], inject: [SettingsService], useFactory: (s: SettingsService) => s.a2aOptions() }),
      ],
    }).compile();
    expect(moduleRef.get<A2aConfig>(A2A_CONFIG).keepAliveMs).toBe(5_000);
    expect(moduleRef.get(AgentCardService).card('http://h').name).toBe('From settings');
  });

  it('fails at boot, naming the option, on a nonsensical value', async () => {
    await expect(Test.createTestingModule({ imports: [BusModule, A2aModule.forRoot({ taskTtlMs: -1 })] }).compile()).rejects.toThrow(
      'A2aModule option taskTtlMs must be a positive whole number',
    );
  });
});

describe('A2aModule path option', () => {
  it.each(['agent', '/api/agent/', 'v1.2/a-b_c'])('takes %j as a route prefix', (path) => {
    expect(() => A2aModule.forRoot({ path })).not.toThrow();
  });

  it.each(['', 'a b', 'a//b', '../x?'])('refuses %j at boot, naming the option', (path) => {
    expect(() => A2aModule.forRoot({ path })).toThrow(`A2aModule option path must be a route prefix like "agent" or "api/agent", got ${JSON.stringify(path)}`);
  });
});

describe('A2aModule numeric options', () => {
  it.each([
    [{ maxEventsPerTask: 1.5 }, 'A2aModule option maxEventsPerTask must be a positive whole number, got 1.5'],
    [{ keepAliveMs: Number.NaN }, 'A2aModule option keepAliveMs must be a positive whole number, got NaN'],
    [{ disconnectGraceMs: -1 }, 'A2aModule option disconnectGraceMs must be zero or a positive whole number, got -1'],
    [{ disconnectGraceMs: 0.5 }, 'A2aModule option disconnectGraceMs must be zero or a positive whole number, got 0.5'],
  ])('refuses %j at boot, naming the option', async (options, message) => {
    await expect(Test.createTestingModule({ imports: [BusModule, A2aModule.forRoot(options)] }).compile()).rejects.toThrow(message);
  });

  it('role: all by default; worker mounts no A2A route; api and worker need Redis; anything else fails naming the option', async () => {
    expect(() => A2aModule.forRoot({ role: 'boss' as never })).toThrow('A2aModule role must be one of all, api, worker, got "boss"');
    expect(A2aModule.forRoot({}).controllers?.length).toBeGreaterThan(0);
    expect(A2aModule.forRoot({ role: 'api' }).controllers?.length).toBeGreaterThan(0);
    expect(A2aModule.forRoot({ role: 'worker' }).controllers).toEqual([]);
    for (const option of ['leaseMs', 'maxQueuedRuns', 'maxConcurrentRuns', 'queueTimeoutMs'] as const) {
      expect(() => resolveA2aConfig({ redis: { connection: 'redis://127.0.0.1:6390', [option]: 0 } })).toThrow(
        `A2aModule option redis.${option} must be a positive whole number, got 0`,
      );
    }
    await expect(Test.createTestingModule({ imports: [BusModule, A2aModule.forRoot({ role: 'worker' })] }).compile()).rejects.toThrow(
      'A2aModule role worker needs the redis option',
    );
  });

  it('refuses an ioredis client with a keyPrefix of its own, pointing to redis.keyPrefix', () => {
    const prefixed = new Redis({ lazyConnect: true, keyPrefix: 'app:' });
    const plain = new Redis({ lazyConnect: true });
    try {
      expect(() => resolveA2aConfig({ redis: { connection: prefixed } })).toThrow(
        'A2aModule option redis.connection: the ioredis client has a keyPrefix of its own ("app:"); give a client without one, and the prefix as redis.keyPrefix',
      );
      expect(resolveA2aConfig({ redis: { connection: plain, keyPrefix: 'app:' } }).redis).toMatchObject({ connection: plain, keyPrefix: 'app:' });
    } finally {
      prefixed.disconnect();
      plain.disconnect();
    }
  });
});
