// Node ≥ 20 via require(): the CommonJS glue loads the .wasm synchronously.
'use strict';
const api = require('./api.cjs');

const glue = require('./doom_loop_node.cjs');
// The runtime's native SHA-256 for large inputs (the core decides when).
const { createHash } = require('node:crypto');
glue.setHostSha256((bytes) => createHash('sha256').update(bytes).digest());
api.install(glue);
api.init = async function init() {};
module.exports = api;
