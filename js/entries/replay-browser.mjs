// `doom-loop-wasm/replay` in browsers and bundlers: the full module
// (detector + trace tooling) is fetched, so `await init()` once before the
// first call. Once it is, the main entry's `replayTranscript` works too.
import initGlue, * as glue from './doom_loop_full.js';
import { installTooling } from './tooling.js';
import * as replay from './replay.js';

let loading;

/** Loads the full wasm module (from `input`: a URL, Response or BufferSource; default next to this file). */
export function init(input) {
  loading ??= initGlue(input === undefined ? undefined : { module_or_path: input }).then(() => {
    installTooling(glue, replay);
  });
  return loading;
}

export * from './replay.js';
