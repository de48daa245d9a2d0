/**
 * Property-based fuzzing of the running demo app on a real port: JSON-RPC bodies (valid-ish and
 * garbage), the HTTP+JSON binding, the A2A headers, message parts; and tool-call-v1 frames
 * through the parsers. Every answer must be well formed, never a 5xx, never a crash or an
 * unhandled rejection, and nothing may pollute a prototype.
 *
 * Deterministic by default; FUZZ_SEED=<n> replays (or explores) another seed, FUZZ_SCALE=<x>
 * multiplies the number of cases. fast-check prints the seed and the shrunk counterexample on
 * failure.
 */
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Part } from '@a2a-js/sdk';
import fc from 'fast-check';
import { AppModule } from '../src/app.module';
import { AgentBus, AgentRuntimeService, TaskService } from '../src';
import { InMemoryTaskStore, TaskStore } from '../src/a2a';
import { RedisTaskStore } from '../src/a2a/store/redis-task-store';
import { TOOL_CALL_V1_EXTENSION_URI, TOOL_CALL_V1_MIME_TYPE, emitToolCall, parseToolCall, parseToolCalls, validateToolCall, validateToolCallFrame, type ToolCallArtifactData } from '../src/extensions';
import { CaptureLogger } from './support/capture-logger';
import { ProcessGuards } from './support/process-guards';
import { eventually, readSse } from './support/sse';
import { useStoreMode } from './support/store-modes';

const SEED = Number(process.env.FUZZ_SEED ?? 20261202);
const SCALE = Number(process.env.FUZZ_SCALE ?? 1);
const runs = (n: number, scale: number): number => Math.max(1, Math.round(n * SCALE * scale));
/** Cases per property; at scale 1 their sum is the figure the README gives. */
const fuzzRuns = (scale: number) => ({ jsonRpc: runs(3500, scale), rest: runs(2000, scale), garbage: runs(1500, scale), frames: runs(4000, scale) });
/**
 * Redis mode (the app on a redis-server of the suite's own, TOOLSTREAM_REDIS_URL, role all) at
 * reduced scale, the same properties: a tenth of the cases (every task there also goes through
 * Redis and the run queue; keeps CI time small).
 */
const REDIS_FUZZ_SCALE = 0.1;

const KEY = 'fuzz-key-7d1c2b3a4e5f60718293';
const REQUEST_TIMEOUT_MS = 20_000;
const STACK_TRACE = /\bat .*\(.*:\d+:\d+\)/;

// ---------- arbitraries ----------
// Mostly valid-ish (so requests get deep into the server: tasks run, streams open, ids resolve),
// with a steady share of every kind of wrongness.

/** Header-safe text: what fetch can send (visible ASCII, space, and Latin-1 obs-text; no control characters). */
const headerText = fc.string({
  unit: fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff })).map((c) => String.fromCharCode(c)),
  maxLength: 40,
});
const anyText = fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 30 }), fc.string({ unit: 'grapheme', maxLength: 30 }));
/** Mostly `usual`, sometimes `odd`. */
const mostly = <T, U>(usual: fc.Arbitrary<T>, odd: fc.Arbitrary<U>, weight = 15): fc.Arbitrary<T | U> =>
  fc.oneof({ weight, arbitrary: usual }, { weight: 1, arbitrary: odd });

/** A task id as the server knows it (an index into the ids seen so far), or any string. */
type IdRef = { known: number } | { raw: string };
const idRef: fc.Arbitrary<IdRef> = mostly(
  fc.nat().map((known) => ({ known })),
  fc.oneof(anyText, fc.constantFrom('', ' ', '..', '%2e', '__proto__', 'constructor', 'null')).map((raw) => ({ raw })),
  3,
);

const prototypeKeys = fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf');
/** JSON values, also with keys that attack prototypes. */
const hostileJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 3 }),
    fc.dictionary(fc.oneof(prototypeKeys, fc.string({ maxLength: 8 })), tie('value'), { maxKeys: 4 }),
    // JSON.parse makes "__proto__" an own key, as a body parser does (a literal would set the prototype).
    fc.constant(JSON.parse('{"__proto__":{"polluted":"yes"}}') as unknown),
    fc.constant({ constructor: { prototype: { polluted: 'yes' } } }),
  ),
})).value;

type Family = '1.0' | '0.3';
const headers = (family: Family) =>
  fc.record(
    {
      auth: fc.oneof(
        { weight: 16, arbitrary: fc.constant<Record<string, string>>({ 'x-api-key': KEY }) },
        { weight: 1, arbitrary: fc.constant<Record<string, string>>({}) },
        { weight: 1, arbitrary: headerText.map((v): Record<string, string> => ({ 'x-api-key': v })) },
        { weight: 1, arbitrary: headerText.map((v): Record<string, string> => ({ authorization: `Bearer ${v}` })) },
      ),
      version: mostly(
        family === '1.0' ? fc.constantFrom('1.0', '1.0', '1.0.3') : fc.constantFrom(undefined, '0.3'),
        fc.oneof(fc.constantFrom('0.3', '1.0', '01.00', ' 1.0 ', '', '2.0'), headerText),
      ),
      extensions: fc.option(mostly(fc.constantFrom(TOOL_CALL_V1_EXTENSION_URI, `${TOOL_CALL_V1_EXTENSION_URI}, https://x.example/e`), headerText, 3)),
      legacyExtensions: fc.option(mostly(fc.constant(TOOL_CALL_V1_EXTENSION_URI), headerText, 2)),
      lastEventId: fc.option(mostly(fc.nat({ max: 12 }).map(String), fc.oneof(fc.constantFrom('-1', '1e3', '99999999999999999999', '0x10'), headerText), 3), { freq: 3 }),
      contentType: mostly(
        fc.constantFrom('application/json', 'application/json', 'application/a2a+json', 'application/json; charset=utf-8'),
        fc.constantFrom('text/plain', 'application/json; charset=utf-16', 'application/x-www-form-urlencoded', 'application/json; charset=latin1'),
        20,
      ),
    },
    { requiredKeys: ['auth', 'contentType'] },
  );
type FuzzHeaders = typeof headers extends (family: Family) => fc.Arbitrary<infer H> ? H : never;

/** Metadata: mostly an object (what the DTOs take), sometimes anything. */
const metadata = mostly(fc.dictionary(fc.oneof(prototypeKeys, fc.string({ maxLength: 8 })), hostileJson, { maxKeys: 3 }), hostileJson, 6);
/** Rarely set: naming a task in a new message is mostly an error (-32004 / -32001). */
const rarely = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => mostly(fc.constant(undefined), arb, 6);

const DEMO_REQUESTS = ['weather in Paris and the time in Tokyo', "what's 12*7", 'search the docs for replay', 'read the doc missing-page', 'hello'];
const text = mostly(fc.constantFrom(...DEMO_REQUESTS), anyText, 2);

const v1Part = fc.oneof(
  { weight: 8, arbitrary: fc.record({ text }) },
  { weight: 2, arbitrary: fc.record({ data: hostileJson }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: fc.record({ raw: mostly(fc.base64String({ maxLength: 12 }), anyText), mediaType: fc.option(headerText, { nil: undefined }) }) },
  { weight: 1, arbitrary: fc.record({ url: anyText }) },
  { weight: 1, arbitrary: fc.record({ text: anyText, data: hostileJson, metadata: hostileJson }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: hostileJson },
);
const v03Part = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('text'), text }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('data'), data: hostileJson }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('file'), file: fc.record({ uri: anyText, bytes: fc.base64String() }, { requiredKeys: [] }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('video', 'text', 'data'), text: hostileJson, data: hostileJson }, { requiredKeys: ['kind'] }) },
  { weight: 1, arbitrary: hostileJson },
);
const parts = <T>(part: fc.Arbitrary<T>) => mostly(fc.array(part, { minLength: 1, maxLength: 4 }), fc.oneof(fc.array(part, { maxLength: 80 }), hostileJson), 10);

const message = (family: Family) =>
  fc.record(
    {
      ...(family === '0.3' ? { kind: mostly(fc.constant('message'), hostileJson) } : {}),
      messageId: mostly(fc.uuid(), fc.oneof(anyText, fc.integer())),
      role: mostly(fc.constant(family === '1.0' ? 'ROLE_USER' : 'user'), fc.constantFrom('ROLE_AGENT', 'agent', '', 7, 'ROLE_USER', 'user')),
      parts: parts(family === '1.0' ? v1Part : v03Part),
      contextId: rarely(idRef),
      taskId: rarely(idRef),
      metadata,
      extensions: mostly(fc.array(fc.constant(TOOL_CALL_V1_EXTENSION_URI), { maxLength: 1 }), hostileJson),
      referenceTaskIds: mostly(fc.array(fc.uuid(), { maxLength: 2 }), hostileJson),
    },
    { requiredKeys: family === '0.3' ? ['kind', 'messageId', 'role', 'parts'] : ['messageId', 'role', 'parts'] },
  );

const sendParams = (family: Family) =>
  fc.record(
    {
      message: mostly(message(family), hostileJson, 20),
      configuration: mostly(
        fc.record(
          {
            returnImmediately: mostly(fc.boolean(), hostileJson),
            blocking: mostly(fc.boolean(), hostileJson),
            historyLength: mostly(fc.integer({ min: 0, max: 5 }), fc.oneof(fc.integer({ min: -3, max: -1 }), fc.double(), hostileJson)),
            acceptedOutputModes: mostly(fc.constantFrom(['text/plain'], ['*/*'], []), fc.oneof(fc.array(headerText, { maxLength: 2 }), hostileJson)),
            taskPushNotificationConfig: rarely(hostileJson),
            pushNotificationConfig: rarely(hostileJson),
          },
          { requiredKeys: [] },
        ),
        hostileJson,
      ),
      metadata,
      tenant: mostly(fc.constant(''), anyText),
    },
    { requiredKeys: ['message'] },
  );
const taskParams = fc.record({ id: idRef, historyLength: mostly(fc.integer({ min: 0, max: 5 }), hostileJson), metadata }, { requiredKeys: ['id'] });
const listParams = fc.record(
  {
    pageSize: mostly(fc.integer({ min: 1, max: 100 }), fc.oneof(fc.integer({ min: -1, max: 120 }), hostileJson)),
    pageToken: mostly(fc.constant(''), fc.oneof(anyText, fc.base64String())),
    status: mostly(fc.constantFrom('TASK_STATE_COMPLETED', 'TASK_STATE_WORKING', 'TASK_STATE_CANCELED'), fc.oneof(fc.constant('TASK_STATE_RUNNING'), anyText)),
    contextId: rarely(idRef),
    statusTimestampAfter: mostly(fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString()), anyText),
    includeArtifacts: mostly(fc.boolean(), hostileJson),
    historyLength: mostly(fc.integer({ min: 0, max: 4 }), fc.integer({ min: -3, max: -1 })),
  },
  { requiredKeys: [] },
);

const CALLS: Record<string, { family: Family; params: fc.Arbitrary<unknown> }> = {
  SendMessage: { family: '1.0', params: sendParams('1.0') },
  SendStreamingMessage: { family: '1.0', params: sendParams('1.0') },
  GetTask: { family: '1.0', params: taskParams },
  ListTasks: { family: '1.0', params: listParams },
  CancelTask: { family: '1.0', params: taskParams },
  SubscribeToTask: { family: '1.0', params: taskParams },
  CreateTaskPushNotificationConfig: { family: '1.0', params: taskParams },
  'message/send': { family: '0.3', params: sendParams('0.3') },
  'message/stream': { family: '0.3', params: sendParams('0.3') },
  'tasks/get': { family: '0.3', params: taskParams },
  'tasks/cancel': { family: '0.3', params: taskParams },
  'tasks/resubscribe': { family: '0.3', params: taskParams },
};
const WEIGHTS: Record<string, number> = { SendMessage: 6, SendStreamingMessage: 6, 'message/send': 3, 'message/stream': 3 };

/** A JSON-RPC call with the params of its method (mostly) and headers of its protocol version (mostly). */
const jsonRpcCall = fc
  .oneof(
    ...Object.keys(CALLS).map((method) => ({ weight: WEIGHTS[method] ?? 2, arbitrary: fc.constant(method) })),
    { weight: 1, arbitrary: anyText },
  )
  .chain((method) => {
    // Own keys only: a generated method may well be "toString".
    const known = Object.prototype.hasOwnProperty.call(CALLS, method) ? CALLS[method] : { family: '1.0' as const, params: hostileJson };
    return fc.tuple(
      fc.record(
        {
          jsonrpc: mostly(fc.constant('2.0'), hostileJson, 20),
          id: mostly(fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null)), fc.oneof(fc.double(), hostileJson), 15),
          method: fc.constant(method),
          params: mostly(known.params, hostileJson, 12),
        },
        { requiredKeys: ['jsonrpc', 'method', 'id'] },
      ),
      headers(known.family),
    );
  });

type RestCall =
  | { route: 'send' | 'stream'; body: unknown }
  | { route: 'list'; query: Record<string, unknown> }
  | { route: 'get' | 'cancel' | 'subscribe'; id: IdRef; query: Record<string, unknown>; undecodable?: string };
const restCall: fc.Arbitrary<RestCall> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ route: fc.constantFrom('send' as const, 'stream' as const), body: mostly(sendParams('1.0'), hostileJson, 10) }) },
  { weight: 1, arbitrary: fc.record({ route: fc.constant('list' as const), query: listParams }) },
  {
    weight: 3,
    arbitrary: fc.record({
      route: fc.constantFrom('get' as const, 'cancel' as const, 'subscribe' as const),
      id: idRef,
      query: fc.record({ historyLength: mostly(fc.integer({ min: 0, max: 3 }), anyText) }, { requiredKeys: [] }),
      // A path segment that is not valid percent-encoding, sent as is.
      undecodable: fc.option(fc.constantFrom('%E0%A4%A', '%ZZ', '%', '%C0%AF%', 'a%2'), { freq: 8, nil: undefined }),
    }),
  },
);

/** Bodies no client should send: broken JSON, wrong types, deep or wide nesting, binary. */
const garbage = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.json({ maxDepth: 4 }),
  fc.json({ maxDepth: 2 }).map((j) => j.slice(0, Math.max(0, j.length - 1))),
  fc.integer({ min: 1, max: 3_000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
  fc.integer({ min: 60, max: 70 }).map((n) => `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","metadata":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}}`),
  fc.constantFrom(
    '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","__proto__":{"polluted":1}}}',
    '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}',
    '[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]',
    '{"jsonrpc":"2.0","id":1e400,"method":"GetTask"}',
    '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"\\ud800"}]}}}',
    'null',
    '',
  ),
  fc.uint8Array({ maxLength: 200 }),
);

// ---------- the properties ----------

describe.each([
  { mode: 'memory' as const, FUZZ_RUNS: fuzzRuns(1) },
  { mode: 'redis' as const, FUZZ_RUNS: fuzzRuns(REDIS_FUZZ_SCALE) },
])('fuzzing (e2e, $mode store): hostile input never breaks the server', ({ mode, FUZZ_RUNS }) => {
  const store = useStoreMode(mode);
  let app: INestApplication;
  let base: string;
  const guards = new ProcessGuards();
  const logs = new CaptureLogger();
  const knownTasks: string[] = [];
  const saved = { ...process.env };
  let cases = 0;

  beforeAll(async () => {
    guards.install();
    process.env.TOOLSTREAM_API_KEYS = KEY;
    process.env.TOOLSTREAM_RUN_TIMEOUT_MS = '5000';
    // Thousands of calls: the offline planner answers without pausing between its answer's pieces.
    process.env.TOOLSTREAM_OFFLINE_PIECE_DELAY_MS = '0';
    if (mode === 'redis') process.env.TOOLSTREAM_REDIS_URL = store.redis().url;
    delete process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_BASE_URL;
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    // As main.ts runs it: A2aModule reads the bodies (also the JSON ones) with its limits.
    app = moduleRef.createNestApplication({ logger: logs, bodyParser: false, forceCloseConnections: true });
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
  });

  afterAll(async () => {
    await app.close();
    guards.uninstall();
    process.env = { ...saved };
    // eslint-disable-next-line no-console
    console.info(`fuzzing (${mode} store): ${cases} cases (seed ${SEED})`);
  });
  afterAll(() => store.stop());

  const resolveId = (ref: IdRef | undefined): string | undefined =>
    ref === undefined ? undefined : 'raw' in ref ? ref.raw : knownTasks.length > 0 ? knownTasks[ref.known % knownTasks.length] : `unknown-${ref.known}`;

  /** Replaces every IdRef in generated data by a task id (a known one, or the raw string). */
  function withIds(value: unknown): unknown {
    if (Array.isArray(value)) return value.map(withIds);
    if (typeof value !== 'object' || value === null) return value;
    if (Object.keys(value).length === 1 && ('known' in value || 'raw' in value)) return resolveId(value as IdRef);
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      Object.defineProperty(out, key, { value: withIds((value as Record<string, unknown>)[key]), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }

  function toHeaders(h: FuzzHeaders, withBody: boolean): Record<string, string> {
    return {
      ...h.auth,
      ...(h.version === undefined ? {} : { 'a2a-version': h.version }),
      ...(h.extensions ? { 'a2a-extensions': h.extensions } : {}),
      ...(h.legacyExtensions ? { 'x-a2a-extensions': h.legacyExtensions } : {}),
      ...(h.lastEventId ? { 'last-event-id': h.lastEventId } : {}),
      ...(withBody ? { 'content-type': h.contentType } : {}),
    };
  }

  /** The answer, read whole, or up to the first event of a stream (then the stream is dropped). */
  async function exchange(path: string, init: RequestInit): Promise<{ status: number; type: string; body: string; events: string[] }> {
    cases += 1;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS);
    try {
      const response = await fetch(`${base}${path}`, { ...init, signal: controller.signal });
      const type = response.headers.get('content-type') ?? '';
      if (!type.startsWith('text/event-stream')) return { status: response.status, type, body: await response.text(), events: [] };
      const events: string[] = [];
      for await (const message of readSse(response)) {
        if (message.data === undefined) continue;
        events.push(message.data);
        break;
      }
      controller.abort();
      return { status: response.status, type, body: '', events };
    } finally {
      clearTimeout(timer);
    }
  }

  function remember(json: unknown): void {
    const task = (json as { task?: { id?: unknown }; result?: { task?: { id?: unknown }; id?: unknown; kind?: unknown } } | null) ?? {};
    const id = task.task?.id ?? task.result?.task?.id ?? (task.result?.kind === 'task' ? task.result.id : undefined);
    if (typeof id === 'string' && !knownTasks.includes(id) && knownTasks.length < 200) knownTasks.push(id);
  }

  function expectJsonRpcResponse(json: unknown, sentId: unknown): void {
    expect(typeof json).toBe('object');
    const response = json as Record<string, unknown>;
    expect(response.jsonrpc).toBe('2.0');
    expect('result' in response !== 'error' in response).toBe(true);
    const validId = sentId === null || typeof sentId === 'string' || (typeof sentId === 'number' && Number.isFinite(sentId));
    if (response.id !== null) expect(response.id).toEqual(sentId);
    if ('result' in response) expect(validId && response.id === sentId).toBe(true);
    if ('error' in response) {
      const error = response.error as { code: unknown; message: unknown; data?: unknown };
      expect(Number.isInteger(error.code)).toBe(true);
      // -32603 is what an unexpected failure inside the server becomes: a bug, not an answer.
      expect(error.code).not.toBe(-32603);
      expect(typeof error.message).toBe('string');
      if (error.data !== undefined) {
        expect(Array.isArray(error.data)).toBe(true);
        for (const detail of error.data as Record<string, unknown>[]) expect(typeof detail['@type']).toBe('string');
      }
    }
  }

  function expectRestError(status: number, type: string, json: unknown): void {
    expect(type).toContain('application/a2a+json');
    const { error } = json as { error: { code: unknown; status: unknown; message: unknown; details: unknown } };
    expect(error.code).toBe(status);
    expect(typeof error.status).toBe('string');
    expect(typeof error.message).toBe('string');
    expect(Array.isArray(error.details)).toBe(true);
  }

  const STREAM_RESPONSE_KEYS = ['task', 'message', 'statusUpdate', 'artifactUpdate'];

  it(`JSON-RPC: ${FUZZ_RUNS.jsonRpc} calls, valid-ish, with fuzzed headers and parts, always a well-formed answer`, async () => {
    await fc.assert(
      fc.asyncProperty(jsonRpcCall, async ([generated, h]) => {
        const payload = JSON.stringify(withIds(generated));
        // What the server reads (JSON has no -0, NaN or Infinity).
        const call = JSON.parse(payload) as Record<string, unknown>;
        const { status, type, body, events } = await exchange('/a2a', { method: 'POST', headers: toHeaders(h, true), body: payload });
        expect(status).toBeLessThan(500);
        expect(body).not.toMatch(STACK_TRACE);
        if (events.length > 0) {
          expect(status).toBe(200);
          const first = JSON.parse(events[0]) as unknown;
          expectJsonRpcResponse(first, call.id);
          remember(first);
          return;
        }
        expect(type).toContain('application/json');
        const json = JSON.parse(body) as unknown;
        expectJsonRpcResponse(json, call.id);
        expect([200, 400, 401, 413, 415]).toContain(status);
        remember(json);
      }),
      { seed: SEED, numRuns: FUZZ_RUNS.jsonRpc },
    );
  }, 180_000);

  it(`HTTP+JSON: ${FUZZ_RUNS.rest} requests on every route, always a StreamResponse, a Task or a google.rpc.Status`, async () => {
    await fc.assert(
      fc.asyncProperty(restCall, headers('1.0'), async (generated, h) => {
        const call = withIds(generated) as RestCall & { id?: string; undecodable?: string };
        const query = 'query' in call ? `?${new URLSearchParams(Object.entries(call.query).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]))}` : '';
        const [method, path, body] =
          call.route === 'send' || call.route === 'stream'
            ? ['POST', call.route === 'send' ? '/message:send' : '/message:stream', JSON.stringify(call.body)]
            : call.route === 'list'
              ? ['GET', `/tasks${query}`, undefined]
              : [call.route === 'get' ? 'GET' : 'POST', `/tasks/${call.undecodable ?? pathSegment(String(call.id))}${call.route === 'get' ? '' : `:${call.route}`}${query}`, undefined];
        const response = await exchange(path, { method, headers: toHeaders(h, body !== undefined), body });
        expect(response.status).toBeLessThan(500);
        expect(response.body).not.toMatch(STACK_TRACE);
        if (response.events.length > 0) {
          const first = JSON.parse(response.events[0]) as Record<string, unknown>;
          expect(Object.keys(first).filter((k) => STREAM_RESPONSE_KEYS.includes(k))).toHaveLength(1);
          remember(first);
          return;
        }
        const json = JSON.parse(response.body) as unknown;
        if (response.status === 200) {
          expect(typeof json).toBe('object');
          remember(json);
        } else {
          expectRestError(response.status, response.type, json);
        }
      }),
      { seed: SEED + 1, numRuns: FUZZ_RUNS.rest },
    );
  }, 180_000);

  it(`garbage: ${FUZZ_RUNS.garbage} malformed bodies on both bindings, answered in each binding's error shape`, async () => {
    await fc.assert(
      fc.asyncProperty(garbage, fc.constantFrom('/a2a', '/message:send', '/message:stream', '/tasks/x:cancel'), headers('1.0'), async (body, path, h) => {
        const response = await exchange(path, { method: 'POST', headers: toHeaders(h, true), body });
        expect(response.status).toBeLessThan(500);
        expect(response.body).not.toMatch(STACK_TRACE);
        if (response.events.length > 0) return;
        const json = JSON.parse(response.body) as unknown;
        if (path === '/a2a') expectJsonRpcResponse(json, typeof body === 'string' ? (JSON.parse(safeJson(body)) as { id?: unknown } | null)?.id ?? null : null);
        else if (response.status !== 200) expectRestError(response.status, response.type, json);
      }),
      { seed: SEED + 2, numRuns: FUZZ_RUNS.garbage },
    );
  });

  it(`frames: ${FUZZ_RUNS.frames} parts arrays through parseToolCall / parseToolCalls / validateToolCall: never a throw, every frame valid, round trips exact`, () => {
    const frame: fc.Arbitrary<ToolCallArtifactData> = fc.oneof(
      fc.record({ toolCallId: fc.string({ minLength: 1 }), name: fc.string({ minLength: 1 }), phase: fc.constant('started' as const), args: fc.option(fc.jsonValue(), { nil: undefined }) }, { requiredKeys: ['toolCallId', 'name', 'phase'] }),
      fc.record({ toolCallId: fc.string({ minLength: 1 }), name: fc.string({ minLength: 1 }), phase: fc.constant('completed' as const), result: fc.option(fc.jsonValue(), { nil: undefined }) }, { requiredKeys: ['toolCallId', 'name', 'phase'] }),
      fc.record({ toolCallId: fc.string({ minLength: 1 }), name: fc.string({ minLength: 1 }), phase: fc.constant('failed' as const), error: fc.option(fc.string(), { nil: undefined }) }, { requiredKeys: ['toolCallId', 'name', 'phase'] }),
    );
    const shapes = (f: ToolCallArtifactData): unknown[] => {
      const part = emitToolCall(f);
      return [part, Part.toJSON(part), { kind: 'data', data: JSON.parse(JSON.stringify(f)) as unknown, metadata: { mimeType: TOOL_CALL_V1_MIME_TYPE } }];
    };
    const mutated = fc.tuple(frame, hostileJson, fc.constantFrom('toolCallId', 'name', 'phase', 'args', 'metadata', 'data', 'kind')).map(([f, junk, key]) => {
      const wire = JSON.parse(JSON.stringify(Part.toJSON(emitToolCall(f)))) as Record<string, unknown>;
      (wire.data as Record<string, unknown>)[key] = junk;
      if (key === 'metadata' || key === 'data' || key === 'kind') wire[key] = junk;
      return wire;
    });
    const roundTrip = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;
    const hostileParts = fc.array(fc.oneof(frame.chain((f) => fc.constantFrom(...shapes(f))), mutated, hostileJson, fc.anything()), { maxLength: 6 });
    /** Arrays and parts that throw when read (a proxy's length and items, a getter), named for fast-check's report. */
    const named = <T extends object>(value: T, name: string): T => Object.assign(value, { [fc.toStringMethod]: () => name });
    const accessors = fc.constantFrom(
      () =>
        new Proxy(named([] as unknown[], 'throwing proxy'), {
          get: (target, key) => {
            if (key === 'length' || /^\d+$/.test(String(key))) throw new Error('hostile');
            return Reflect.get(target, key) as unknown;
          },
        }),
      () => [named(Object.defineProperty({}, 'metadata', { get: () => { throw new Error('getter'); }, enumerable: true }), 'throwing getter')],
    );
    fc.assert(
      fc.property(fc.oneof(hostileParts, fc.anything(), accessors.map((make) => make())), frame, (parts, f) => {
        cases += 1;
        const all = parseToolCalls(parts);
        const first = parseToolCall(parts);
        expect(first).toEqual(all[0]);
        for (const found of all) expect(validateToolCallFrame(found).ok).toBe(true);
        let items: unknown[] = [];
        try {
          items = Array.isArray(parts) ? [...(parts as unknown[])] : [];
        } catch {
          // a throwing array: the parsers above had to survive it, there is nothing to iterate here
        }
        for (const item of items) expect(typeof validateToolCall(item).ok).toBe('boolean');
        for (const shape of shapes(f)) expect(roundTrip(parseToolCall([shape]))).toEqual(roundTrip(f));
      }),
      { seed: SEED + 3, numRuns: FUZZ_RUNS.frames },
    );
  });

  it('afterwards: no unhandled rejection or uncaught exception, no error logged, no polluted prototype, everything released, still serving', async () => {
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(guards.unhandled).toEqual([]);
    // An unexpected failure is logged as an error, whatever the client was told.
    expect(logs.errors).toEqual([]);
    expect(guards.pollutedPrototypes()).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const runtime = app.get(AgentRuntimeService);
    const tasks = app.get(TaskService);
    await eventually(() => runtime.activeRuns() === 0 && tasks.metrics().openStreams === 0, 15_000, 'runs and streams to end');
    expect(tasks.metrics()).toMatchObject({ liveTasks: 0, topicSubscriptions: 0, openStreams: 0 });
    expect(app.get(AgentBus).listenerCount()).toBe(2);
    // The store the mode names really served every request.
    expect(app.get(TaskStore)).toBeInstanceOf(mode === 'redis' ? RedisTaskStore : InMemoryTaskStore);
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(cases).toBeGreaterThanOrEqual(FUZZ_RUNS.jsonRpc + FUZZ_RUNS.rest + FUZZ_RUNS.garbage + FUZZ_RUNS.frames);
  });
});

/**
 * A task id as one path segment: percent-encoded (lone surrogates as U+FFFD, as a client's UTF-8
 * would), never empty nor a dot segment, which the URL parser would resolve away before any route.
 */
function pathSegment(id: string): string {
  const encoded = encodeURIComponent(Buffer.from(id, 'utf8').toString('utf8'));
  return encoded === '' || /^(\.|%2e)+$/i.test(encoded) ? `${encoded}x` : encoded;
}

function safeJson(text: string): string {
  try {
    JSON.parse(text);
    return text;
  } catch {
    return 'null';
  }
}
