export * from './runtime.topics';
export * from './agent-bus';
export * from './event-emitter-agent-bus';
export * from './runtime-emitter';
export * from './narration';
export * from './runtime.constants';
export * from './agent-runtime.service';
export * from './runtime.module';
export { type RuntimeModuleOptions, type RuntimeModuleExtras, RUNTIME_MODULE_OPTIONS } from './runtime.module-definition';
