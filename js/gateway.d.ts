/** How the gateway is set up. */
export interface GatewayConfig {
  /** The API's base URL, e.g. `https://api.openai.com`, `https://api.anthropic.com`, `https://openrouter.ai/api`. */
  upstream: string;
  /** The `doomLoop` option (default `RECOMMENDED_DOOM_LOOP_OPTION`; `true`: the reference's defaults). */
  option?: unknown;
  /** Per-tool loop keys: the fields that identify a call, or `false` to leave a tool out. */
  loopKeys?: Record<string, readonly string[] | false>;
  /** Requests larger than this (bytes) are forwarded unguarded, not buffered (default 32 MiB). */
  maxBodyBytes?: number;
  /** Where each decision's log line goes (default: `console.error`). Never given a body or a header's value. */
  log?: (line: string) => void;
  /** The fetch that reaches upstream (default: `globalThis.fetch`). */
  fetch?: typeof fetch;
}

/** Requests larger than this (bytes) are forwarded unguarded by default. */
export declare const DEFAULT_MAX_BODY_BYTES: number;

/**
 * A fetch handler (`Request → Response`) guarding the conversations that pass
 * through it on their way to `upstream`: observe (headers), steer (guidance
 * added), block (a refused call's result replaced by the verdict), stop
 * (answered without calling upstream). Every other request passes through.
 * @param config where to forward, and how to decide
 */
export declare function createGateway(config: GatewayConfig): (request: Request) => Promise<Response>;
