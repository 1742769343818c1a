// The trace tooling's shim, served by the `doom-loop-wasm/replay` entry
// (the CLI and the playground use it): JS values lowered to text for the
// full wasm module (the detector plus the tooling), JSON answers parsed.
//
// Every `export` here is public API of the replay entry in every runtime:
// the entries re-export this file, and its CommonJS twin (replay.cjs) is
// derived from it and from what it imports by scripts/assemble-pkg.mjs —
// add a function here and it is exported everywhere. Keep the imports to
// the shim's own files (`./x.js`).
import { lower } from './lower.js';
import { toolingCore } from './tooling.js';

/**
 * Replays a transcript (`{doomLoop?, loopKeys?, rounds: [{text?, calls}]}`,
 * or a chat / Responses message list) through a fresh detector; returns the
 * timeline, with its terminal rendering as `text`.
 */
export function replayTranscript(transcript) {
  return JSON.parse(toolingCore('replayTranscript').replayTranscript(lower(transcript)));
}
