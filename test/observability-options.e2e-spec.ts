/**
 * The observability modules as a host configures them, in-process on real ports: /metrics behind
 * the A2A credentials, on another path, on a port of its own, or off; readiness that follows the
 * drain and Redis reachability.
 */
import { Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { A2aDrainService, A2aModule, type A2aModuleOptions } from '../src/a2a';
import { HealthModule } from '../src/health';
import { MetricsModule, MetricsServer, type MetricsModuleOptions } from '../src/metrics';
import { ScriptedBusModule } from './support/a2a-test-app';
import { startRedis, type TestRedis } from './support/redis-server';

async function boot(a2a: A2aModuleOptions, metrics: MetricsModuleOptions = {}): Promise<{ app: INestApplication; base: string }> {
  @Module({ imports: [ScriptedBusModule, A2aModule.forRoot(a2a), HealthModule, MetricsModule.forRoot({ defaultMetrics: false, ...metrics })] })
  class HostModule {}
  const moduleRef = await Test.createTestingModule({ imports: [HostModule] }).compile();
  const app = moduleRef.createNestApplication({ logger: ['error'], forceCloseConnections: true });
  await app.listen(0, '127.0.0.1');
  return { app, base: await app.getUrl() };
}

describe('observability options (e2e)', () => {
  const apps: INestApplication[] = [];
  const start = async (...args: Parameters<typeof boot>) => {
    const booted = await boot(...args);
    apps.push(booted.app);
    return booted;
  };
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  it('/metrics asks for the A2A credentials when A2A auth is on (401 with the challenge), and serves with them', async () => {
    const { base } = await start({ auth: { apiKeys: ['key-1-0123456789abcdef'], bearerTokens: ['token-1-0123456789abcdef'] } });
    const anonymous = await fetch(`${base}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/Bearer/);
    expect(await anonymous.text()).toMatch(/^Authentication required/);
    expect((await fetch(`${base}/metrics`, { headers: { 'x-api-key': 'wrong' } })).status).toBe(401);
    const withKey = await fetch(`${base}/metrics`, { headers: { 'x-api-key': 'key-1-0123456789abcdef' } });
    expect(withKey.status).toBe(200);
    expect(await withKey.text()).toContain('toolstream_live_tasks 0');
    expect((await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer token-1-0123456789abcdef' } })).status).toBe(200);
    // The health probes stay public for load balancers.
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('auth: false leaves /metrics open even with A2A auth on; other methods get 405', async () => {
    const { base } = await start({ auth: { apiKeys: ['key-1-0123456789abcdef'] } }, { auth: false });
    expect((await fetch(`${base}/metrics`)).status).toBe(200);
    const post = await fetch(`${base}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('serves on another path, or nowhere with path: false', async () => {
    const moved = await start({}, { path: '/internal/prom' });
    expect((await fetch(`${moved.base}/internal/prom`)).status).toBe(200);
    expect((await fetch(`${moved.base}/metrics`)).status).toBe(404);
    const off = await start({}, { path: false });
    expect((await fetch(`${off.base}/metrics`)).status).toBe(404);
  });

  it('serves on a port of its own, and not on the application listener', async () => {
    const { app, base } = await start({}, { port: 0, host: '127.0.0.1' });
    const port = app.get(MetricsServer).port;
    expect(port).toBeGreaterThan(0);
    const own = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(own.status).toBe(200);
    expect(await own.text()).toContain('toolstream_open_streams 0');
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    expect((await fetch(`${base}/metrics`)).status).toBe(404);
    await app.close();
    apps.splice(apps.indexOf(app), 1);
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });

  it('readiness: 503 with the a2a check down while draining; liveness stays 200', async () => {
    const { app, base } = await start({});
    void app.get(A2aDrainService).drain(0);
    const ready = await fetch(`${base}/healthz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'error', error: { a2a: { status: 'down', draining: true } }, info: { taskStore: { status: 'up', kind: 'memory' } } });
    expect((await fetch(`${base}/healthz/live`)).status).toBe(200);
  });

  describe('in Redis mode', () => {
    let redis: TestRedis;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(async () => {
      await redis.stop();
    });

    it('readiness follows Redis reachability: up, down (503) while Redis is stopped, up again after it restarts', async () => {
      const { base } = await start({ redis: { connection: redis.url, keyPrefix: 'health:' } });
      const probe = async () => {
        const res = await fetch(`${base}/healthz`);
        return { status: res.status, body: (await res.json()) as { details: Record<string, { status: string; message?: string }> } };
      };
      expect(await probe()).toMatchObject({ status: 200, body: { details: { taskStore: { status: 'up', kind: 'redis' } } } });
      await redis.kill();
      const down = await probe();
      expect(down.status).toBe(503);
      expect(down.body.details.taskStore).toMatchObject({ status: 'down', kind: 'redis', message: expect.any(String) });
      expect((await fetch(`${base}/healthz/live`)).status).toBe(200);
      await redis.restart();
      const deadline = Date.now() + 20_000;
      let again = await probe();
      while (again.status !== 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        again = await probe();
      }
      expect(again).toMatchObject({ status: 200, body: { details: { taskStore: { status: 'up' } } } });
    });
  });
});
