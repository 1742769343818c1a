// Browsers and bundlers (Vite, webpack, …): the lean detector module is
// fetched, so `await init()` once before the first call; calling earlier
// throws a clear error. Idempotent: later calls return the same promise.
import initGlue, * as glue from './doom_loop.js';
import { installUnlessInstalled, ready } from './core.js';

let loading;

/**
 * Loads the wasm module (from `input`: a URL, Response or BufferSource;
 * default next to this file). When `doom-loop-wasm/replay` was initialised
 * first, its full module (which holds the detector too) is already this
 * bundle's core, and stays it: a session made since writes its calls into
 * that module's buffer, so replacing the core would break it (and the lean
 * module is then not fetched at all).
 */
export function init(input) {
  loading ??=
    ready() !== undefined
      ? Promise.resolve()
      : initGlue(input === undefined ? undefined : { module_or_path: input }).then(() => {
          installUnlessInstalled(glue);
        });
  return loading;
}

export * from './api.js';
export { DoomLoopSession } from './session.js';
export * from './adapters/openrouter.js';
// Works once `doom-loop-wasm/replay` is initialised; a clear error otherwise.
export { replayFromMainEntry as replayTranscript } from './tooling.js';
