import { Test } from '@nestjs/testing';
import { Registry } from 'prom-client';
import { TaskService } from '../a2a';
import { MetricsModule } from './metrics.module';
import { resolveMetricsSettings } from './metrics-settings';
import { OTHER_TOOL_LABEL, ToolLabels } from './tool-labels';
import { ToolstreamMetrics } from './toolstream-metrics.service';

describe('tool label bounding', () => {
  it('keeps registered names and folds every other name into one value', () => {
    const labels = new ToolLabels(['weather', 'calculator', '']);
    expect(labels.label('weather')).toBe('weather');
    expect(labels.label('calculator')).toBe('calculator');
    for (const made_up of ['Weather', 'weather ', 'call_123', 'drop table', '', 'x'.repeat(10_000)]) {
      expect(labels.label(made_up)).toBe(OTHER_TOOL_LABEL);
    }
    expect(labels.values()).toEqual(['weather', 'calculator', OTHER_TOOL_LABEL]);
  });
});

describe('MetricsModule settings', () => {
  it('defaults: /metrics on the app, behind A2A auth, with the Node defaults', () => {
    expect(resolveMetricsSettings()).toMatchObject({ path: '/metrics', auth: true, defaultMetrics: true, port: undefined, toolNames: [] });
    expect(resolveMetricsSettings({ path: false }).path).toBe(false);
  });

  it.each([
    [{ path: 'metrics' }, /path must be false or a URL path/],
    [{ path: '/me trics' }, /path must be false or a URL path/],
    [{ port: 70000 }, /port must be an integer from 0 to 65535/],
    [{ port: 1.5 }, /port must be an integer/],
    [{ toolNames: [''] }, /toolNames must be a list of non-empty strings/],
    [{ toolDurationBuckets: [1, 0.5] }, /toolDurationBuckets must be a non-empty list of increasing/],
    [{ toolDurationBuckets: [] }, /toolDurationBuckets/],
  ])('refuses %j at startup', (options, message) => {
    expect(() => resolveMetricsSettings(options as never)).toThrow(message);
  });
});

describe('ToolstreamMetrics', () => {
  async function boot(options: Parameters<typeof MetricsModule.forRoot>[0]) {
    const moduleRef = await Test.createTestingModule({ imports: [MetricsModule.forRoot(options)] }).compile();
    await moduleRef.init();
    return moduleRef;
  }

  it('counts tool calls per registered tool and outcome; unknown names all land in one series', async () => {
    const moduleRef = await boot({ toolNames: ['weather'], defaultMetrics: false });
    const metrics = moduleRef.get(ToolstreamMetrics);
    metrics.recordToolCall({ name: 'weather', outcome: 'completed', seconds: 0.02 });
    metrics.recordToolCall({ name: 'weather', outcome: 'failed', seconds: 3 });
    for (let i = 0; i < 100; i++) metrics.recordToolCall({ name: `invented_${i}`, outcome: 'failed', seconds: 0.001 });
    const { body } = await metrics.exposition();
    expect(body).toContain('toolstream_tool_calls_total{tool="weather",outcome="completed"} 1');
    expect(body).toContain('toolstream_tool_calls_total{tool="weather",outcome="failed"} 1');
    expect(body).toContain(`toolstream_tool_calls_total{tool="${OTHER_TOOL_LABEL}",outcome="failed"} 100`);
    expect(body).toContain('toolstream_tool_call_duration_seconds_bucket{le="0.025",tool="weather",outcome="completed"} 1');
    expect(body).toContain('toolstream_tool_call_duration_seconds_bucket{le="2.5",tool="weather",outcome="failed"} 0');
    expect(body).not.toContain('invented_');
    // Without an A2A server in the app, its metrics read zero.
    expect(body).toContain('toolstream_open_streams 0');
    expect(body).toContain('toolstream_tasks_total{state="completed"} 0');
    expect(body).not.toContain('process_cpu');
    await moduleRef.close();
  });

  it('reads the A2A side at scrape time: frames, rejected frames, stalled streams closed', async () => {
    const a2a = { frames: 12, rejectedFrames: 1, stalledStreamsClosed: 0, openStreams: 3, liveTasks: 2 };
    const moduleRef = await Test.createTestingModule({
      imports: [MetricsModule.forRoot({ defaultMetrics: false })],
      providers: [{ provide: TaskService, useValue: { metrics: () => a2a } }],
    }).compile();
    await moduleRef.init();
    const metrics = moduleRef.get(ToolstreamMetrics);
    expect((await metrics.exposition()).body).toContain('toolstream_stalled_streams_closed_total 0');
    a2a.stalledStreamsClosed = 2;
    const { body } = await metrics.exposition();
    expect(body).toContain('toolstream_stalled_streams_closed_total 2');
    expect(body).toContain('toolstream_frames_total 12');
    expect(body).toContain('toolstream_rejected_frames_total 1');
    expect(body).toContain('toolstream_open_streams 3');
    await moduleRef.close();
  });

  it("uses its own registry, or the host's when given, taking its metrics back out on close", async () => {
    const host = new Registry();
    const moduleRef = await boot({ registry: host, defaultMetrics: false });
    expect(moduleRef.get(ToolstreamMetrics).registry).toBe(host);
    expect(host.getSingleMetric('toolstream_live_tasks')).toBeDefined();
    await moduleRef.close();
    expect(host.getMetricsAsArray()).toEqual([]);

    const own = await boot({});
    expect(own.get(ToolstreamMetrics).registry).not.toBe(host);
    expect(await own.get(ToolstreamMetrics).registry.metrics()).toContain('process_cpu_user_seconds_total');
    await own.close();
  });
});
