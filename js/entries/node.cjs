// Node ≥ 20 via require(): the CommonJS glue loads the .wasm synchronously.
'use strict';
const { install, ...api } = require('./api.cjs');

const glue = require('./doom_loop_node.cjs');
// The runtime's native SHA-256 for large inputs (the core decides when).
const { createHash } = require('node:crypto');
const memory = glue.ioMemory();
glue.setHostSha256((address, length) =>
  createHash('sha256').update(new Uint8Array(memory.buffer, address, length)).digest(),
);
install(glue);
api.init = async function init() {};
module.exports = api;
