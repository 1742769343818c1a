// The core as the shim reaches it: the wasm-bindgen exports a runtime entry
// installs once, and the hot path's buffer — one reusable region of wasm
// memory that the core reads a call from and writes its answer to (see
// `ioBuffer` in wasm/src/lib.rs). A fingerprint or a record then costs one
// `encodeInto` and one wasm call, instead of the glue's allocation, copy
// and decoded result string per argument.
//
// A trapped instance never answers again: the exports are installed
// through the trap guard (./guard.js), which marks the instance dead at the
// first trap; from then on every call throws one error naming it.

import { guardInstance } from './guard.js';
import { setProxyCheck, ioText, ioStrings, canonicalPlainText, isWellFormed } from './lower.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The installed wasm-bindgen exports, guarded (undefined until an entry installs them). */
export let core;
let memory;
let bytes = new Uint8Array(0);
let data = new DataView(new ArrayBuffer(0));
/** The guard of the installed instance. */
let instance;

/** The error every call throws once the instance has trapped. */
function deadError() {
  return instance.deadError();
}

/** True once a trap has killed the instance. */
export function isDead() {
  return instance?.isDead() === true;
}

function markDead(error) {
  return instance.markDead(error);
}

/**
 * Called once by the runtime entry with the initialised wasm-bindgen
 * exports, which it guards (see ./guard.js), and what the host offers:
 * `isProxy` (a Proxy test that runs no trap) turns on the plain-data fast
 * path of key material (./lower.js); `textSha256` (see `hostTextSha256`)
 * lets a small plain value's fingerprint be taken without the core.
 */
export function install(exports, host = {}) {
  setHost(host);
  instance = guardInstance(exports, () => {
    bytes = new Uint8Array(0);
    data = new DataView(new ArrayBuffer(0));
  });
  core = instance.exports;
  memory = exports.ioMemory();
  bytes = new Uint8Array(0);
}

/**
 * `install`, unless a module is the core already — it then stays the core:
 * a session made on it writes its calls into its buffer (two entries of one
 * bundle, the replay entry's and the main entry's: ./tooling.js,
 * entries/browser.mjs). True when `exports` became the core.
 */
export function installUnlessInstalled(exports, host = {}) {
  if (ready() !== undefined) return false;
  install(exports, host);
  return true;
}

/** The host's `() => ((text) => hex) | undefined` (see `hostTextSha256`), if it has one. */
let textSha256;

/** What `install` takes besides the exports (see there). */
function setHost(host) {
  setProxyCheck(host.isProxy);
  textSha256 = typeof host.textSha256 === 'function' ? host.textSha256 : undefined;
}

/**
 * The host's one-shot SHA-256 of a string (its UTF-8, a lone surrogate as
 * U+FFFD), as 64 hex digits — when it has a fast one in use now (Node:
 * `crypto.hash`, once node:crypto is loaded; js/entries/node-sha256.cjs);
 * else undefined, and the core hashes.
 */
export function hostTextSha256() {
  return textSha256?.();
}

/**
 * A call's fingerprint taken without the core: small plain key material's
 * canonical JSON written in JS and hashed by the host (`canonicalPlainText`
 * in ./lower.js, `hostTextSha256`) — the core's fingerprint, exactly;
 * undefined when the host has no fast SHA-256 in use, the tool name has a
 * lone surrogate, or the value is not small plain data.
 */
export function fingerprintWithoutCore(toolName, keyMaterial) {
  const hex = hostTextSha256();
  if (hex === undefined || !isWellFormed(toolName)) return undefined;
  const text = canonicalPlainText(keyMaterial);
  return text === undefined ? undefined : hex(`${toolName}\n${text}`);
}

/** How the entry loads the module on the first call, when it defers that (node.cjs, node-bundler.mjs). */
let loadOnFirstCall;

/**
 * Called by an entry instead of `install` at import: `load` installs on the
 * first call that needs the core (or `init()`), and throws its error
 * there, to every such call, until it succeeds. `host`, when the entry has
 * it before the module (what `install` takes), is in use at once: a small
 * plain value's fingerprint then needs no module at all.
 */
export function installOnFirstCall(load, host) {
  loadOnFirstCall = load;
  if (host !== undefined) setHost(host);
}

/** True while the entry defers loading the module and no call has needed it yet. */
export function loadDeferred() {
  return core === undefined && loadOnFirstCall !== undefined;
}

/** The installed exports, after the deferred load when the entry deferred it. */
export function ready() {
  if (core === undefined && loadOnFirstCall !== undefined) loadOnFirstCall();
  return core;
}

export function assertReady() {
  if (ready() === undefined) {
    throw new Error(
      'doom-loop-wasm is not initialised yet: `await init()` before the first call (browsers load the .wasm asynchronously)',
    );
  }
  if (isDead()) throw deadError();
}

/**
 * A view of at least `capacity` bytes of the buffer, validated on every
 * use: a view of memory that has since grown is detached (it reads as
 * empty), and an address of 0 means the core could not lend its buffer —
 * never write through either.
 */
function view(capacity) {
  if (isDead()) throw deadError();
  if (bytes.length < capacity || bytes.buffer !== memory.buffer) {
    const length = Math.max(capacity, bytes.length);
    const address = core.ioBuffer(length);
    if (!Number.isInteger(address) || address <= 0 || address + length > memory.buffer.byteLength) {
      // The buffer is held by a call that never returned: a trap the
      // guard did not see (e.g. a call through the raw glue).
      throw markDead(new WebAssembly.RuntimeError(`the I/O buffer is unavailable (address ${address})`));
    }
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
  if (extra === '') return [tool, rest.written, 0];
  // Room of its own: multi-byte key material can fill the slack reserved
  // above, and a cut-off `extra` (the record options) failed the call,
  // which then went the slow way through the string API.
  const at = tool + rest.written;
  return [tool, rest.written, encoder.encodeInto(extra, view(at + 3 * extra.length).subarray(at)).written];
}

/**
 * Writes lowered `text` at the start of the buffer and the raw `strings` it
 * names after it (see `writeStrings`); returns `[text bytes, string bytes,
 * string count]`, the arguments of the session binding's calls that read
 * it (`lowered_from_io` in wasm/src/lib.rs).
 */
export function writeLowered(text, strings) {
  // One encode: lowered text is mostly ASCII, one byte per code unit
  // (three, the most UTF-8 takes for one, only if that did not fit).
  let encoded = encoder.encodeInto(text, view(text.length + 64));
  if (encoded.read < text.length) encoded = encoder.encodeInto(text, view(3 * text.length));
  const textLength = encoded.written;
  return [textLength, writeStrings(textLength, strings), strings.length];
}

/** The UTF-8 text of `length` bytes the core left at the start of the buffer. */
export function readText(length) {
  return decoder.decode(view(length).subarray(0, length));
}

/**
 * Writes the raw strings of key material lowered for the I/O buffer
 * (`lowerKeyMaterialForIo`) at `at`, after the call: their UTF-8 back to
 * back, then each one's byte length as a little-endian u32 — the layout
 * `io_strings` in wasm/src/lib.rs reads. Returns their total byte length.
 */
export function writeStrings(at, strings) {
  if (strings.length === 0) return 0;
  const lengths = [];
  let end = at;
  for (const string of strings) {
    // Most long arguments are ASCII: one byte per code unit first, three
    // (the most UTF-8 takes for one) only if that did not fit.
    let written = encoder.encodeInto(string, view(end + string.length).subarray(end));
    if (written.read < string.length) written = encoder.encodeInto(string, view(end + 3 * string.length).subarray(end));
    lengths.push(written.written);
    end += written.written;
  }
  view(end + 4 * lengths.length);
  for (let i = 0; i < lengths.length; i++) data.setUint32(end + 4 * i, lengths[i], true);
  return end - at;
}

/**
 * One attempt to fingerprint a call through the I/O buffer, its key
 * material lowered for it (`lowerKeyMaterialForIo`); true if the core
 * answered (the fingerprint is then in the buffer: `readFingerprint`).
 */
export function fingerprintThroughIo(name, lowered) {
  const strings = ioStrings(lowered);
  const [toolLength, materialLength] = writeCall(name, ioText(lowered));
  const stringsLength = writeStrings(toolLength + materialLength, strings);
  return core.fingerprintToolCallIo(toolLength, materialLength, stringsLength, strings.length);
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

// --- The session engine's compact answer ----------------------------------
//
// An outcome where every call runs with no verdict and no warning — almost
// every response — comes back in the buffer instead of as JSON (decoding
// and parsing it was a sixth of an adapter's time per response): the round
// as a little-endian f64 at 0, then per decision an 80-byte record: the
// streak (f64), a flag byte, the fingerprint's 64 hex digits from byte 16.
// The layout is `write_decision` in wasm/src/session.rs.

const DECISIONS_AT = 8;
const DECISION_BYTES = 80;
const FINGERPRINT_AT = 16;

/**
 * A compact session answer: its round and its decisions, as their JSON
 * would parse, for the calls the shim lowered (`{id, toolName}` each, in
 * order; `fingerprint` when the shim took it).
 */
export function readCompact(calls) {
  // The whole answer first: writing it may have grown — and so moved — the
  // buffer past a view that still covers its first records.
  const out = view(DECISIONS_AT + calls.length * DECISION_BYTES);
  const decisions = new Array(calls.length);
  for (let i = 0; i < calls.length; i++) {
    const at = DECISIONS_AT + i * DECISION_BYTES;
    const flags = out[at + 8];
    decisions[i] = {
      id: calls[i].id,
      toolName: calls[i].toolName,
      action: flags & 1 ? 'refuse' : 'run',
      message: null,
      verdict: null,
      // A fingerprint the shim took itself is the one the core answers with.
      fingerprint: flags & 16 ? (calls[i].fingerprint ?? decoder.decode(out.subarray(at + FINGERPRINT_AT, at + DECISION_BYTES))) : null,
      streak: data.getFloat64(at, true),
      duplicateInRound: (flags & 2) !== 0,
      exempt: (flags & 4) !== 0,
      malformed: (flags & 8) !== 0,
    };
  }
  return { round: data.getFloat64(0, true), decisions };
}
