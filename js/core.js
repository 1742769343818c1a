// The core as the shim reaches it: the wasm-bindgen exports a runtime entry
// installs once, and the hot path's buffer — one reusable region of wasm
// memory that the core reads a call from and writes its answer to (see
// `ioBuffer` in wasm/src/lib.rs). A fingerprint or a record then costs one
// `encodeInto` and one wasm call, instead of the glue's allocation, copy
// and decoded result string per argument.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The installed wasm-bindgen exports (undefined until an entry installs them). */
export let core;
let memory;
let bytes = new Uint8Array(0);
let data = new DataView(new ArrayBuffer(0));

/** Called once by the runtime entry with the initialised wasm-bindgen exports. */
export function install(exports) {
  core = exports;
  memory = exports.ioMemory();
  bytes = new Uint8Array(0);
}

export function assertReady() {
  if (core === undefined) {
    throw new Error(
      'doom-loop-wasm is not initialised yet: `await init()` before the first call (browsers load the .wasm asynchronously)',
    );
  }
}

/**
 * A view of at least `capacity` bytes of the buffer. A view of memory that
 * has since grown is detached and reads as empty, so the length check also
 * catches that.
 */
function view(capacity) {
  if (bytes.length < capacity) {
    const length = Math.max(capacity, bytes.length);
    const address = core.ioBuffer(length);
    bytes = new Uint8Array(memory.buffer, address, length);
    data = new DataView(memory.buffer, address, length);
  }
  return bytes;
}

/**
 * Writes `toolName`, `material` and `extra` back to back as UTF-8 (a lone
 * surrogate in the tool name becomes U+FFFD, as the reference's TextEncoder
 * hashes it); returns their byte lengths.
 */
export function writeCall(toolName, material, extra = '') {
  let out = view(3 * (toolName.length + extra.length) + material.length + 64);
  const tool = encoder.encodeInto(toolName, out).written;
  let rest = encoder.encodeInto(material, out.subarray(tool));
  if (rest.read < material.length) {
    out = view(tool + 3 * (material.length + extra.length));
    rest = encoder.encodeInto(material, out.subarray(tool));
  }
  const tail = extra === '' ? 0 : encoder.encodeInto(extra, out.subarray(tool + rest.written)).written;
  return [tool, rest.written, tail];
}

/** The fingerprint the core left at the start of the buffer. */
export function readFingerprint() {
  return decoder.decode(view(64).subarray(0, 64));
}

/** A `recordToolCallIo` answer (`2 × verdict length + duplicateInRound`) as the reference's record. */
export function readRecord(packed) {
  const duplicateInRound = packed % 2 === 1;
  const verdictLength = (packed - (duplicateInRound ? 1 : 0)) / 2;
  const out = view(72 + verdictLength);
  const record = { fingerprint: readFingerprint(), streak: data.getFloat64(64, true), duplicateInRound };
  if (verdictLength > 0) record.verdict = JSON.parse(decoder.decode(out.subarray(72, 72 + verdictLength)));
  return record;
}
