export * from './tool-call-v1';
export * from './extension-activation';
export * from './extensions.constants';
export * from './extensions.module';
export { default as TOOL_CALL_V1_JSON_SCHEMA } from './tool-call-v1.schema.json';
