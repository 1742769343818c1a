// `doom-loop-wasm/replay` in Node ≥ 20 via require() (and, through
// replay-node.mjs, Node ESM, Bun and Deno): the full module (detector +
// trace tooling), loaded synchronously.
'use strict';
const { installTooling, ...api } = require('./replay.cjs');

const glue = require('./doom_loop_full_node.cjs');
// The runtime's native SHA-256 and the Proxy test, as in node.cjs.
const textSha256 = require('./node-sha256.cjs')(glue);
installTooling(glue, api, { isProxy: require('node:util').types.isProxy, textSha256 });
api.init = async function init() {};
module.exports = api;
