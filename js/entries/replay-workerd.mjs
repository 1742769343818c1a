// `doom-loop-wasm/replay` in Cloudflare Workers: the full module imported
// compiled (CompiledWasm) and instantiated at import.
import wasmModule from './doom_loop_full_bg.wasm';
import * as glue from './doom_loop_full.js';
import { installTooling } from './tooling.js';
import * as replay from './replay.js';

glue.initSync({ module: wasmModule });
installTooling(glue, replay);

export * from './replay.js';
export async function init() {}
