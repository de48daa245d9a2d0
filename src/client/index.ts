/**
 * The rich-client kit: framework-free, runs in Node and in browsers. It imports nothing but
 * the tool-call-v1 contract (not the extensions index, which pulls in Nest).
 */
export * from './agent-card';
export * from './errors';
export * from './follow';
export * from './sse';
export * from './stream-event';
export * from './timeline.reducer';
export * from './timeline.store';
export * from './timeline.view';
