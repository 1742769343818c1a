// The trace tooling's JS API, served by the `doom-loop-wasm/replay` entry
// (the CLI and the playground use it) — importing recorded agent runs,
// replaying them and evaluating many — over the full wasm module's exports
// (the detector plus the tooling; see wasm/src/trace.rs). Every `export`
// here is public API of the replay entry in every runtime: the entries
// re-export this file, and its CommonJS twin (replay.cjs) is derived from
// it by scripts/assemble-pkg.mjs. Keep the imports to the shim's own files.
//
// Inputs: a parsed value (an object or array in any accepted shape), a
// string (a file's text: JSON, or JSON Lines with a message or a run per
// line), or bytes (Uint8Array / ArrayBuffer / a Node Buffer; gzip is
// recognised by its magic bytes and decompressed in wasm, so `.jsonl.gz`
// works the same in Node, browsers and Workers, synchronously). Accepted
// shapes: the rounds format, OpenAI chat, Responses items, Anthropic
// Messages, Gemini `contents`, SWE-agent `.traj`, mini-swe-agent
// trajectories; errors name the place (file, line, run id) and, for an
// unknown shape, the shapes accepted.

import { lower } from './lower.js';
import { toolingCore } from './tooling.js';

// The session engine, on this entry's module (see session.js).
export { DoomLoopSession } from './session.js';

const replayEncoder = new TextEncoder();

// Where the runtime has a native gunzip reachable synchronously (Node ≥
// 20.16, Bun, Deno: `process.getBuiltinModule`), gzip is inflated there —
// about three times faster than in wasm; elsewhere (browsers, Workers) the
// wasm module inflates it. Either way the call stays synchronous, and the
// same limit applies: the core's MAX_DECOMPRESSED_BYTES (1 GiB) is Node's
// `maxOutputLength`, and past it the input is refused with the core's
// message, as the native CLI and the wasm path refuse it.
const nativeGunzip = (() => {
  try {
    return globalThis.process?.getBuiltinModule?.('node:zlib')?.gunzipSync;
  } catch {
    return undefined;
  }
})();

/** What `inflated` returns for gzip past the limit. */
const REFUSED = Symbol('refused by the gzip limit');

function inflated(bytes, core) {
  if (nativeGunzip === undefined || bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) return bytes;
  try {
    return nativeGunzip(bytes, { maxOutputLength: core.maxDecompressedBytes() });
  } catch (error) {
    if (error?.code === 'ERR_BUFFER_TOO_LARGE') return REFUSED;
    return bytes; // corrupt or truncated: let the core say so, with the place
  }
}

/** Bytes of a string or binary input; `undefined` for a parsed value; REFUSED past the gzip limit. */
function bytesOf(input, core) {
  if (typeof input === 'string') return replayEncoder.encode(input);
  if (input instanceof Uint8Array) return inflated(input, core);
  if (input instanceof ArrayBuffer) return inflated(new Uint8Array(input), core);
  if (ArrayBuffer.isView(input)) return inflated(new Uint8Array(input.buffer, input.byteOffset, input.byteLength), core);
  return undefined;
}

/** The bytes of an input for a single-run call; throws the core's refusal past the gzip limit. */
function singleBytes(input, name, core) {
  const bytes = bytesOf(input, core);
  if (bytes === REFUSED) throw new Error(core.gzipRefusal(name));
  return bytes;
}

const optionArg = (doomLoop) => (doomLoop === undefined ? undefined : lower(doomLoop));

/**
 * Reads one run in any accepted shape: `{format, transcript}`, the
 * transcript in the rounds format with each call's `result` and `failed`.
 * `name` is used in error messages (default `<input>`).
 */
export function importTranscript(input, { name = '<input>' } = {}) {
  const core = toolingCore('importTranscript');
  const bytes = singleBytes(input, name, core);
  const json = bytes === undefined ? core.importTranscript(lower(input)) : core.importTranscriptBytes(bytes, name);
  return JSON.parse(json);
}

/**
 * Replays one run in any accepted shape through a fresh detector; returns
 * the timeline (each call with its recorded `result`), its terminal
 * rendering as `text`. `doomLoop`, when given, replaces the transcript's
 * own option (e.g. `RECOMMENDED_DOOM_LOOP_OPTION`).
 */
export function replayTranscript(input, { doomLoop, name = '<input>' } = {}) {
  const core = toolingCore('replayTranscript');
  const bytes = singleBytes(input, name, core);
  const json =
    bytes === undefined
      ? core.replayTranscript(lower(input), optionArg(doomLoop))
      : core.replayTranscriptBytes(bytes, name, optionArg(doomLoop));
  return JSON.parse(json);
}

const isBinary = (x) => typeof x === 'string' || x instanceof ArrayBuffer || ArrayBuffer.isView(x);

/** `{name, data}` (a named file) rather than a transcript object? */
function isNamedFile(input) {
  return input !== null && typeof input === 'object' && 'data' in input && isBinary(input.data);
}

/** An element of a list of inputs (rather than a message of one run). */
function isInput(item) {
  if (isNamedFile(item) || isBinary(item)) return true;
  return item !== null && typeof item === 'object' && !('role' in item) && !('type' in item) && !('parts' in item);
}

/**
 * A list of inputs (rather than one run's message list): every element
 * looks like an input, or the core reads the array as a list of runs (as
 * it would the same array in a file) — so a run with a `type` field does
 * not turn the list into one input.
 */
function isInputList(inputs, core) {
  if (!Array.isArray(inputs)) return false;
  if (inputs.every(isInput)) return true;
  return !inputs.some((item) => isNamedFile(item) || isBinary(item)) && core.isRunList(lower(inputs));
}

/**
 * Replays many runs under one or more options and counts what the
 * evaluation defines (runs, observed / blocked / stopped, calls refused and
 * saved, first interventions unchanged / changing / unknown / text,
 * successful runs apart), per source and in total.
 *
 * `inputs`: one input or an array of them — `{name, data}` (file contents:
 * a string or bytes; JSON, JSON Lines with a run per line, `.jsonl.gz`),
 * a bare string or bytes, or a parsed run (object or array).
 * `options`: `[{label, option}]` (default: the reference's defaults,
 * `[{label: 'defaults', option: true}]`); or `doomLoop`: one option.
 *
 * Returns `{options: [{label, option, sources, total}], failures, text}`;
 * a run that fails to import or replay is counted and listed in
 * `failures` with its place, and does not stop the evaluation.
 */
export function evaluateTranscripts(inputs, { options, doomLoop } = {}) {
  const core = toolingCore('evaluateTranscripts');
  const list = isInputList(inputs, core) ? inputs : [inputs];
  const chosen = options ?? (doomLoop === undefined ? [] : [{ label: 'option', option: doomLoop }]);
  const evaluator = new core.Evaluator(lower(chosen));
  try {
    list.forEach((input, index) => {
      const add = (bytes, name) => {
        if (bytes === REFUSED) evaluator.addGzipRefused(name);
        else evaluator.addBytes(bytes, name);
      };
      if (isNamedFile(input)) {
        add(bytesOf(input.data, core), String(input.name ?? `input ${index + 1}`));
      } else {
        const bytes = bytesOf(input, core);
        if (bytes !== undefined) add(bytes, `input ${index + 1}`);
        else {
          const id = String(input?.id ?? `input ${index + 1}`);
          const resolved = typeof input?.resolved === 'boolean' ? input.resolved : undefined;
          evaluator.addDocument(lower(input), String(input?.source ?? 'input'), id, resolved);
        }
      }
    });
    return JSON.parse(evaluator.report());
  } finally {
    evaluator.free();
  }
}

/**
 * The gateway's decision for one request of an LLM API (`api`: `chat`,
 * `responses` or `anthropic`; `body`: its bytes), as JSON text:
 * `{action: "forward"|"rewrite"|"answer", body?, contentType?, headers,
 * log}`. `option` and `loopKeys` are JSON text (undefined: the defaults).
 * The fetch handler of `doom-loop-wasm/gateway` is built on it.
 */
export function gatewayDecide(api, body, option, loopKeys) {
  return toolingCore('gatewayDecide').gatewayDecide(api, body, option, loopKeys);
}

/** The API a request speaks (`chat`, `responses`, `anthropic`) from its method and path, or undefined. */
export function gatewayRoute(method, path) {
  return toolingCore('gatewayRoute').gatewayRoute(method, path) ?? undefined;
}
