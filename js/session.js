// The session engine's JS face: `DoomLoopSession`, over the core's
// `Session` (src/session/, through wasm/src/session.rs). Every decision —
// rounds, in-round duplicates, identities of data-form loop keys, the
// fallback chain, run / refuse, halt, steer, escalate, the persisted state
// — is made in the core. What stays here needs the caller's live JS
// values: calling a `loopKey` / `loopOutputKey` function (and awaiting an
// async `loopOutputKey`), calling `onDetected`, printing warnings, and the
// one guard that keeps detection from ever failing the agent (an internal
// error turns the session observe-only, with one console.warn).
//
// Framework adapters (js/adapters/*.js) are thin glue over this class.
// Runs on the main entry's detector module and, from the replay entry, on
// the full module. Top-level names must not clash with the other shim
// files (the CommonJS build concatenates them).

import { lower, lowerKeyMaterial, lowerKeyMaterialForIo, ioText, ioStrings, wrapIoText, textArg } from './lower.js';
import { ready, writeLowered, readText, readCompact, fingerprintWithoutCore } from './core.js';
import { toolingGlue } from './tooling.js';
import { resolveOptionWith, resolveLoopKeyWith, coreConfig } from './option.js';

/** The wasm exports a session runs on: the main entry's, else the replay entry's. */
function sessionGlue() {
  const glue = ready() ?? toolingGlue();
  if (glue === undefined) {
    throw new Error(
      'doom-loop-wasm is not initialised yet: `await init()` before the first DoomLoopSession (browsers load the .wasm asynchronously)',
    );
  }
  return glue;
}

function isRecord(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Did a tool that returned normally report an error (`{ error: … }`)? */
function sessionIsToolError(result) {
  if (!isRecord(result) || !Object.hasOwn(result, 'error')) return false;
  const error = result.error;
  return error !== undefined && error !== null && error !== false && error !== '';
}

/** The text a thrown tool error gives the model (`error.message`, else `String(error)`); '' when unreadable. */
function sessionErrorText(error) {
  try {
    if (error instanceof Error) return String(error.message);
    if (isRecord(error) && typeof error.message === 'string') return error.message;
    return String(error);
  } catch {
    return '';
  }
}

const isThenable = (value) =>
  (typeof value === 'object' || typeof value === 'function') && value !== null && typeof value.then === 'function';

const RUN = 'run';

/** A neutral decision (observe-only / detection off). */
function runDecision(call) {
  const read = (name) => {
    try {
      return String(call?.[name] ?? '');
    } catch {
      return '';
    }
  };
  return {
    id: read('id'),
    toolName: read('toolName'),
    action: RUN,
    message: null,
    verdict: null,
    fingerprint: null,
    streak: 0,
    duplicateInRound: false,
    exempt: true,
    malformed: false,
  };
}

/** A lowered call's text; its raw strings (`lowerKeyMaterialForIo`), if any, appended to `strings`. */
function textOf(lowered, strings) {
  strings.push(...ioStrings(lowered));
  return ioText(lowered);
}

/** The core's answer `{value, warnings?}`: each warning said once, the value returned. */
function parseAnswer(json) {
  const answer = JSON.parse(json);
  if (answer.warnings) for (const warning of answer.warnings) console.warn(warning);
  return answer.value;
}

/**
 * One agent run (or conversation) mapped onto the doom-loop detector.
 * See docs/session.md.
 */
/**
 * The `loopEffects` the core reads: each declaration as data (the core warns
 * about any that is not 'write' or 'read' and treats that tool as unknown);
 * what JSON cannot carry is named by its type.
 */
function effectDeclarations(declarations) {
  if (!isRecord(declarations)) return {};
  const data = {};
  for (const [name, effect] of Object.entries(declarations)) {
    if (effect === undefined) continue;
    const plain = effect === null || ['string', 'number', 'boolean'].includes(typeof effect);
    data[name] = plain ? effect : `<${typeof effect}>`;
  }
  return data;
}

export class DoomLoopSession {
  #inner = null;
  #glue;
  #config = null;
  #loopKeys;
  #loopOutputKeys;
  #onDetected;
  // Whether a configured detector reads results' outcomes (else onResult
  // never lowers a result: often the run's largest values).
  #readsOutcomes = false;
  #broken = false;
  // A call object is read once (a loopKey function runs once per call): its lowered form.
  #lowered = new WeakMap();
  // The tools the core keys by a data-form loop key (fixed at construction,
  // as the core's copy is): their calls never carry the shim's fingerprint.
  #dataKeyed = new Set();

  /**
   * @param {object} [options]
   * @param {unknown} [options.doomLoop] the `doomLoop` option (default `true`; `false`: detection off)
   * @param {Record<string, unknown>} [options.loopKeys] per-tool loopKey: function, field list or `false`
   * @param {Record<string, unknown>} [options.loopOutputKeys] per-tool loopOutputKey (result identity)
   * @param {Record<string, unknown>} [options.loopEffects] per-tool loopEffect: `'write'` (changes what later calls observe) or `'read'`
   * @param {unknown} [options.state] a persisted `getState()` (or the reference's `doomLoop` blob)
   * @param {{refuse?: boolean, stop?: boolean, steer?: boolean, escalate?: boolean}} [options.capabilities]
   * @param {(verdict: object) => void} [options.onDetected]
   */
  constructor(options = {}) {
    const opts = options ?? {};
    const glue = sessionGlue();
    this.#glue = glue;
    const option = opts.doomLoop === undefined ? true : opts.doomLoop;
    // A configuration error is the caller's: it throws, as resolveDoomLoopOption does.
    const config = resolveOptionWith(glue, option);
    this.#loopKeys = isRecord(opts.loopKeys) ? opts.loopKeys : {};
    this.#loopOutputKeys = isRecord(opts.loopOutputKeys) ? opts.loopOutputKeys : {};
    this.#onDetected = typeof opts.onDetected === 'function' ? opts.onDetected : undefined;
    if (config === null) return;
    this.#config = config;
    // Own data properties (fromEntries), never `dataKeys[name] = key`: a tool
    // named `__proto__` would set the copy's prototype and lose its key.
    const dataKeys = Object.fromEntries(
      Object.entries(this.#loopKeys).filter(([, key]) => key !== undefined && typeof key !== 'function'),
    );
    this.#dataKeyed = new Set(Object.keys(dataKeys));
    const capabilities = isRecord(opts.capabilities) ? opts.capabilities : {};
    const sessionOptions = {
      loopKeys: dataKeys,
      loopEffects: effectDeclarations(opts.loopEffects),
      capabilities: Object.fromEntries(
        ['refuse', 'stop', 'steer', 'escalate'].map((name) => [name, capabilities[name] !== false]),
      ),
    };
    let state = 'undefined';
    if (opts.state !== undefined) {
      try {
        state = lower(opts.state);
      } catch (error) {
        console.warn('[DoomLoop] the persisted state could not be read; starting fresh:', error);
      }
    }
    this.#inner = new glue.Session(lower(coreConfig(config)), lower(sessionOptions), state);
    this.#readsOutcomes = this.#inner.readsOutcomes();
    for (const warning of JSON.parse(this.#inner.takeWarnings())) console.warn(warning);
  }

  /** The resolved config (`null` when detection is off). */
  get config() {
    return this.#config;
  }

  /** The current round number (0 before the first). */
  get round() {
    return this.#live() ? this.#guard(() => this.#inner.round(), 0) : 0;
  }

  /** False when detection is off or an internal error made the session observe-only. */
  get active() {
    return this.#live();
  }

  #live() {
    return this.#inner !== null && !this.#broken;
  }

  /**
   * Runs `fn`; an internal error makes the session observe-only (one warning)
   * and yields `fallback` (called, when it is a function).
   */
  #guard(fn, fallback) {
    try {
      return fn();
    } catch (error) {
      if (!this.#broken) {
        this.#broken = true;
        console.warn('[DoomLoop] internal error: doom-loop detection is off for the rest of this run (the run continues):', error);
      }
      return typeof fallback === 'function' ? fallback() : fallback;
    }
  }

  #detected(verdict) {
    if (!this.#onDetected || !verdict) return;
    try {
      this.#onDetected(verdict);
    } catch (error) {
      console.warn('[DoomLoop] onDetected threw; ignored:', error);
    }
  }

  /** One call as the core reads it: lowered JSON text, or `{ text, strings }` when its arguments carry long strings raw. */
  #lowerCall(call) {
    const name = String(call.toolName);
    const callId = String(call.id ?? '');
    const id = JSON.stringify(callId);
    let malformed = call.malformed === true;
    let args = call.args;
    if (typeof args === 'string' && call.malformed === undefined) {
      // Raw argument text: parsed as a tool loop would.
      const trimmed = args.trim();
      if (trimmed === '') args = {};
      else {
        try {
          args = JSON.parse(trimmed);
        } catch {
          malformed = true;
        }
      }
    }
    if (!malformed && args === undefined) args = {};
    let key = '';
    const declaration = Object.hasOwn(this.#loopKeys, name) ? this.#loopKeys[name] : undefined;
    if (!malformed && typeof declaration === 'function') {
      let resolution;
      try {
        resolution = resolveLoopKeyWith(this.#glue, declaration, args);
      } catch (error) {
        console.warn(`[DoomLoop] the loop identity of a "${name}" call could not be resolved; not monitoring it:`, error);
        resolution = { kind: 'exempt' };
      }
      if (resolution.kind === 'exempt') key = ',"key":"exempt"';
      else {
        if (resolution.kind === 'fallback') console.warn(`[DoomLoop] ${name}: ${resolution.warning}`);
        try {
          key = `,"key":{"material":${lowerKeyMaterial(resolution.keyMaterial)}}`;
        } catch (error) {
          console.warn(`[DoomLoop] a "${name}" call cannot be fingerprinted; not monitoring it:`, error);
          key = ',"key":"exempt"';
        }
      }
    }
    const head = `{"id":${id},"toolName":${JSON.stringify(name)},"malformed":${malformed}`;
    // Keyed by its full arguments, small and plain: fingerprinted here as
    // fingerprintToolCallSync takes them (canonical JSON written in JS,
    // hashed by the host), and the core handed the fingerprint — it then
    // neither canonicalizes nor hashes them (`FastRead` reads the key).
    const fingerprint =
      key === '' && !malformed && !this.#dataKeyed.has(name) ? fingerprintWithoutCore(name, args) : undefined;
    if (fingerprint !== undefined) {
      // The fingerprint kept: a compact answer's decision carries the same one (readCompact).
      return { io: `${head},"key":{"fingerprint":"${fingerprint}"},"args":null}`, id: callId, toolName: name, fingerprint };
    }
    let lowered;
    try {
      // Long strings (an edit's file) cross raw, as on the monitor's path.
      lowered = malformed ? JSON.stringify(String(args)) : lowerKeyMaterialForIo(args);
    } catch (error) {
      console.warn(`[DoomLoop] a "${name}" call cannot be fingerprinted; not monitoring it:`, error);
      lowered = 'null';
      key = ',"key":"exempt"';
    }
    // The arguments last: the core fingerprints a call with no key straight
    // from their text as it reads them, never building them as a tree
    // (`FastRead` in wasm/src/session.rs). The id and tool name as the core
    // reads them back: a compact answer's decisions carry neither (readCompact).
    const text = (argsText) => `${head}${key},"args":${argsText}}`;
    return { io: wrapIoText(lowered, text), id: callId, toolName: name, fingerprint: undefined };
  }

  /**
   * Lowered calls as the core reads them; their raw strings appended to
   * `strings`, in order, and each call's lowering to `lowered` when given.
   */
  #lowerCalls(calls, strings, lowered) {
    const texts = (Array.isArray(calls) ? calls : []).map((call) => {
      const one = this.#lowerOnce(call);
      lowered?.push(one);
      return textOf(one.io, strings);
    });
    return `[${texts.join(',')}]`;
  }

  #lowerOnce(call) {
    if (typeof call !== 'object' || call === null) return this.#lowerCall(call ?? {});
    let lowered = this.#lowered.get(call);
    if (lowered === undefined) {
      lowered = this.#lowerCall(call);
      this.#lowered.set(call, lowered);
    }
    return lowered;
  }

  /**
   * A model response: its text is checked, its calls recorded as one round.
   * @returns {{round: number, textVerdict: object|null, decisions: object[], halt: {verdict: object, message: string}|null}}
   */
  onResponse(response = {}) {
    const calls = Array.isArray(response?.calls) ? response.calls : [];
    const neutral = () => ({ round: 0, textVerdict: null, decisions: calls.map(runDecision), halt: null });
    if (!this.#live()) return neutral();
    return this.#guard(() => {
      // A long text crosses raw as well (it comes first in the document,
      // so its string comes first).
      const strings = [];
      const loweredCalls = [];
      const text = typeof response?.text === 'string' ? textOf(lowerKeyMaterialForIo(response.text), strings) : 'null';
      const lowered = `{"text":${text},"calls":${this.#lowerCalls(calls, strings, loweredCalls)}}`;
      const answer = this.#inner.onResponse(...writeLowered(lowered, strings));
      if (answer === 0) {
        // Compact: every call runs, no verdict, no warning (wasm/src/session.rs).
        const { round, decisions } = readCompact(loweredCalls);
        return { round, textVerdict: null, decisions, halt: null };
      }
      const outcome = parseAnswer(readText(answer));
      for (const verdict of outcome.verdicts) this.#detected(verdict);
      return {
        round: outcome.round,
        textVerdict: outcome.textVerdict,
        decisions: outcome.decisions,
        halt: outcome.halt === null ? null : { verdict: outcome.halt, message: outcome.halt.message },
      };
    }, neutral);
  }

  /** One call seen alone (e.g. a per-call hook), recorded into the current round. */
  onCall(call) {
    if (!this.#live()) return runDecision(call);
    return this.#guard(() => {
      const strings = [];
      const lowered = this.#lowerOnce(call);
      const text = textOf(lowered.io, strings);
      const answer = this.#inner.onCall(...writeLowered(text, strings));
      // Compact: the call runs, no verdict, no warning (wasm/src/session.rs).
      if (answer === 0) return readCompact([lowered]).decisions[0];
      const decision = parseAnswer(readText(answer));
      if (!decision.duplicateInRound) this.#detected(decision.verdict);
      return decision;
    }, () => runDecision(call));
  }

  /** Opens a new, empty round now (calls that arrive one by one; server tools). */
  beginRound() {
    if (this.#live()) this.#guard(() => this.#inner.beginRound(), undefined);
  }

  /** The run is halted: every call of this round is refused with the halt text (no-op when not halted). */
  sealRound() {
    if (this.#live()) this.#guard(() => this.#inner.sealRound(), undefined);
  }

  /** Closes the current round (the next `onCall` opens a new one). */
  endRound() {
    if (this.#live()) this.#guard(() => this.#inner.endRound(), undefined);
  }

  /** A response's text alone; its verdict or null. */
  onText(text) {
    if (!this.#live() || typeof text !== 'string') return null;
    return this.#guard(() => {
      // As the monitor's recordAssistantText: the text itself, unless a
      // lone surrogate needs its JSON literal.
      const verdict = parseAnswer(this.#inner.onText(...textArg(text)));
      this.#detected(verdict);
      return verdict;
    }, null);
  }

  /** A server tool's record (never refused); its verdict or null. */
  onServerTool(toolName, identity) {
    if (!this.#live()) return null;
    return this.#guard(() => {
      const verdict = parseAnswer(this.#inner.onServerTool(JSON.stringify(String(toolName)), lower(identity)));
      this.#detected(verdict);
      return verdict;
    }, null);
  }

  /**
   * A call's result: `result` is what the tool returned (its identity is the
   * tool's loopOutputKey of it), or pass `{ error }` when the tool threw.
   * `failed` defaults to "threw, or returned an object with an `error`". An
   * async loopOutputKey is awaited: the result is recorded when it settles
   * and a Promise of the verdict is returned. A second result for the same
   * call is ignored.
   */
  onResult(id, result, { failed, error, toolName } = {}) {
    if (!this.#live()) return null;
    return this.#guard(() => {
      const callId = String(id);
      const name = toolName === undefined ? this.#pendingTool(callId) : String(toolName);
      if (name === null) return null;
      const threw = error !== undefined;
      let isFailure = failed === undefined ? threw : Boolean(failed);
      const record = (outcome) =>
        this.#guard(() => {
          let lowered;
          try {
            lowered = outcome === undefined || !this.#readsOutcomes ? 'undefined' : lower(outcome);
          } catch (lowerError) {
            console.warn(`[DoomLoop] the result of a "${name}" call cannot be read; recording it without an outcome:`, lowerError);
            lowered = 'undefined';
          }
          const verdict = parseAnswer(this.#inner.onResult(JSON.stringify(callId), lowered, isFailure));
          this.#detected(verdict);
          return verdict;
        }, null);
      if (threw) {
        return record(this.#outputKeyFor(name) === false ? undefined : { error: sessionErrorText(error) });
      }
      let outcome;
      let thenable;
      try {
        // The caller's live value: any read of it may throw (a getter, a revoked Proxy).
        if (failed === undefined) isFailure = sessionIsToolError(result);
        outcome = this.#outcome(name, result);
        thenable = isThenable(outcome);
      } catch (readError) {
        // That costs this result's outcome only; detection goes on.
        console.warn(`[DoomLoop] the result of a "${name}" call cannot be read; recording it without an outcome:`, readError);
        return record(undefined);
      }
      if (thenable) {
        return Promise.resolve(outcome).then(record, (keyError) => {
          console.warn(`[DoomLoop] the loopOutputKey of "${name}" rejected; using the whole result:`, keyError);
          return record(result);
        });
      }
      return record(outcome);
    }, null);
  }

  #pendingTool(id) {
    const name = this.#inner.pendingTool(JSON.stringify(id));
    return name === undefined ? null : JSON.parse(name);
  }

  #outputKeyFor(name) {
    return Object.hasOwn(this.#loopOutputKeys, name) ? this.#loopOutputKeys[name] : undefined;
  }

  /** A result's identity from the tool's loopOutputKey (a Promise for an async one); undefined: none. */
  #outcome(name, result) {
    const declaration = this.#outputKeyFor(name);
    if (declaration === false) return undefined;
    if (declaration === undefined) return result;
    const settle = (resolution) => {
      if (resolution.kind === 'exempt') return undefined;
      if (resolution.kind === 'fallback') {
        const warning = String(resolution.warning).replace(/^loopKey/, 'loopOutputKey').replaceAll('full arguments', 'the whole result');
        console.warn(`[DoomLoop] ${name}: ${warning}`);
      }
      return resolution.keyMaterial;
    };
    try {
      if (typeof declaration === 'function') {
        let value;
        try {
          value = declaration(result);
        } catch (thrown) {
          // The reference's fallback and its warning for a throwing key function.
          return settle(resolveLoopKeyWith(this.#glue, () => { throw thrown; }, result));
        }
        if (isThenable(value)) {
          return Promise.resolve(value).then((settled) => settle(resolveLoopKeyWith(this.#glue, () => settled, result)));
        }
        return settle(resolveLoopKeyWith(this.#glue, () => value, result));
      }
      return settle(resolveLoopKeyWith(this.#glue, declaration, result));
    } catch (keyError) {
      console.warn(`[DoomLoop] the loopOutputKey of "${name}" could not be applied; using the whole result:`, keyError);
      return result;
    }
  }

  /** One model response's spend (tokens or cost), for the opt-in budget guard. */
  onSpend(amount) {
    if (!this.#live()) return null;
    return this.#guard(() => {
      const verdict = parseAnswer(this.#inner.onSpend(Number(amount)));
      this.#detected(verdict);
      return verdict;
    }, null);
  }

  /** A new user message: lifts a halt (evidence kept), restarts the text streak. */
  onUserTurn() {
    if (this.#live()) this.#guard(() => this.#inner.onUserTurn(), undefined);
  }

  /**
   * Resumes a persisted state in place (for hosts that load it after the
   * session is built); fails open like the constructor's `state`.
   */
  restore(state) {
    if (!this.#live()) return;
    this.#guard(() => {
      let lowered;
      try {
        lowered = lower(state);
      } catch (error) {
        console.warn('[DoomLoop] the persisted state could not be read; keeping the current one:', error);
        return;
      }
      parseAnswer(this.#inner.resume(lowered));
    }, undefined);
  }

  /** What the model reads for a call not executed because the run is halted; null when it is not. */
  haltText() {
    if (!this.#live()) return null;
    return this.#guard(() => JSON.parse(this.#inner.haltText()), null);
  }

  /** Re-arms the restored state's halt (a resume that only answers approvals). */
  resumeHalt() {
    if (this.#live()) this.#guard(() => this.#inner.resumeHalt(), undefined);
  }

  /** Would these calls, as the next round, halt the run? The session is unchanged. */
  wouldHalt(calls) {
    if (!this.#live()) return false;
    return this.#guard(() => {
      const strings = [];
      const callsText = this.#lowerCalls(calls, strings);
      return this.#inner.wouldHalt(...writeLowered(callsText, strings));
    }, false);
  }

  /** The queued steer guidance (joined by newlines), consumed; null when none. */
  takeGuidance() {
    if (!this.#live()) return null;
    return this.#guard(() => JSON.parse(this.#inner.takeGuidance()), null);
  }

  /** Takes a pending escalation: true when the next request must run on the escalation model. */
  takeEscalation(apply = true) {
    if (!this.#live()) return false;
    return this.#guard(() => this.#inner.takeEscalation(Boolean(apply)), false);
  }

  /** What the next request carries, consumed once: `{ guidance, model }`. */
  nextRequest() {
    if (!this.#live()) return { guidance: null, model: null };
    return this.#guard(() => {
      const patch = JSON.parse(this.#inner.nextRequest());
      return { guidance: patch.guidance, model: patch.escalate ? (this.#config.escalation?.model ?? null) : null };
    }, { guidance: null, model: null });
  }

  /** The decision for a call of the current round, by id; null when unknown. */
  decision(id) {
    if (!this.#live()) return null;
    return this.#guard(() => JSON.parse(this.#inner.decision(JSON.stringify(String(id)))), null);
  }

  /** The verdict that halted the run; null otherwise. */
  haltVerdict() {
    if (!this.#live()) return null;
    return this.#guard(() => JSON.parse(this.#inner.halt()), null);
  }

  /** Every verdict so far, in order. */
  verdicts() {
    if (!this.#live()) return [];
    return this.#guard(() => JSON.parse(this.#inner.verdicts()), []);
  }

  /** The state to persist (plain JSON); `new DoomLoopSession({ state })` resumes it. */
  getState() {
    if (this.#inner === null) return { tools: {} };
    return this.#guard(() => JSON.parse(this.#inner.getState()), { tools: {} });
  }

  /** Releases the session's wasm memory now (idempotent). */
  free() {
    const inner = this.#inner;
    this.#inner = null;
    if (inner !== null) {
      try {
        inner.free();
      } catch {
        // A trapped instance: its memory is gone with it.
      }
    }
  }
}

if (typeof Symbol.dispose === 'symbol') {
  Object.defineProperty(DoomLoopSession.prototype, Symbol.dispose, {
    value: function dispose() {
      this.free();
    },
    writable: true,
    configurable: true,
  });
}
