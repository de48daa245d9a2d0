/** DI token of the resolved configuration (A2aConfig: options with defaults). */
export const A2A_CONFIG = Symbol('A2A_CONFIG');
/** DI token: the card's extensions (AGENT_EXTENSIONS from the `extensions` module), resolved after the options. */
export const A2A_EXTENSIONS = Symbol('A2A_EXTENSIONS');
/** DI token of the process's role (ToolstreamRole: all, api or worker). */
export const A2A_ROLE = Symbol('A2A_ROLE');

/** The one JSON-RPC URL, relative to the application's root (and global prefix). */
export const JSON_RPC_PATH = 'a2a';
/** The well-known path of the agent card. */
export const AGENT_CARD_WELL_KNOWN_PATH = '.well-known/agent-card.json';

/**
 * HTTP+JSON routes. The colon of `message:send` is escaped for the router, where a bare colon
 * starts a path parameter.
 */
export const REST_ROUTES = {
  sendMessage: 'message\\:send',
  streamMessage: 'message\\:stream',
  tasks: 'tasks',
  task: 'tasks/:id',
  cancelTask: 'tasks/:id\\:cancel',
  subscribeTask: 'tasks/:id\\:subscribe',
} as const;

export const A2A_VERSION_HEADER = 'A2A-Version';
export const LAST_EVENT_ID_HEADER = 'Last-Event-ID';
/** Content type of HTTP+JSON bodies (A2A 1.0, section 11.1). */
export const A2A_JSON_CONTENT_TYPE = 'application/a2a+json';

/** Protocol versions served: 0.3 (JSON-RPC only) and 1.0 (both bindings). */
export const PROTOCOL_VERSIONS = ['0.3', '1.0'] as const;
export type ProtocolVersion = (typeof PROTOCOL_VERSIONS)[number];
