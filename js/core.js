// The core as the shim reaches it: the wasm-bindgen exports a runtime entry
// installs once, and the hot path's buffer — one reusable region of wasm
// memory that the core reads a call from and writes its answer to (see
// `ioBuffer` in wasm/src/lib.rs). A fingerprint or a record then costs one
// `encodeInto` and one wasm call, instead of the glue's allocation, copy
// and decoded result string per argument.
//
// A trapped instance never answers again. A WebAssembly trap (out of
// memory at the 4 GiB wasm32 ceiling, or a bug) unwinds out of the middle
// of the core: borrows stay held, the shadow stack is not restored, and
// nothing says which state is consistent. So every export is called
// through `guard`: the first trap marks the instance dead, and from then on
// every call — on the module's functions and on every monitor of the
// instance — throws one error naming the trap, without entering wasm. A new
// instance needs a fresh module load (a new process, Worker or isolate).

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The installed wasm-bindgen exports, guarded (undefined until an entry installs them). */
export let core;
let memory;
let bytes = new Uint8Array(0);
let data = new DataView(new ArrayBuffer(0));
/** The trap that killed the instance, once one has. */
let trapped;

/** The error every call throws once the instance has trapped. */
function deadError() {
  const cause = trapped instanceof Error ? `${trapped.constructor.name}: ${trapped.message}` : String(trapped);
  return new Error(
    `doom-loop-wasm: the WebAssembly instance trapped (${cause}) and cannot answer again — ` +
      'its state may be inconsistent, so every call and every monitor of it now throws. ' +
      'Load the module afresh (a new process, Worker or isolate) to continue; free() monitors you no longer need, ' +
      'since wasm memory never shrinks.',
    { cause: trapped },
  );
}

/** True for errors that leave the instance in an unknown state. */
function isTrap(error) {
  return (
    error instanceof WebAssembly.RuntimeError ||
    (error instanceof RangeError && /call stack/i.test(error.message))
  );
}

/** True once a trap has killed the instance. */
export function isDead() {
  return trapped !== undefined;
}

function markDead(error) {
  trapped ??= error;
  bytes = new Uint8Array(0);
  data = new DataView(new ArrayBuffer(0));
  return deadError();
}

/** `fn` with the dead check before and trap detection around it. */
function guard(fn) {
  return function guarded(...args) {
    if (trapped !== undefined) throw deadError();
    try {
      return fn.apply(this, args);
    } catch (error) {
      if (isTrap(error)) throw markDead(error);
      throw error;
    }
  };
}

/** The monitor class with every method guarded; `free` only releases a live instance. */
function guardMonitor(Monitor) {
  const proto = Monitor.prototype;
  for (const key of Reflect.ownKeys(proto)) {
    const descriptor = Object.getOwnPropertyDescriptor(proto, key);
    if (key === 'constructor' || typeof descriptor.value !== 'function') continue;
    const method = descriptor.value;
    const wrapped =
      key === 'free' || key === Symbol.dispose
        ? function free() {
            // Freeing enters wasm too: after a trap the memory is gone
            // with the instance anyway.
            if (trapped === undefined) return method.call(this);
          }
        : guard(method);
    Object.defineProperty(proto, key, { ...descriptor, value: wrapped });
  }
  const create = guard((args) => new Monitor(...args));
  return function GuardedMonitor(...args) {
    return create(args);
  };
}

/**
 * Called once by the runtime entry with the initialised wasm-bindgen
 * exports. A CommonJS glue object is guarded in place (so anything else
 * holding it goes through the guard too); an ES module namespace (or a
 * bundler's getter-only stand-in for one) is copied.
 */
export function install(exports) {
  const writable =
    Object.isExtensible(exports) &&
    Object.values(Object.getOwnPropertyDescriptors(exports)).every((d) => d.writable === true);
  const target = writable ? exports : {};
  for (const [name, value] of Object.entries(exports)) {
    if (typeof value !== 'function') {
      if (target !== exports) target[name] = value;
    } else if (name === 'Monitor' || name === 'Session') {
      target[name] = guardMonitor(value);
    } else if (name !== 'default' && name !== 'initSync') {
      target[name] = guard(value);
    } else if (target !== exports) {
      target[name] = value;
    }
  }
  core = target;
  memory = exports.ioMemory();
  bytes = new Uint8Array(0);
}

export function assertReady() {
  if (core === undefined) {
    throw new Error(
      'doom-loop-wasm is not initialised yet: `await init()` before the first call (browsers load the .wasm asynchronously)',
    );
  }
  if (trapped !== undefined) throw deadError();
}

/**
 * A view of at least `capacity` bytes of the buffer, validated on every
 * use: a view of memory that has since grown is detached (it reads as
 * empty), and an address of 0 means the core could not lend its buffer —
 * never write through either.
 */
function view(capacity) {
  if (trapped !== undefined) throw deadError();
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
