// The public API of doom-loop-wasm, over the wasm-bindgen exports that a
// runtime entry (workerd.mjs, browser.mjs, node.cjs) installs (./core.js).
//
// Drop-in for `@openrouter/agent/doom-loop`: the same names, signatures,
// results and console warnings. Methods that return a Promise there return
// one here; each also has a synchronous twin (`…Sync`), which the
// reference cannot offer because WebCrypto is async.
//
// Thin on purpose: values are lowered (./lower.js), handed to the core,
// and its JSON answers parsed. The only decisions made here are the ones
// that need the caller's live JS objects — calling a `loopKey` function,
// and reading the selected fields of the caller's own arguments object.

import { lower, textArg, isWellFormed, MAX_CANONICALIZE_DEPTH } from './lower.js';
import { core, assertReady, writeCall, readFingerprint, readRecord } from './core.js';

export { MAX_CANONICALIZE_DEPTH };

export const DEFAULT_DOOM_LOOP_LADDER = Object.freeze({
  observe: 2,
  steer: false,
  escalate: false,
  block: 3,
  stop: 6,
});

export const DEFAULT_MAX_ESCALATIONS = 2;

// The recommended opt-in option (issue #9): the reference's ladder with
// outcome-aware streaks (an identical call whose result keeps changing is
// progress). Measured on recorded agent runs (README, "Measured on real agent
// runs"); the Rust crate's RECOMMENDED_DOOM_LOOP_OPTION is the same object.
// `doomLoop: true` stays the reference's defaults.
export const RECOMMENDED_DOOM_LOOP_OPTION = Object.freeze({ outcomes: true });


const warnAll = (json) => {
  for (const warning of JSON.parse(json)) console.warn(warning);
};
const toolNameArg = (toolName) => JSON.stringify(String(toolName));

export function resolveDoomLoopOption(option) {
  assertReady();
  const { resolved, warnings, error } = JSON.parse(core.resolveDoomLoopOption(lower(option)));
  for (const warning of warnings) console.warn(warning);
  if (error !== undefined) throw new TypeError(error);
  return resolved;
}

export function canonicalizeKeyMaterial(value) {
  assertReady();
  return core.canonicalize(lower(value));
}

export function fingerprintToolCallSync(toolName, keyMaterial) {
  assertReady();
  const name = String(toolName);
  const material = lower(keyMaterial);
  const [toolLength, materialLength] = writeCall(name, material);
  if (core.fingerprintToolCallIo(toolLength, materialLength)) return readFingerprint();
  // Failed (bad key material): the string API throws the core's error.
  return core.fingerprintToolCall(toolNameArg(name), material);
}

export function fingerprintKeyMaterialSync(keyMaterial) {
  assertReady();
  return core.fingerprintKeyMaterial(lower(keyMaterial));
}

export function detectTextRepetition(text, options) {
  assertReady();
  const [arg, isJson] = textArg(text);
  return JSON.parse(core.detectTextRepetition(arg, isJson, lower(options)));
}

export function resolveLadderAction(ladder, streak, options) {
  assertReady();
  if (options === undefined || options === null) {
    throw new TypeError(`Cannot read properties of ${options} (reading 'allowBlock')`);
  }
  return core.resolveLadderAction(lower(ladder), Number(streak), lower(options));
}

export function resolveLoopKeyMaterial(loopKey, args) {
  assertReady();
  if (typeof loopKey === 'function') return resolveLoopKeyFunction(loopKey, args);
  // Only a field list reads the arguments; the other forms never look inside.
  const argsText = Array.isArray(loopKey) ? lower(args) : 'null';
  const resolution = JSON.parse(core.resolveLoopKeyDeclaration(lower(loopKey), argsText));
  if (resolution.kind === 'exempt') return { kind: 'exempt' };
  if (resolution.kind === 'fallback') {
    return { kind: 'fallback', keyMaterial: args, warning: resolution.warning };
  }
  if (resolution.fields === undefined) return { kind: 'key', keyMaterial: args };
  const subset = Object.create(null);
  for (const field of resolution.fields) subset[field] = args[field];
  return { kind: 'key', keyMaterial: subset };
}

function resolveLoopKeyFunction(loopKey, args) {
  let result;
  let outcome;
  let thrown = '';
  try {
    result = loopKey(args);
    outcome = result === null ? 'null' : result === undefined ? 'undefined' : 'value';
  } catch (error) {
    outcome = 'threw';
    thrown = error instanceof Error ? error.message : String(error);
  }
  const resolution = JSON.parse(core.resolveLoopKeyOutcome(outcome, JSON.stringify(thrown)));
  if (resolution.kind === 'exempt') return { kind: 'exempt' };
  if (resolution.kind === 'key') return { kind: 'key', keyMaterial: result };
  return { kind: 'fallback', keyMaterial: args, warning: resolution.warning };
}

function lowerCall(call) {
  return `{"toolName":${toolNameArg(call.toolName)},"keyMaterial":${lower(call.keyMaterial)}}`;
}

export class DoomLoopMonitor {
  #inner;

  constructor(config, initialState) {
    assertReady();
    this.#inner = new core.Monitor(lower(config));
    if (initialState !== undefined) this.restore(initialState);
  }

  #monitor() {
    if (this.#inner === undefined) throw new Error('DoomLoopMonitor was freed');
    return this.#inner;
  }

  declareRoundSync(round, calls) {
    const lowered = [];
    for (const call of calls) {
      try {
        lowered.push(lowerCall(call));
      } catch (error) {
        // Reading the key material threw (a getter or proxy): excluded, as
        // an unhashable call is, with the reference's warning.
        console.warn(
          `[DoomLoop] could not fingerprint a "${call.toolName}" call while declaring round ` +
            `${round}; excluding it from the round set:`,
          error,
        );
      }
    }
    warnAll(this.#monitor().declareRound(Number(round), `[${lowered.join(',')}]`));
  }

  async declareRound(round, calls) {
    return this.declareRoundSync(round, calls);
  }

  recordToolCallSync(toolName, keyMaterial, round, options) {
    const monitor = this.#monitor();
    const name = String(toolName);
    const material = lower(keyMaterial);
    const roundNumber = Number(round);
    const optionsText = lower(options);
    // The buffer carries the tool name as UTF-8, which a lone surrogate
    // would not survive: such names take the string API.
    if (isWellFormed(name)) {
      const [toolLength, materialLength, optionsLength] = writeCall(name, material, optionsText);
      const packed = monitor.recordToolCallIo(toolLength, materialLength, optionsLength, roundNumber);
      if (packed >= 0) return readRecord(packed);
    }
    return JSON.parse(monitor.recordToolCall(toolNameArg(name), material, roundNumber, optionsText));
  }

  async recordToolCall(toolName, keyMaterial, round, options) {
    return this.recordToolCallSync(toolName, keyMaterial, round, options);
  }

  recordAssistantTextSync(text) {
    if (typeof text !== 'string') throw new TypeError('text.replace is not a function');
    const [arg, isJson] = textArg(text);
    return JSON.parse(this.#monitor().recordAssistantText(arg, isJson)) ?? undefined;
  }

  async recordAssistantText(text) {
    return this.recordAssistantTextSync(text);
  }

  /**
   * Opt-in progress ledger and failure streak (config keys `ledger`,
   * `failures`): the result of a recorded call. `inputFingerprint` is the
   * record's `fingerprint`; `outcome` the result's identity (e.g. from
   * `resolveLoopKeyMaterial(loopOutputKey, result)`), or undefined.
   */
  recordToolResultSync(toolName, inputFingerprint, outcome, failed, round) {
    const json = this.#monitor().recordToolResult(
      toolNameArg(toolName),
      JSON.stringify(String(inputFingerprint)),
      lower(outcome),
      Boolean(failed),
      Number(round),
    );
    return JSON.parse(json) ?? undefined;
  }

  /** Opt-in budget guard (config key `budget`): one turn's spend in tokens or cost. */
  recordSpend(amount) {
    return JSON.parse(this.#monitor().recordSpend(Number(amount))) ?? undefined;
  }

  resetTextStreak() {
    this.#monitor().resetTextStreak();
  }

  canEscalate() {
    return this.#monitor().canEscalate();
  }

  consumeEscalation() {
    this.#monitor().consumeEscalation();
  }

  getState() {
    return JSON.parse(this.#monitor().getState());
  }

  restore(state) {
    warnAll(this.#monitor().restore(lower(state)));
  }

  /** Releases the wasm memory now (otherwise a FinalizationRegistry does, eventually). */
  free() {
    this.#inner?.free();
    this.#inner = undefined;
  }
}

/**
 * Replays a transcript (`{doomLoop?, loopKeys?, rounds: [{text?, calls}]}`,
 * or a chat / Responses message list) through a fresh detector; returns the
 * timeline, with its terminal rendering as `text`.
 */
export function replayTranscript(transcript) {
  assertReady();
  return JSON.parse(core.replayTranscript(lower(transcript)));
}

// Not `async`: the reference canonicalizes before it awaits, so bad key
// material throws synchronously there too.
export function fingerprintToolCall(toolName, keyMaterial) {
  return Promise.resolve(fingerprintToolCallSync(toolName, keyMaterial));
}

export function fingerprintKeyMaterial(keyMaterial) {
  return Promise.resolve(fingerprintKeyMaterialSync(keyMaterial));
}
