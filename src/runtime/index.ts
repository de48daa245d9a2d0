export * from './runtime.topics';
export * from './agent-bus';
export * from './event-emitter-agent-bus';
