// The slot between the trace tooling module and the rest of the package.
//
// The trace tooling (replay, and later importers and evaluation) lives in a
// second wasm module, the full build, so the detector module every agent
// loads stays lean. A replay entry (`doom-loop-wasm/replay`) loads that
// module and installs it here; `replay.js` reaches it through
// `toolingCore()`. The main entry re-exports `replayFromMainEntry` as `replayTranscript`
// for backward compatibility: outside Node, Bun and Deno (whose main entry
// loads the tooling synchronously on first use instead) it works once the
// replay entry has been initialised, and otherwise says what to do.

import { guardInstance } from './guard.js';
import { installUnlessInstalled, ready } from './core.js';

let glue;
let api;

/**
 * Called once by a replay entry: the full module's wasm-bindgen exports and
 * the tooling shim (`replay.js`) that wraps them. The exports are guarded
 * (./guard.js) — a CommonJS glue object in place, so `npx doomloop`, which
 * holds that object, goes through the same guard: after a trap, one named
 * error forever, never an answer.
 *
 * Where no detector module is installed beside it (the replay entries are
 * bundles of their own), the full module is this bundle's core as well —
 * installed once, through one guard — so a `DoomLoopSession` from the replay
 * entry writes its calls into the I/O buffer of the module that reads them.
 * `host` is what `install` takes (./core.js).
 */
export function installTooling(exports, shim, host = {}) {
  glue = installUnlessInstalled(exports, host) ? ready() : guardInstance(exports).exports;
  api = shim;
}

function notLoaded(name) {
  return new Error(
    `doom-loop-wasm: ${name} is part of the trace tooling, which the main entry does not load (it keeps the agent-side module lean). ` +
      "Import it from 'doom-loop-wasm/replay' and `await init()` from that entry before the first call.",
  );
}

/** The full module's exports; throws a clear error before a replay entry has loaded it. */
export function toolingCore(name = 'the trace tooling') {
  if (glue === undefined) throw notLoaded(name);
  return glue;
}

/** The main entry's `replayTranscript`: the replay entry's, once that is loaded. */
export function replayFromMainEntry(...args) {
  if (api === undefined) throw notLoaded('replayTranscript');
  return api.replayTranscript(...args);
}

/** The full module's exports once a replay entry has installed them (the session engine's fallback). */
export function toolingGlue() {
  return glue;
}
