// Cloudflare Workers (workerd): compiling wasm from bytes is forbidden
// there, so the module is imported as a compiled WebAssembly.Module (the
// CompiledWasm rule of wrangler and miniflare) and instantiated at import.
import wasmModule from './doom_loop_bg.wasm';
import * as glue from './doom_loop.js';
import { install } from './core.js';

glue.initSync({ module: wasmModule });
install(glue);

export * from './api.js';
export { DoomLoopSession } from './session.js';
export * from './adapters/openrouter.js';
// Works once `doom-loop-wasm/replay` is imported; a clear error otherwise.
export { replayFromMainEntry as replayTranscript } from './tooling.js';
export async function init() {}
