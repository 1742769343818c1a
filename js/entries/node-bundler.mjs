// Bundlers building for Node (the `module` condition, which Node itself
// never reads): Next.js's Turbopack, webpack. The same detector module and
// shim as node.cjs, but the .wasm is referenced as
// `new URL('./doom_loop_bg.wasm', import.meta.url)` — the asset pattern
// bundlers follow, emitting the file beside their output — where node.cjs
// reads `${__dirname}/doom_loop_bg.wasm`, a path bundlers rewrite. Node,
// Bun and Deno keep node.mjs → node.cjs (one instance for import and
// require); a bundle has only this one.
//
// The module is read and compiled on the first call, not at import: a
// bundle can import the package where it never calls it (Next.js renders a
// client component on the server too, where Turbopack points the URL at
// the browser's copy), and a failed read must not fail that import. The
// first call, or `await init()`, throws the error naming the fix.
import { readFileSync } from 'node:fs';
import { types } from 'node:util';
import * as glue from './doom_loop.js';
import { installOnFirstCall, install, assertReady } from './core.js';
import installHostSha256 from './node-sha256.cjs';
import movedWasmError from './moved-wasm.cjs';

installOnFirstCall(() => {
  let bytes;
  try {
    bytes = readFileSync(new URL('./doom_loop_bg.wasm', import.meta.url));
  } catch (error) {
    // Whatever the bundler made of the reference (a path it did not emit, a
    // URL of its own, no import.meta in a CommonJS bundle): the package was
    // moved without its module.
    throw movedWasmError(error?.path ?? error?.input ?? 'doom_loop_bg.wasm', error);
  }
  glue.initSync({ module: bytes });
  install(glue, { isProxy: types.isProxy, textSha256: installHostSha256(glue) });
});

export * from './api.js';
export { DoomLoopSession } from './session.js';
export * from './adapters/openrouter.js';
// Works once `doom-loop-wasm/replay` is initialised; a clear error otherwise.
export { replayFromMainEntry as replayTranscript } from './tooling.js';
export async function init() {
  assertReady();
}
