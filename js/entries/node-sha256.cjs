// The runtime's native SHA-256 for the core (Node, Bun, Deno; `setHostSha256`
// in wasm/src/lib.rs), shared by node.cjs and replay-node.cjs.
//
// node:crypto is loaded by the first input the core hands over (1 KiB or
// more: the core's default, DEFAULT_BACKEND_MIN), not at import:
// loading it costs ≈ 2.5 ms, a good part of a cold start, and the small
// calls hash as fast in wasm. Once it is loaded (and has the one-shot
// `crypto.hash`, Node ≥ 20.12), a call to it — ≈ 0.3 µs plus the trip out
// of wasm and back — costs less than sha2 in wasm from ≈ 300 bytes
// (measured: 0.88× at 160 B, 1.02× at 300, 1.16× at 400, 1.44× at 900;
// docs/performance.md), so from then on inputs from ONCE_LOADED bytes go
// to it.
'use strict';

/** The size from which the core hands inputs over once node:crypto is loaded, with `crypto.hash`. */
const ONCE_LOADED = 320;

module.exports = function installHostSha256(glue) {
  const memory = glue.ioMemory();
  let hexDigest;
  glue.setHostSha256((address, length) => {
    if (hexDigest === undefined) {
      const crypto = require('node:crypto');
      if (typeof crypto.hash === 'function') {
        hexDigest = (bytes) => crypto.hash('sha256', bytes, 'hex');
        glue.setHostSha256Min(ONCE_LOADED);
      } else {
        hexDigest = (bytes) => crypto.createHash('sha256').update(bytes).digest('hex');
      }
    }
    return hexDigest(new Uint8Array(memory.buffer, address, length));
  });
};
