// Node ≥ 20 via require() (and, through node.mjs, Node ESM, Bun and Deno):
// the CommonJS glue loads the lean detector module synchronously — when a
// call first needs it, not at import. Reading, compiling and instantiating
// the .wasm is most of a cold start, and a small plain value's fingerprint
// never needs it (./core.js `fingerprintWithoutCore`); a monitor, a
// session, or any other fingerprint loads it. A failure to load (a bundler
// moved this file without its .wasm) is thrown by that call, and by every
// call that needs the module after it, or by `await init()`.
'use strict';
const { install, installOnFirstCall, assertReady, ...api } = require('./api.cjs');

// The runtime's native SHA-256 (the core decides when; node:crypto is
// never loaded at import: see node-sha256.cjs) and a Proxy test that runs
// no trap: plain key material then skips the reference-order walk
// (js/lower.js), and a small plain value is fingerprinted without wasm.
const sha256 = require('./node-sha256.cjs').hostSha256();
const host = { isProxy: require('node:util').types.isProxy, textSha256: sha256.textSha256 };
installOnFirstCall(() => {
  const glue = requireGlue();
  sha256.attach(glue);
  install(glue, host);
}, host);
// Loads the module now: an application that wants it ready (or wants a
// load failure at startup) awaits it.
api.init = async function init() {
  assertReady();
};
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
