// The one table of Content-Type headers for the repository's local HTTP
// servers (the playground's, the browser runtime test's and the bundler
// test's), keyed by lower-case file extension. A server serves only files
// whose extension is here: the table is also the allow-list. `.wasm` is
// `application/wasm` so that browsers compile it with
// WebAssembly.instantiateStreaming.
import { extname } from 'node:path';

export const CONTENT_TYPES = Object.freeze({
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.ts': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
});

/** The Content-Type of a file path, or `undefined` when it is not served. */
export function contentType(path) {
  const ext = extname(path).toLowerCase();
  return Object.hasOwn(CONTENT_TYPES, ext) ? CONTENT_TYPES[ext] : undefined;
}
