// `doom-loop-wasm/gateway`: a doom-loop guard outside the agent's code, as a
// standard fetch handler (`Request → Response`) for Node, Bun, Deno, Hono and
// Cloudflare Workers, in front of one configured upstream that speaks the
// OpenAI chat completions, Responses or Anthropic Messages API.
//
// Glue only: which request is which API and what to do with it — forward
// unchanged, forward rewritten (a refused call's result replaced by the
// verdict, steer guidance added), or answer the stop itself — is decided
// in wasm by the one gateway engine (gateway/src/lib.rs), from the
// request's body alone. This file moves bytes: it reads the body (up to a
// size limit), forwards to the configured upstream only (never to a host a
// request names: not an open proxy), passes every header through except
// the hop-by-hop ones, streams the upstream's answer back without
// buffering, and fails open: any error of its own forwards the request
// unchanged with one log line. It never logs a body or a header's value.

import { gatewayDecide, gatewayRoute } from 'doom-loop-wasm/replay';

/** Requests larger than this (bytes) are forwarded unguarded, not buffered. */
export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

// Hop-by-hop headers (RFC 9110 §7.6.1) and those the new request recomputes.
const DROPPED_REQUEST_HEADERS = new Set(['host', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'upgrade', 'content-length', 'accept-encoding', 'trailer']);
const DROPPED_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding', 'trailer', 'upgrade']);

/**
 * A fetch handler guarding the conversations that pass through it.
 * @param {object} config
 * @param {string} config.upstream the API's base URL (`https://api.openai.com`, `https://openrouter.ai/api`)
 * @param {unknown} [config.option] the `doomLoop` option (default `RECOMMENDED_DOOM_LOOP_OPTION`; `true`: the reference's defaults)
 * @param {Record<string, string[] | false>} [config.loopKeys] per-tool loop keys
 * @param {number} [config.maxBodyBytes] requests over this size pass unguarded
 * @param {(line: string) => void} [config.log] where decisions are logged (default: stderr via console.error)
 * @param {typeof fetch} [config.fetch] the fetch that reaches upstream
 * @returns {(request: Request) => Promise<Response>}
 */
export function createGateway(config) {
  const upstream = upstreamBase(config?.upstream);
  const option = config.option === undefined ? undefined : JSON.stringify(config.option);
  const loopKeys = config.loopKeys === undefined ? undefined : JSON.stringify(config.loopKeys);
  const maxBodyBytes = config.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const log = config.log ?? ((line) => console.error(`doomloop gateway: ${line}`));
  const upstreamFetch = config.fetch ?? globalThis.fetch;
  if (option !== undefined || loopKeys !== undefined) {
    // A wrong option is the operator's: say so once at start (each request
    // it cannot guard then passes unguarded, saying so too).
    const check = JSON.parse(gatewayDecide('chat', new TextEncoder().encode('{"messages":[]}'), option, loopKeys));
    for (const line of check.log) log(line);
  }

  return async function gateway(request) {
    const url = new URL(request.url);
    const target = `${upstream}${url.pathname}${url.search}`;
    let api;
    try {
      api = gatewayRoute(request.method, url.pathname);
    } catch {
      api = undefined;
    }
    if (!api) return relay(upstreamFetch, target, request, request.body, []);
    const declared = Number(request.headers.get('content-length'));
    if (declared > maxBodyBytes) {
      log(`${api} request of ${declared} bytes forwarded unguarded (over ${maxBodyBytes})`);
      return relay(upstreamFetch, target, request, request.body, []);
    }
    const body = new Uint8Array(await request.arrayBuffer());
    if (body.length > maxBodyBytes) {
      log(`${api} request of ${body.length} bytes forwarded unguarded (over ${maxBodyBytes})`);
      return relay(upstreamFetch, target, request, body, []);
    }
    let decision;
    try {
      decision = JSON.parse(gatewayDecide(api, body, option, loopKeys));
    } catch (error) {
      log(`${api} request forwarded unguarded: ${error?.message ?? error}`);
      return relay(upstreamFetch, target, request, body, []);
    }
    for (const line of decision.log) log(line);
    if (decision.action === 'answer') {
      const headers = new Headers(decision.headers);
      headers.set('content-type', decision.contentType);
      if (decision.contentType === 'text/event-stream') headers.set('cache-control', 'no-cache');
      return new Response(decision.body, { status: 200, headers });
    }
    const forwarded = decision.action === 'rewrite' ? new TextEncoder().encode(decision.body) : body;
    return relay(upstreamFetch, target, request, forwarded, decision.headers);
  };
}

/** The upstream's base URL without a trailing slash; only http(s). */
function upstreamBase(upstream) {
  if (typeof upstream !== 'string' || upstream === '') throw new TypeError('createGateway: `upstream` (the API base URL) is required');
  const url = new URL(upstream);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`createGateway: upstream must be http(s), not ${url.protocol}`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** Forwards `request` with `body` to `target`; the answer streams back with `extra` headers added. */
async function relay(upstreamFetch, target, request, body, extra) {
  const headers = new Headers();
  for (const [name, value] of request.headers) if (!DROPPED_REQUEST_HEADERS.has(name)) headers.set(name, value);
  // Uncompressed, so the bytes relayed need no re-encoding on any runtime.
  headers.set('accept-encoding', 'identity');
  const init = { method: request.method, headers, redirect: 'manual' };
  if (body != null && request.method !== 'GET' && request.method !== 'HEAD') {
    init.body = body;
    if (body instanceof ReadableStream) init.duplex = 'half';
  }
  let answer;
  try {
    answer = await upstreamFetch(target, init);
  } catch (error) {
    return new Response(JSON.stringify({ error: { type: 'upstream_unreachable', message: `the gateway could not reach its upstream: ${error?.message ?? error}` } }), {
      status: 502,
      headers: { 'content-type': 'application/json' },
    });
  }
  const out = new Headers();
  for (const [name, value] of answer.headers) if (!DROPPED_RESPONSE_HEADERS.has(name)) out.set(name, value);
  for (const [name, value] of extra) out.set(name, value);
  return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers: out });
}
