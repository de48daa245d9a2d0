/**
 * toolstream inside a host application that has its own event emitter (wildcards on) and its
 * own `/tasks` route: both keep working, and the A2A server lives under the `path` prefix.
 */
import { Body, Controller, Get, Injectable, Module, Param, Post, type INestApplication } from '@nestjs/common';
import { EventEmitter2, EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { A2aModule, ExecutorModule, RuntimeModule, WebModule } from '../src';
import { WEB_MODULE_OPTIONS } from '../src/web';
import { buildWebBundle } from '../src/web/web-bundle';
import { ClientFactory } from '@a2a-js/sdk/client';
import { describeEvent, drain, userMessage } from './support/clients';

@Controller('tasks')
class HostTasksController {
  @Get()
  list(): { host: string; tasks: string[] } {
    return { host: 'mine', tasks: ['invoice #1'] };
  }

  @Post()
  add(@Body() body: unknown): { added: unknown } {
    return { added: body };
  }

  @Get(':id')
  one(@Param('id') id: string): never {
    throw new Error(`host failure for ${id}`);
  }
}

@Controller('orders')
class HostOrdersController {
  @Post('a2a')
  create(@Body() body: unknown): { order: unknown } {
    return { order: body };
  }
}

@Injectable()
class OrderListener {
  readonly seen: string[] = [];

  @OnEvent('order.*')
  onOrder(payload: string): void {
    this.seen.push(payload);
  }
}

const lookup = tool(async ({ key }) => ({ key, value: key.length }), {
  name: 'lookup',
  description: 'Looks a key up',
  schema: z.object({ key: z.string() }),
});

@Module({
  imports: [
    EventEmitterModule.forRoot({ wildcard: true }),
    RuntimeModule.forRoot({ executor: ExecutorModule.forRoot({ tools: [lookup] }) }),
    A2aModule.forRoot({
      path: 'agent',
      card: { name: 'host agent', description: 'Looks keys up.', skills: [{ id: 'lookup', name: 'Lookup', description: 'Looks a key up', examples: ['lookup key=abc'] }] },
      auth: false,
    }),
    // The page beside the A2A routes, under the same prefix.
    WebModule.forRoot({ path: 'agent' }),
  ],
  controllers: [HostTasksController, HostOrdersController],
  providers: [OrderListener],
})
class HostModule {}

describe('toolstream in a host module (e2e)', () => {
  let app: INestApplication;
  let base: string;
  let publicDir: string;
  const saved = { ...process.env };

  beforeAll(async () => {
    delete process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_BASE_URL;
    publicDir = await mkdtemp(join(tmpdir(), 'toolstream-host-web-'));
    await buildWebBundle({ outDir: publicDir });
    const moduleRef = await Test.createTestingModule({ imports: [HostModule] }).overrideProvider(WEB_MODULE_OPTIONS).useValue({ publicDir }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    process.env = { ...saved };
    await app?.close();
    if (publicDir) await rm(publicDir, { recursive: true, force: true });
  });

  it("keeps the host's own wildcard emitter", async () => {
    const emitter = app.get(EventEmitter2);
    emitter.emit('order.created', 'order 7');
    expect(app.get(OrderListener).seen).toEqual(['order 7']);
  });

  it("keeps the host's own /tasks route", async () => {
    const response = await fetch(`${base}/tasks`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ host: 'mine', tasks: ['invoice #1'] });
  });

  it('serves A2A under the path prefix, card URLs included, and runs the host tool', async () => {
    const card = (await (await fetch(`${base}/agent/.well-known/agent-card.json`)).json()) as { name: string; supportedInterfaces: Array<{ url: string }> };
    expect(card.name).toBe('host agent');
    expect(card.supportedInterfaces.map((i) => i.url)).toEqual(expect.arrayContaining([`${base}/agent/a2a`]));
    expect((await fetch(`${base}/.well-known/agent-card.json`)).status).toBe(404);

    const client = await new ClientFactory().createFromUrl(base, '/agent/.well-known/agent-card.json');
    const events = await drain(client.sendMessageStream({ message: userMessage('lookup key=abc'), configuration: undefined, metadata: undefined, tenant: '' }));
    const lines = events.map(describeEvent);
    expect(lines).toEqual(expect.arrayContaining(['started lookup', 'completed lookup']));
    expect(lines[lines.length - 1]).toBe('COMPLETED');

    const listed = await fetch(`${base}/agent/tasks`, { headers: { 'a2a-version': '1.0' } });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { tasks: unknown[] }).tasks.length).toBe(1);
  });

  it("leaves the host's own errors to Nest: bad JSON, a throwing route, an undecodable path keep Nest's shape", async () => {
    const json = { 'content-type': 'application/json' };
    for (const path of ['/tasks', '/orders/a2a', '/a2a', '/agent/orders']) {
      const bad = await fetch(`${base}${path}`, { method: 'POST', body: '{oops', headers: json });
      expect([path, bad.status]).toEqual([path, 400]);
      const body = (await bad.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ statusCode: bad.status });
      expect(body).not.toHaveProperty('jsonrpc');
    }
    expect(await (await fetch(`${base}/tasks`, { method: 'POST', body: '{"n":1}', headers: json })).json()).toEqual({ added: { n: 1 } });
    const thrown = await fetch(`${base}/tasks/7`);
    expect(thrown.status).toBe(500);
    expect(await thrown.json()).toEqual({ statusCode: 500, message: 'Internal server error' });
    const undecodable = await fetch(`${base}/tasks/%E0%A4%A`);
    expect(undecodable.status).toBe(400);
    expect(await undecodable.json()).toMatchObject({ statusCode: 400 });
  });

  it("answers the same mistakes on toolstream's routes in the A2A binding's shape", async () => {
    for (const type of ['application/json', 'application/a2a+json']) {
      const rpc = await fetch(`${base}/agent/a2a`, { method: 'POST', body: '{oops', headers: { 'content-type': type } });
      expect(rpc.status).toBe(200);
      expect(await rpc.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
      const rest = await fetch(`${base}/agent/message:send`, { method: 'POST', body: '{oops', headers: { 'content-type': type, 'a2a-version': '1.0' } });
      expect(rest.status).toBe(400);
      expect(rest.headers.get('content-type')).toContain('application/a2a+json');
      expect(await rest.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
    }
    const undecodable = await fetch(`${base}/agent/tasks/%E0%A4%A`, { headers: { 'a2a-version': '1.0' } });
    expect(undecodable.status).toBe(400);
    expect(await undecodable.json()).toMatchObject({ error: { status: 'INVALID_ARGUMENT', message: expect.stringContaining('is not valid percent-encoding') } });
  });

  it('serves the page under the same prefix: relative asset URLs, the card beside it with the host agent and its examples', async () => {
    const bare = await fetch(`${base}/agent?q=1`, { redirect: 'manual' });
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe('/agent/?q=1');
    const page = await fetch(`${base}/agent/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    // Every URL on the page is relative, so it resolves under /agent/.
    expect(html).not.toMatch(/(src|href)="\//);
    for (const asset of [...html.matchAll(/(?:src|href)="(assets\/[^"]+)"/g)].map((m) => m[1])) {
      const res = await fetch(new URL(asset, `${base}/agent/`));
      expect([asset, res.status]).toEqual([asset, 200]);
    }
    expect((await fetch(`${base}/agent/assets/app.js`)).headers.get('content-type')).toContain('javascript');
    // Where the page's script looks for the card: beside the page.
    const card = (await (await fetch(new URL('.well-known/agent-card.json', `${base}/agent/`))).json()) as {
      name: string;
      skills: Array<{ examples: string[] }>;
      supportedInterfaces: Array<{ url: string }>;
    };
    expect(card.name).toBe('host agent');
    expect(card.skills.flatMap((s) => s.examples)).toEqual(['lookup key=abc']);
    expect(card.supportedInterfaces[0].url).toBe(`${base}/agent/a2a`);
    expect((await fetch(`${base}/assets/app.js`)).status).toBe(404);
  });
});
