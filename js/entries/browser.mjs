// Browsers and bundlers (Vite, webpack, …): the lean detector module is
// fetched, so `await init()` once before the first call; calling earlier
// throws a clear error. Idempotent: later calls return the same promise.
import initGlue, * as glue from './doom_loop.js';
import { install } from './core.js';

let loading;

/** Loads the wasm module (from `input`: a URL, Response or BufferSource; default next to this file). */
export function init(input) {
  loading ??= initGlue(input === undefined ? undefined : { module_or_path: input }).then(() => {
    install(glue);
  });
  return loading;
}

export * from './api.js';
export { DoomLoopSession } from './session.js';
export * from './adapters/openrouter.js';
// Works once `doom-loop-wasm/replay` is initialised; a clear error otherwise.
export { replayFromMainEntry as replayTranscript } from './tooling.js';
