// Cloudflare Workers (workerd): compiling wasm from bytes is forbidden
// there, so the module is imported as a compiled WebAssembly.Module (the
// CompiledWasm rule of wrangler and miniflare) and instantiated at import.
import wasmModule from './doom_loop_bg.wasm';
import * as glue from './doom_loop.js';
import { install, ready } from './core.js';

// Unless `doom-loop-wasm/replay`, imported first, installed its full module
// (which holds the detector too) as the core: that stays it, as in browser.mjs.
if (ready() === undefined) {
  glue.initSync({ module: wasmModule });
  install(glue);
}

export * from './api.js';
export { DoomLoopSession } from './session.js';
export * from './adapters/openrouter.js';
// Works once `doom-loop-wasm/replay` is imported; a clear error otherwise.
export { replayFromMainEntry as replayTranscript } from './tooling.js';
export async function init() {}
