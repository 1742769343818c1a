// `doom-loop-wasm/replay` in Node ≥ 20 via require() (and, through
// replay-node.mjs, Node ESM, Bun and Deno): the full module (detector +
// trace tooling), loaded synchronously.
'use strict';
const { installTooling, ...api } = require('./replay.cjs');

const glue = require('./doom_loop_full_node.cjs');
// The runtime's native SHA-256, as in node.cjs.
require('./node-sha256.cjs')(glue);
installTooling(glue, api);
api.init = async function init() {};
module.exports = api;
