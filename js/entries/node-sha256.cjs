// The runtime's native SHA-256 for the core (Node, Bun, Deno; `setHostSha256`
// in wasm/src/lib.rs) and for the shim's fingerprints taken without wasm,
// shared by node.cjs, node-bundler.mjs and replay-node.cjs.
//
// node:crypto is never loaded at import: loading it costs ≈ 2.5 ms, a good
// part of a cold start. Once the .wasm is loaded, it is used from the start
// when the process has already loaded it (an agent's first `fetch` does),
// from the moment Node's module list shows it loaded, or when an input of
// 1 KiB or more comes (the core's default, DEFAULT_BACKEND_MIN) — whichever
// is first. Once it is in use and has the one-shot `crypto.hash` (Node ≥
// 20.12), a call to it — ≈ 0.3 µs plus the trip out of wasm and back —
// costs less than sha2 in wasm from ≈ ONCE_LOADED bytes
// (docs/performance.md), so the core asks it from there.
//
// Before the .wasm is loaded (node.cjs loads it when a call first needs
// it), the first small plain value to fingerprint loads node:crypto
// instead: its ≈ 2.5 ms are a third of reading, compiling and
// instantiating the module, which that fingerprint then never needs.
'use strict';

/** The size from which the core hands inputs over once node:crypto is in use, with `crypto.hash`. */
const ONCE_LOADED = 256;

/** Below the core's default, an input loads node:crypto only if something else already has. */
const LOADS_IT = 1024;

/**
 * The host's SHA-256, before the module is there: `textSha256` for the
 * shim at once (core.js `install`'s host), `attach(glue)` once the
 * wasm-bindgen exports are loaded, which hands the core the same hash.
 */
function hostSha256() {
  let glue;
  // A view of all of wasm memory, made again when growing it detached the old one.
  let heap = new Uint8Array(0);
  let hexDigest;
  let hasOneShot;
  const useCrypto = () => {
    const crypto = require('node:crypto');
    hasOneShot = typeof crypto.hash === 'function';
    hexDigest = hasOneShot
      ? (bytes) => crypto.hash('sha256', bytes, 'hex')
      : (bytes) => crypto.createHash('sha256').update(bytes).digest('hex');
    glue?.setHostSha256Min(hasOneShot ? ONCE_LOADED : LOADS_IT);
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

  function attach(exports) {
    glue = exports;
    const memory = glue.ioMemory();
    heap = new Uint8Array(0);
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
    if (hexDigest !== undefined) glue.setHostSha256Min(hasOneShot ? ONCE_LOADED : LOADS_IT);
    else if (watch) {
      if (loadedElsewhere()) useCrypto();
      else glue.setHostSha256Min(ONCE_LOADED);
    }
  }

  // Before the module: the first text to hash loads node:crypto (a Hash
  // object per call, where the runtime has no one-shot, still costs far
  // less than loading the module).
  const loadingHex = (text) => {
    if (hexDigest === undefined) useCrypto();
    return hexDigest(text);
  };
  // For the shim: the one-shot SHA-256 (hex) of a string's UTF-8 — once
  // node:crypto is in use and has `crypto.hash`, or before the module is
  // loaded; then a small plain value's fingerprint never enters wasm
  // (js/lower.js). Else undefined: the core hashes.
  let textHex;
  function textSha256() {
    if (textHex !== undefined) return textHex;
    if (hexDigest === undefined && watch && loadedElsewhere()) useCrypto();
    if (hexDigest === undefined) return glue === undefined ? loadingHex : undefined;
    // Without the one-shot (Node < 20.12) a Hash object per call costs more than the core's hash.
    if (!hasOneShot) return glue === undefined ? hexDigest : undefined;
    const crypto = require('node:crypto');
    textHex = (text) => crypto.hash('sha256', text, 'hex');
    return textHex;
  }
  return { textSha256, attach };
}

/** The host's SHA-256 for an already loaded module: its `textSha256`. */
module.exports = function installHostSha256(glue) {
  const host = hostSha256();
  host.attach(glue);
  return host.textSha256;
};
module.exports.hostSha256 = hostSha256;
