// `doomloop proxy`: the gateway (doom-loop-wasm/gateway) as a local HTTP
// server in Node — `node:http` in, the fetch handler, the upstream's answer
// streamed back. Point an agent's base URL at it (ANTHROPIC_BASE_URL,
// OPENAI_BASE_URL, a Codex model provider's base_url) and every
// conversation through it gets the doom-loop ladder; docs/gateway.md.
//
//   doomloop proxy --upstream https://api.anthropic.com [--listen 127.0.0.1:8788]
//                  [--option JSON] [--loop-keys JSON] [--max-body-bytes N]
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import { createGateway } from 'doom-loop-wasm/gateway';

const USAGE = `usage: doomloop proxy --upstream URL [--listen HOST:PORT] [--option JSON] [--loop-keys JSON] [--max-body-bytes N]

Forwards every request to URL (the API's base URL), guarding the OpenAI chat
completions, Responses and Anthropic Messages conversations that pass through
it. Default listen address 127.0.0.1:8788; default option
RECOMMENDED_DOOM_LOOP_OPTION (--option true: the reference's defaults).
`;

/**
 * Starts the gateway as an HTTP server.
 * @param {{upstream: string, host?: string, port?: number, option?: unknown, loopKeys?: object, maxBodyBytes?: number, log?: (line: string) => void}} config
 * @returns {Promise<{url: string, close: () => Promise<void>}>}
 */
export async function startProxy(config) {
  const handler = createGateway(config);
  const server = createServer(async (req, res) => {
    try {
      const request = toRequest(req, config.host ?? '127.0.0.1');
      const response = await handler(request);
      await send(response, res);
    } catch (error) {
      // The client went away, or a body failed mid-stream: nothing is left to answer.
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'gateway_error', message: String(error?.message ?? error) } }));
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port ?? 8788, config.host ?? '127.0.0.1', resolve);
  });
  const { address, port } = server.address();
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    }),
  };
}

function toRequest(req, host) {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  const init = { method: req.method, headers };
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    init.body = Readable.toWeb(req);
    init.duplex = 'half';
  }
  return new Request(`http://${host}${req.url}`, init);
}

async function send(response, res) {
  res.writeHead(response.status, response.statusText, Object.fromEntries(response.headers));
  if (!response.body) return res.end();
  // Each chunk as it arrives: a streamed answer is never buffered here.
  for await (const chunk of response.body) {
    if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
  }
  res.end();
}

/** `doomloop proxy ARGS`: parses the flags, starts, and runs until killed. */
export async function main(args) {
  const config = { upstream: undefined };
  for (let i = 0; i < args.length; i++) {
    const value = () => {
      if (i + 1 >= args.length) throw new Error(`${args[i]} needs a value`);
      return args[++i];
    };
    switch (args[i]) {
      case '--upstream': config.upstream = value(); break;
      case '--listen': {
        const listen = value();
        const at = listen.lastIndexOf(':');
        config.host = at > 0 ? listen.slice(0, at).replace(/^\[|\]$/g, '') : '127.0.0.1';
        config.port = Number(at >= 0 ? listen.slice(at + 1) : listen);
        if (!Number.isInteger(config.port) || config.port < 0 || config.port > 65535) throw new Error(`--listen: not a port: ${listen}`);
        break;
      }
      case '--option': config.option = JSON.parse(value()); break;
      case '--loop-keys': config.loopKeys = JSON.parse(value()); break;
      case '--max-body-bytes': config.maxBodyBytes = Number(value()); break;
      case '-h': case '--help': process.stdout.write(USAGE); return 0;
      default: throw new Error(`unknown argument ${args[i]}`);
    }
  }
  if (!config.upstream) throw new Error('--upstream URL is required');
  const proxy = await startProxy(config);
  process.stderr.write(`doomloop proxy: listening on ${proxy.url}, forwarding to ${config.upstream}\n`);
  const stop = () => proxy.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return undefined;
}
