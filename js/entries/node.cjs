// Node ≥ 20 via require(): the CommonJS glue loads the .wasm synchronously.
'use strict';
const api = require('./api.cjs');

api.install(require('./doom_loop_node.cjs'));
api.init = async function init() {};
module.exports = api;
