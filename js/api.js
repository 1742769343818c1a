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

import { lower, lowerKeyMaterial, lowerKeyMaterialForIo, ioText, ioStrings, textArg, isWellFormed, plainCountsJson, MAX_CANONICALIZE_DEPTH } from './lower.js';
import { core, assertReady, loadDeferred, isDead, writeCall, writeStrings, readFingerprint, readRecord, fingerprintThroughIo, fingerprintWithoutCore } from './core.js';
import { resolveOptionWith, resolveLoopKeyWith, coreConfig } from './option.js';

export { MAX_CANONICALIZE_DEPTH };

export const DEFAULT_DOOM_LOOP_LADDER = Object.freeze({
  observe: 2,
  steer: false,
  escalate: false,
  block: 3,
  stop: 6,
});

export const DEFAULT_MAX_ESCALATIONS = 2;

// The recommended opt-in option (issues #9, #17): outcome-, novelty- and
// effect-aware streaks (an identical call whose result keeps changing, or that
// repeats while the run does something new, or after a new write by a tool
// declared 'write', is progress), in-response repetition, and the
// reference's ladder with `stop` at 12 instead of 6 (no successful recorded run
// is ended). Measured on recorded agent runs (docs/measured.md). The Rust
// crate's RECOMMENDED_DOOM_LOOP_OPTION (src/config.rs) is the same object: the
// JS entries cannot read it from the core at import (the browser entry loads
// the module asynchronously), so tests/e2e/recommended.test.mjs compares them.
// `doomLoop: true` stays the reference's defaults.
export const RECOMMENDED_DOOM_LOOP_OPTION = Object.freeze({
  outcomes: true,
  novelty: true,
  repetition: true,
  effects: true,
  ladder: Object.freeze({ stop: 12 }),
});


const warnAll = (json) => {
  for (const warning of JSON.parse(json)) console.warn(warning);
};
const toolNameArg = (toolName) => JSON.stringify(String(toolName));

export function resolveDoomLoopOption(option) {
  assertReady();
  return resolveOptionWith(core, option);
}

export function canonicalizeKeyMaterial(value) {
  assertReady();
  return core.canonicalize(lowerKeyMaterial(value));
}

let refusedRawForm = false;

/**
 * The core refused key material whose long strings crossed raw, which it
 * takes for any plain data: an internal error. Said once; the caller
 * lowers the value the ordinary way (plain data: no user code runs).
 */
function rawFormRefused(keyMaterial) {
  if (!refusedRawForm) {
    refusedRawForm = true;
    console.warn('[DoomLoop] internal error: the core refused long strings handed over raw; they are fingerprinted the ordinary way from now on (slower, same fingerprints)');
  }
  return lowerKeyMaterial(keyMaterial);
}

export function fingerprintToolCallSync(toolName, keyMaterial) {
  // An entry that loads the module when a call first needs it (node.cjs)
  // does not load it for a fingerprint taken without it.
  const deferred = loadDeferred();
  if (!deferred) assertReady();
  // A template literal, as the reference's: a symbol name throws.
  const name = `${toolName}`;
  // Small plain data, where the host has a fast SHA-256: canonical JSON
  // written in JS and hashed by the host, never entering wasm (./lower.js).
  const fingerprint = fingerprintWithoutCore(name, keyMaterial);
  if (fingerprint !== undefined) return fingerprint;
  if (deferred) assertReady();
  let material = lowerKeyMaterialForIo(keyMaterial);
  if (fingerprintThroughIo(name, material)) return readFingerprint();
  if (typeof material !== 'string') {
    material = rawFormRefused(keyMaterial);
    if (fingerprintThroughIo(name, material)) return readFingerprint();
  }
  // Failed (bad key material): the string API throws the core's error.
  return core.fingerprintToolCall(toolNameArg(name), material);
}

export function fingerprintKeyMaterialSync(keyMaterial) {
  assertReady();
  return core.fingerprintKeyMaterial(lowerKeyMaterial(keyMaterial));
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
  return resolveLoopKeyWith(core, loopKey, args);
}

function lowerCall(call) {
  return `{"toolName":${toolNameArg(call.toolName)},"keyMaterial":${lowerKeyMaterial(call.keyMaterial)}}`;
}

/** The reference's `DoomLoopCallRecord` options reads: `allowBlock ?? true`. */
function readAllowBlock(options) {
  return options?.allowBlock ?? true;
}

// `resolveLadderAction` for a config the core could not take (see the
// constructor): the reference's reads, so its errors are the reference's.
function jsLadderAction(ladder, streak, options) {
  const meets = (threshold) => threshold !== false && streak >= threshold;
  if (meets(ladder.stop)) return 'stop';
  if (options.allowBlock && meets(ladder.block)) return 'block';
  if ((options.allowEscalate ?? true) && meets(ladder.escalate)) return 'escalate';
  if (meets(ladder.steer)) return 'steer';
  if (meets(ladder.observe)) return 'observe';
  return undefined;
}

/** The reference's `isValidStreak`, with its reads. */
function isValidStreak(value) {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof value.fingerprint === 'string' &&
    typeof value.streak === 'number' &&
    Number.isFinite(value.streak)
  );
}

/**
 * What the reference's `restore` reads from a blob, read as it reads it
 * (inherited fields included, getters and proxies met in its order, nothing
 * else touched), written straight to JSON text for the core, which
 * validates and clamps. Text, not an object: a blob is input, and building
 * a 100k-key dictionary first would double the cost of a large one.
 */
function projectState(state, withBeyond) {
  if (typeof state !== 'object' || state === null || Array.isArray(state)) return 'null';
  let json = '{"tools":{';
  const candidateTools = state.tools;
  if (typeof candidateTools === 'object' && candidateTools !== null) {
    let first = true;
    for (const [name, entry] of Object.entries(candidateTools)) {
      if (!isValidStreak(entry)) continue;
      json += (first ? '' : ',') + JSON.stringify(name) + ':' + projectEntry(entry);
      first = false;
    }
  }
  json += '}';
  const text = state.text;
  if (isValidStreak(text)) {
    json += `,"text":{"fingerprint":${JSON.stringify(state.text.fingerprint)},"streak":${numberJson(state.text.streak)}}`;
  }
  const used = state.escalationsUsed;
  if (typeof used === 'number' && Number.isFinite(used)) json += `,"escalationsUsed":${used}`;
  // The opt-in detectors' state is read only by a monitor that runs them.
  if (withBeyond && state.beyond !== undefined) json += `,"beyond":${lower(state.beyond)}`;
  return json + '}';
}

/** A number as JSON; anything else (a getter that changed its mind) as null, which the core rejects. */
const numberJson = (value) => (typeof value === 'number' && Number.isFinite(value) ? String(value) : 'null');

function projectEntry(entry) {
  let json = '{';
  const rounds = entry.roundFingerprints;
  if (Array.isArray(rounds) && rounds.length > 1 && rounds.every((value) => typeof value === 'string')) {
    json += `"roundFingerprints":${JSON.stringify([...rounds])},`;
  }
  const counts = entry.callStreaks;
  const plain = plainCountsJson(counts);
  if (plain !== undefined) {
    json += `"callStreaks":${plain},`;
  } else if (typeof counts === 'object' && counts !== null) {
    json += '"callStreaks":{';
    let first = true;
    for (const [call, count] of Object.entries(counts)) {
      if (typeof count === 'number' && Number.isFinite(count) && count >= 1) {
        json += (first ? '' : ',') + JSON.stringify(call) + ':' + count;
        first = false;
      }
    }
    json += '},';
  }
  const streak = numberJson(entry.streak);
  const fingerprint = entry.fingerprint;
  return `${json}"streak":${streak},"fingerprint":${typeof fingerprint === 'string' ? JSON.stringify(fingerprint) : 'null'}}`;
}

export class DoomLoopMonitor {
  #inner;
  #config;
  /** Why the core could not take the config, if it could not (see the constructor). */
  #foreign = false;
  /** Rounds that are not numbers, by identity (see #roundKey). */
  #rounds;
  #declared = false;
  /** Whether the core's config reads results' outcomes (asked once, on the first result). */
  #readsOutcomes;

  constructor(config, initialState) {
    assertReady();
    this.#config = config;
    try {
      this.#inner = new core.Monitor(lower(coreConfig(config)));
    } catch (error) {
      if (isDead() || !(error instanceof TypeError)) throw error;
      // The reference takes any config and fails where it first reads a
      // missing part. The core runs the default config for the state,
      // and every read of the caller's config happens here, in JS, so the
      // same calls fail with the same errors.
      this.#foreign = true;
      this.#inner = new core.Monitor(lower(resolveDoomLoopOption(true)));
    }
    if (initialState !== undefined) this.restore(initialState);
  }

  #monitor() {
    if (this.#inner === undefined) throw new Error('DoomLoopMonitor was freed');
    return this.#inner;
  }

  /**
   * A round as the core's number, keeping the reference's `===`: a number
   * is itself (NaN never equals, so never the same round); `undefined` is
   * never the same round; any other value (a string, object, bigint,
   * symbol, null) gets a number of its own, the same for the same value.
   */
  #roundKey(round) {
    if (typeof round === 'number') return round;
    if (round === undefined) return NaN;
    this.#rounds ??= new Map();
    let key = this.#rounds.get(round);
    if (key === undefined) {
      key = -1e300 * (this.#rounds.size + 1);
      this.#rounds.set(round, key);
    }
    return key;
  }

  declareRoundSync(round, calls) {
    const monitor = this.#monitor();
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
    this.#declared = true;
    const key = this.#roundKey(round);
    const warnings = JSON.parse(monitor.declareRound(key, `[${lowered.join(',')}]`));
    for (const warning of warnings) {
      // The core names the round by its number; a round that is not one
      // is named as the reference's template literal would name it.
      console.warn(typeof round === 'number' ? warning : warning.replace(` round ${key};`, ` round ${String(round)};`));
    }
  }

  async declareRound(round, calls) {
    return this.declareRoundSync(round, calls);
  }

  recordToolCallSync(toolName, keyMaterial, round, options) {
    const monitor = this.#monitor();
    // The reference's order: the name is stringified and the key material
    // canonicalized first (their errors first), the round read next, the
    // call recorded, and the options read after that.
    const name = `${toolName}`;
    const material = lowerKeyMaterialForIo(keyMaterial);
    if (round === undefined && !this.#declared) {
      core.fingerprintToolCall(toolNameArg(name), typeof material === 'string' ? material : lowerKeyMaterial(keyMaterial));
      // `this.declaredRound?.round === round` holds for undefined === undefined.
      throw new TypeError("Cannot read properties of undefined (reading 'fingerprints')");
    }
    let allowBlock;
    let optionsError;
    try {
      allowBlock = Boolean(readAllowBlock(options));
    } catch (error) {
      optionsError = { error };
      allowBlock = true;
    }
    const record = this.#record(monitor, name, material, keyMaterial, this.#roundKey(round), allowBlock);
    if (optionsError !== undefined) throw optionsError.error;
    if (this.#foreign) this.#foreignVerdict(record, allowBlock);
    if (record.verdict !== undefined) {
      if (typeof toolName !== 'string') record.verdict.toolName = toolName;
      if (record.verdict.detector === 'tool-fingerprint') {
        record.verdict.detector = options?.detector ?? 'tool-fingerprint';
      }
    }
    return record;
  }

  /**
   * Records a call whose key material is lowered for the I/O buffer
   * (`lowerKeyMaterialForIo`: text, or text with raw strings).
   */
  #record(monitor, name, material, keyMaterial, round, allowBlock) {
    const optionsText = allowBlock ? 'null' : '{"allowBlock":false}';
    // The buffer carries the tool name as UTF-8, which a lone surrogate
    // would not survive: such names take the string API.
    if (isWellFormed(name)) {
      const [toolLength, materialLength, optionsLength] = writeCall(name, ioText(material), optionsText);
      const strings = ioStrings(material);
      const stringsLength = writeStrings(toolLength + materialLength + optionsLength, strings);
      const packed = monitor.recordToolCallIo(toolLength, materialLength, optionsLength, round, stringsLength, strings.length);
      if (packed >= 0) return readRecord(packed);
    }
    const text = typeof material === 'string' ? material : isWellFormed(name) ? rawFormRefused(keyMaterial) : lowerKeyMaterial(keyMaterial);
    return JSON.parse(monitor.recordToolCall(toolNameArg(name), text, round, optionsText));
  }

  /** The reference's post-record reads of a config the core could not take. */
  #foreignVerdict(record, allowBlock) {
    const config = this.#config;
    const ladder = config.ladder;
    const allowEscalate = this.canEscalate();
    const action = jsLadderAction(ladder, record.streak, { allowBlock, allowEscalate });
    if (action === undefined) delete record.verdict;
    else if (record.verdict !== undefined) record.verdict.action = action;
  }

  async recordToolCall(toolName, keyMaterial, round, options) {
    return this.recordToolCallSync(toolName, keyMaterial, round, options);
  }

  recordAssistantTextSync(text) {
    const monitor = this.#monitor();
    // `if (!this.config.text.enabled) return undefined`, then `text.replace`.
    if (!this.#config.text.enabled) return undefined;
    if (typeof text !== 'string') {
      if (text === null || text === undefined) {
        throw new TypeError(`Cannot read properties of ${text} (reading 'replace')`);
      }
      if (typeof text.replace !== 'function') throw new TypeError('text.replace is not a function');
      text = `${text.replace(/\s+/g, ' ')}`;
    }
    const [arg, isJson] = textArg(text);
    return JSON.parse(monitor.recordAssistantText(arg, isJson)) ?? undefined;
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
    const monitor = this.#monitor();
    // A result is read only if a configured detector reads outcomes: tool
    // results are often the largest values of a run (as in the session).
    this.#readsOutcomes ??= monitor.readsOutcomes();
    const json = monitor.recordToolResult(
      toolNameArg(toolName),
      JSON.stringify(String(inputFingerprint)),
      this.#readsOutcomes ? lower(outcome) : 'undefined',
      Boolean(failed),
      // The same round key as recordToolCallSync: any round value, compared with `===`.
      this.#roundKey(round),
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
    const monitor = this.#monitor();
    if (this.#foreign) {
      const escalation = this.#config.escalation;
      return escalation !== null && (this.getState().escalationsUsed ?? 0) < escalation.maxEscalations;
    }
    return monitor.canEscalate();
  }

  consumeEscalation() {
    this.#monitor().consumeEscalation();
  }

  getState() {
    return JSON.parse(this.#monitor().getState());
  }

  restore(state) {
    const withBeyond = this.#config?.beyond !== undefined && this.#config?.beyond !== null;
    warnAll(this.#monitor().restore(projectState(state, withBeyond)));
  }

  /**
   * Releases the monitor's wasm memory now (otherwise a FinalizationRegistry
   * does, eventually — never within a synchronous burst). Idempotent; also
   * `monitor[Symbol.dispose]()`, so `using monitor = new DoomLoopMonitor(…)`
   * frees at the end of the block.
   */
  free() {
    const inner = this.#inner;
    this.#inner = undefined;
    if (inner !== undefined && !isDead()) inner.free();
  }
}

if (typeof Symbol.dispose === 'symbol') {
  Object.defineProperty(DoomLoopMonitor.prototype, Symbol.dispose, {
    value: function dispose() {
      this.free();
    },
    writable: true,
    configurable: true,
  });
}

// Not `async`: the reference canonicalizes before it awaits, so bad key
// material throws synchronously there too.
export function fingerprintToolCall(toolName, keyMaterial) {
  return Promise.resolve(fingerprintToolCallSync(toolName, keyMaterial));
}

export function fingerprintKeyMaterial(keyMaterial) {
  return Promise.resolve(fingerprintKeyMaterialSync(keyMaterial));
}
