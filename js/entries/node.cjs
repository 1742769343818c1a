// Node ≥ 20 via require() (and, through node.mjs, Node ESM, Bun and Deno):
// the CommonJS glue loads the lean detector module synchronously.
'use strict';
const { install, ...api } = require('./api.cjs');

const glue = requireGlue();
// The runtime's native SHA-256 (the core decides when; node:crypto is
// used once the process has it or on the first large input, never loaded
// at import: see node-sha256.cjs).
const textSha256 = require('./node-sha256.cjs')(glue);
// A Proxy test that runs no trap: plain key material then skips the
// reference-order walk (js/lower.js); and node:crypto's SHA-256 of a
// string, once in use, for the fingerprints taken without wasm.
install(glue, { isProxy: require('node:util').types.isProxy, textSha256 });
api.init = async function init() {};
// Backward compatibility: the trace tooling is a second module
// (`doom-loop-wasm/replay`), loaded synchronously here on first use — not at
// import, so agents that never replay never pay for it.
api.replayTranscript = function replayTranscript(...args) {
  return require('./replay-node.cjs').replayTranscript(...args);
};
module.exports = api;

/**
 * The CommonJS glue, which reads doom_loop_bg.wasm beside this file; a
 * bundler that moved this file without it gets an error naming the fix.
 */
function requireGlue() {
  try {
    return require('./doom_loop_node.cjs');
  } catch (error) {
    if (error?.code !== 'ENOENT' || !String(error.path).endsWith('doom_loop_bg.wasm')) throw error;
    throw require('./moved-wasm.cjs')(error.path, error);
  }
}
