// `doom-loop-wasm/replay` in Node ≥ 20 via require() (and, through
// replay-node.mjs, Node ESM, Bun and Deno): the full module (detector +
// trace tooling), loaded synchronously.
'use strict';
const { installTooling, ...api } = require('./replay.cjs');

const glue = require('./doom_loop_full_node.cjs');
// The runtime's native SHA-256 for large inputs, as in node.cjs.
const memory = glue.ioMemory();
let createHash;
glue.setHostSha256((address, length) => {
  createHash ??= require('node:crypto').createHash;
  return createHash('sha256').update(new Uint8Array(memory.buffer, address, length)).digest();
});
installTooling(glue, api);
api.init = async function init() {};
module.exports = api;
