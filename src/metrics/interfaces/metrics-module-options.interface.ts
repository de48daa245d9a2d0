import type { Registry } from 'prom-client';

export interface MetricsModuleOptions {
  /**
   * Path of the Prometheus text endpoint. `false` serves nothing (the registry is still kept
   * and can be read through ToolstreamMetrics.registry). Default `/metrics`.
   */
  path?: string | false;
  /**
   * Serve the endpoint on its own HTTP server on this port (0: any free port) instead of the
   * application's, e.g. to keep it off the public listener.
   */
  port?: number;
  /** Interface the separate server listens on. Default: all (Node's default). */
  host?: string;
  /**
   * When the A2A routes require credentials (A2aModule `auth`), require the same ones here.
   * Default true; false leaves the endpoint open (for a scraper on a private network).
   */
  auth?: boolean;
  /** Node.js and process metrics (prom-client's defaults), in this module's registry. Default true. */
  defaultMetrics?: boolean;
  /**
   * Register into this registry (e.g. prom-client's global `register`, to serve the host's own
   * metrics alongside). Default: a registry of this module's own, so the host's is untouched.
   */
  registry?: Registry;
  /**
   * Tool names kept as `tool` label values besides the tools the executor registers; any other
   * name (a tool the model made up) is counted under `_other`, so labels stay bounded.
   */
  toolNames?: string[];
  /** Bucket bounds of toolstream_tool_call_duration_seconds, in seconds. */
  toolDurationBuckets?: number[];
}

/** The options checked and defaulted. */
export interface MetricsSettings {
  path: string | false;
  port?: number;
  host?: string;
  auth: boolean;
  defaultMetrics: boolean;
  registry?: Registry;
  toolNames: string[];
  toolDurationBuckets: number[];
}
