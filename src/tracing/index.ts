export {
  TRACER_NAME,
  toolstreamTracer,
  traceCarrier,
  contextFromCarrier,
  callerTraceContext,
  injectTraceHeaders,
  withTaskId,
  activeTaskId,
  inSampledTrace,
  type TraceCarrier,
} from './trace-context';
export * from './gen-ai';
