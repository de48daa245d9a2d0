/**
 * `toolstream/extensions`: the tool-call-v1 contract, framework-free (no Nest, no LangChain).
 * ExtensionsModule, its Nest side, is exported by the `toolstream` entry.
 */
export * from './tool-call-v1';
export * from './extension-activation';
export { default as TOOL_CALL_V1_JSON_SCHEMA } from './tool-call-v1.schema.json';
