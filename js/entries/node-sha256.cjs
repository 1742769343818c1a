// The runtime's native SHA-256 for the core (Node, Bun, Deno; `setHostSha256`
// in wasm/src/lib.rs), shared by node.cjs and replay-node.cjs.
//
// node:crypto is never loaded at import: loading it costs ≈ 2.5 ms, a good
// part of a cold start. It is used from the start when the process has
// already loaded it (an agent's first `fetch` does), from the moment
// Node's module list shows it loaded, or when an input of 1 KiB or more
// comes (the core's default, DEFAULT_BACKEND_MIN) — whichever is first.
// Once it is in use and has the one-shot `crypto.hash` (Node ≥ 20.12), a
// call to it — ≈ 0.3 µs plus the trip out of wasm and back — costs less
// than sha2 in wasm from ≈ ONCE_LOADED bytes (docs/performance.md), so the
// core asks it from there.
'use strict';

/** The size from which the core hands inputs over once node:crypto is in use, with `crypto.hash`. */
const ONCE_LOADED = 256;

/** Below the core's default, an input loads node:crypto only if something else already has. */
const LOADS_IT = 1024;

module.exports = function installHostSha256(glue) {
  const memory = glue.ioMemory();
  // A view of all of wasm memory, made again when growing it detached the old one.
  let heap = new Uint8Array(0);
  let hexDigest;
  const useCrypto = () => {
    const crypto = require('node:crypto');
    if (typeof crypto.hash === 'function') {
      hexDigest = (bytes) => crypto.hash('sha256', bytes, 'hex');
      glue.setHostSha256Min(ONCE_LOADED);
    } else {
      hexDigest = (bytes) => crypto.createHash('sha256').update(bytes).digest('hex');
      glue.setHostSha256Min(LOADS_IT);
    }
  };
  // Node lists the builtins it has loaded (Bun and Deno answer an empty
  // list): when it is there, the inputs below LOADS_IT reach the host too,
  // which declines them until node:crypto shows up — one look at the
  // list's length per call, the list searched only when it grew.
  const loaded = process.moduleLoadList;
  const watch = Array.isArray(loaded) && loaded.length > 0;
  let seen = -1;
  const loadedElsewhere = () => {
    if (loaded.length === seen) return false;
    seen = loaded.length;
    return loaded.includes('NativeModule crypto');
  };
  glue.setHostSha256((address, length, out) => {
    if (hexDigest === undefined) {
      if (length < LOADS_IT && !(watch && loadedElsewhere())) return false;
      useCrypto();
    }
    if (heap.byteLength === 0) heap = new Uint8Array(memory.buffer);
    const hex = hexDigest(heap.subarray(address, address + length));
    for (let i = 0; i < 64; i++) heap[out + i] = hex.charCodeAt(i);
    return true;
  });
  if (watch) {
    if (loadedElsewhere()) useCrypto();
    else glue.setHostSha256Min(ONCE_LOADED);
  }
  // For the shim: the one-shot SHA-256 (hex) of a string's UTF-8, once
  // node:crypto is in use and has `crypto.hash` — then a small plain
  // value's fingerprint never enters wasm (js/lower.js); else undefined.
  let textHex;
  return function textSha256() {
    if (textHex !== undefined) return textHex ?? undefined;
    if (hexDigest === undefined && watch && loadedElsewhere()) useCrypto();
    if (hexDigest === undefined) return undefined;
    const crypto = require('node:crypto');
    // Without it (Node < 20.12) a Hash object per call costs more than it saves.
    textHex = typeof crypto.hash === 'function' ? (text) => crypto.hash('sha256', text, 'hex') : null;
    return textHex ?? undefined;
  };
};
