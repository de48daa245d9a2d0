/** The public API for backends that import toolstream's modules. */
export * from './extensions';
export * from './executor';
export * from './runtime';
export * from './remote-agents';
export * from './a2a';
export * from './health';
export * from './metrics';
export * from './tracing';
export * from './client';
export * from './web';
