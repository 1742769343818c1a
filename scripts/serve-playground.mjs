#!/usr/bin/env node
// Serves the playground locally: a dependency-free node:http server on
// 127.0.0.1 only.
//
//   node scripts/serve-playground.mjs [PORT]      (or PORT=… ; default 8787, 0 = any free port)
//
//   /          → playground/index.html
//   /<file>    → playground/<file>
//   /pkg/<file>→ pkg/<file>   (build it first: bash scripts/build-pkg.sh)
//
// `.wasm` is sent as `application/wasm`, so the browser compiles it with
// WebAssembly.instantiateStreaming. Only files with a known extension under
// the two folders are served; anything else is a 404.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve, sep, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { contentType } from './content-types.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_PORT = 8787;


/** [url prefix, directory], first match wins. */
function mounts(root) {
  return [
    ['/pkg/', join(root, 'pkg')],
    ['/', join(root, 'playground')],
  ];
}

async function locate(pathname, root) {
  for (const [prefix, dir] of mounts(root)) {
    if (!pathname.startsWith(prefix)) continue;
    let rel = pathname.slice(prefix.length);
    if (rel === '' || rel.endsWith('/')) rel += 'index.html';
    const file = resolve(dir, rel);
    // No escaping the mount (`..`, encoded or not).
    if (!file.startsWith(dir + sep)) return null;
    const info = await stat(file).catch(() => null);
    return info?.isFile() ? file : null;
  }
  return null;
}

/**
 * Starts the server; resolves with the `http.Server` once it listens.
 * `port` 0 picks a free port (read it from `server.address().port`).
 */
export function startPlaygroundServer({ port = DEFAULT_PORT, host = '127.0.0.1', root = ROOT } = {}) {
  const server = createServer(async (req, res) => {
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' });
        return res.end('method not allowed');
      }
      const { pathname } = new URL(req.url, 'http://127.0.0.1');
      let decoded;
      try {
        decoded = decodeURIComponent(pathname);
      } catch {
        decoded = null;
      }
      const file = decoded === null || decoded.includes('\0') ? null : await locate(decoded, root);
      const type = file && contentType(file);
      if (!type) {
        const hint = decoded?.startsWith('/pkg/') ? ' (is pkg/ built? bash scripts/build-pkg.sh)' : '';
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
        return res.end(`not found${hint}`);
      }
      const body = await readFile(file);
      res.writeHead(200, {
        'content-type': type,
        'content-length': body.length,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(String(error));
    }
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      ok(server);
    });
  });
}

function portFrom(value) {
  if (value === undefined || value === '') return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`invalid port ${JSON.stringify(value)} (0–65535)`);
  }
  return port;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const arg = process.argv[2];
  if (arg === '-h' || arg === '--help') {
    console.log('usage: node scripts/serve-playground.mjs [PORT]   (or PORT=…; default 8787)');
    process.exit(0);
  }
  let server;
  try {
    const port = portFrom(arg) ?? portFrom(process.env.PORT) ?? DEFAULT_PORT;
    server = await startPlaygroundServer({ port });
  } catch (error) {
    console.error(`serve-playground: ${error.message}`);
    process.exit(1);
  }
  const { port: actual } = server.address();
  console.log(`doom-loop playground: http://127.0.0.1:${actual}/   (Ctrl-C to stop)`);
  const close = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.on('SIGINT', close);
  process.on('SIGTERM', close);
}
