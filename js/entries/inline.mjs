// Bundlers that cannot locate a `.wasm` file next to the package (esbuild,
// a Node server bundled into one file, …): the lean detector module is
// inlined below as base64 (inline-wasm.mjs, generated) and compiled
// synchronously at import, so there is nothing to fetch and `init()` is a
// no-op. Costs ~1/3 more bytes than the .wasm file; prefer the main entry
// where the bundler handles the file.
import * as glue from './doom_loop.js';
import { install } from './core.js';
import base64 from './inline-wasm.mjs';

function decode(text) {
  if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

glue.initSync({ module: decode(base64) });
install(glue);

export * from './api.js';
export { DoomLoopSession } from './session.js';
export * from './adapters/openrouter.js';
// Works once `doom-loop-wasm/replay` is initialised; a clear error otherwise.
export { replayFromMainEntry as replayTranscript } from './tooling.js';
export async function init() {}
