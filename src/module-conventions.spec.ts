/**
 * One convention for every toolstream module with options: `forRoot` / `forRootAsync`
 * (ConfigurableModuleBuilder), a bare import refused at boot saying so, and every option checked
 * at boot, the bad one named. HealthModule takes no options and is imported as it is.
 */
import type { DynamicModule, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { A2aModule, ExecutorModule, ExtensionsModule, HealthModule, RuntimeModule, WebModule } from './index';
import { AGENT_EXTENSIONS } from './extensions/extensions.constants';
import { AgentBus } from './runtime/agent-bus';

const boot = (...imports: Array<Type | DynamicModule>) => Test.createTestingModule({ imports }).compile();
/** The bus alone, as a front-only process has it. */
const runtime = RuntimeModule.forRoot({ serveRequests: false });

describe('module conventions', () => {
  it.each([
    ['ExtensionsModule', ExtensionsModule],
    ['RuntimeModule', RuntimeModule],
    ['ExecutorModule', ExecutorModule],
    ['A2aModule', A2aModule],
    ['WebModule', WebModule],
  ])('%s refuses a bare import, naming forRoot and forRootAsync', async (name, module) => {
    const imports = name === 'A2aModule' ? [runtime, module] : [module];
    await expect(boot(...imports)).rejects.toThrow(`${name} must be imported as ${name}.forRoot({...}) or ${name}.forRootAsync({...}), not as the bare class`);
  });

  it('HealthModule has no options and is imported as it is', async () => {
    await expect(boot(HealthModule)).resolves.toBeDefined();
  });

  it('ExtensionsModule: forRoot() is tool-call-v1 alone; forRootAsync adds entries; a malformed one is named', async () => {
    const plain = await boot(ExtensionsModule.forRoot());
    expect(plain.get<Array<{ uri: string }>>(AGENT_EXTENSIONS).map((e) => e.uri)).toEqual(['https://proto-labs.ai/a2a/ext/tool-call-v1']);
    const extra = { uri: 'https://example.com/ext/x', description: 'x', required: false, params: undefined };
    const async = await boot(ExtensionsModule.forRootAsync({ useFactory: async () => ({ additional: [extra] }) }));
    expect(async.get<Array<{ uri: string }>>(AGENT_EXTENSIONS).map((e) => e.uri)).toEqual(['https://proto-labs.ai/a2a/ext/tool-call-v1', extra.uri]);
    await expect(boot(ExtensionsModule.forRoot({ additional: [{ ...extra, uri: 'not a uri' }] }))).rejects.toThrow(
      'ExtensionsModule option additional[0].uri must be a URI, got "not a uri"',
    );
    await expect(boot(ExtensionsModule.forRoot({ toolCallDescription: '' }))).rejects.toThrow('ExtensionsModule option toolCallDescription must be a non-empty string');
  });

  it('RuntimeModule: whole numbers where whole numbers are meant, booleans where booleans are', async () => {
    await expect(boot(RuntimeModule.forRoot({ serveRequests: false, cancelGraceMs: 1.5 }))).rejects.toThrow(
      'RuntimeModule option cancelGraceMs must be zero or a positive whole number, got 1.5',
    );
    await expect(boot(RuntimeModule.forRoot({ serveRequests: 'no' as unknown as boolean }))).rejects.toThrow('RuntimeModule option serveRequests must be true or false, got "no"');
    await expect(boot(RuntimeModule.forRoot({ serveRequests: false, narration: 'quiet' as never }))).rejects.toThrow('RuntimeModule option narration must be an object');
    const fine = await boot(RuntimeModule.forRootAsync({ useFactory: () => ({ serveRequests: false, cancelGraceMs: 0 }) }));
    expect(fine.get(AgentBus)).toBeDefined();
  });

  it('WebModule: publicDir and path are checked, naming the option', async () => {
    await expect(boot(WebModule.forRoot({ publicDir: '' }))).rejects.toThrow('WebModule option publicDir must be a non-empty string, got ""');
    expect(() => WebModule.forRoot({ path: '../up' })).toThrow('WebModule option path must be a route prefix like "agent" or "api/agent", got "../up"');
    expect(() => A2aModule.forRoot({ path: 'a b' })).toThrow('A2aModule option path must be a route prefix');
  });
});
