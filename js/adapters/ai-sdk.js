// Vercel AI SDK adapter (`ai` 6.x and 7.x): doom-loop detection for
// generateText, streamText and ToolLoopAgent, as thin glue over the session
// engine (DoomLoopSession). No SDK is imported: the adapter only rewrites the
// options object the caller hands to the SDK.
//
// How a run maps onto the engine:
// * A round is one model response. `prepareStep` hands every step's model to
//   the adapter, which wraps it (a Proxy: `doGenerate`/`doStream` pass
//   through) and reads the response's tool calls before the SDK runs any of
//   them — the whole response is one round, identical calls in it count once.
//   Streamed tool-call parts are held until the response's `finish` part, so
//   no call runs before its round is declared.
// * refuse: every tool's `execute` is wrapped; a refused call does not run
//   and its result is the verdict text the model reads.
// * stop: a `stopWhen` condition, true once the engine halts; the halted
//   response's calls are refused, no further request is made.
// * steer: the next step's `system` (`instructions` in 7.x) carries the
//   guidance, for that step only. escalate: the next step's model is the
//   escalation model (`models[id]`, `resolveModel(id)`, or the id itself).
// * Results: each executed call's return value (or thrown error, as
//   `{ error: message }`, failed) goes to the engine (outcome-aware streaks).
// * State: `getState()` is plain JSON; `createDoomLoop({ state })` resumes it.

import { DoomLoopSession } from 'doom-loop-wasm';

/** The `ai` majors this adapter is tested against. */
export const SUPPORTED_AI_SDK_VERSIONS = '6.x, 7.x';
const SUPPORTED_MAJORS = new Set([6, 7]);
/** The language model specification each supported `ai` major resolves models to. */
const SPEC_MAJORS = Object.freeze({ __proto__: null, v3: 6, v4: 7 });
const WRAPPED = Symbol.for('doom-loop-wasm/ai-sdk/wrapped-model');

const isRecord = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The `ai` major a model call was made by, from the SDK's user-agent suffix (`ai/6.0.1`). */
function aiMajor(headers) {
  if (!isRecord(headers)) return undefined;
  const agent = headers['user-agent'] ?? headers['User-Agent'];
  const match = typeof agent === 'string' ? /(?:^|\s)ai\/(\d+)\./.exec(agent) : null;
  return match ? Number(match[1]) : undefined;
}

/** Appends guidance to a system prompt of any of the SDK's shapes. */
function withGuidance(base, guidance) {
  if (base === undefined || base === null || base === '') return guidance;
  if (typeof base === 'string') return `${base}\n\n${guidance}`;
  const extra = { role: 'system', content: guidance };
  return Array.isArray(base) ? [...base, extra] : [base, extra];
}

/**
 * One detector session for one conversation: wrap every generateText /
 * streamText call (or ToolLoopAgent) of that conversation with it.
 */
class AiSdkDoomLoop {
  #session = null;
  #options;
  #warned = false;
  #versionChecked = false;
  #runs = 0;
  #halted = null;
  #steered = false;
  #wrappers = new WeakMap();

  constructor(options = {}) {
    this.#options = isRecord(options) ? options : {};
    const { doomLoop, loopKeys, loopOutputKeys, loopEffects, state, onDetected } = this.#options;
    this.#session = new DoomLoopSession({
      doomLoop: doomLoop === undefined ? true : doomLoop,
      loopKeys,
      loopOutputKeys,
      loopEffects,
      state,
      onDetected,
      capabilities: { refuse: true, stop: true, steer: true, escalate: true },
    });
  }

  /** Detection never fails a run: a glue error makes this guard observe-only, with one warning. */
  #guarded(fn, fallback) {
    if (this.#warned) return fallback;
    try {
      return fn();
    } catch (error) {
      this.#warned = true;
      console.warn('[DoomLoop] internal error in the AI SDK adapter; detection is off for the rest of this run, which continues:', error);
      return fallback;
    }
  }

  /** The SDK resolves every step's model to its own specification: v3 in ai 6, v4 in ai 7. */
  #checkSpecification(model) {
    if (this.#versionChecked || !isRecord(model)) return;
    const spec = model.specificationVersion;
    if (typeof spec !== 'string' || SPEC_MAJORS[spec] !== undefined) return;
    this.#versionChecked = true;
    const found = spec === 'v2' ? 'ai 5.x (language model specification v2)' : `an ai whose language models are specification ${spec}`;
    throw new Error(
      `doom-loop-wasm/ai-sdk supports the AI SDK (\`ai\`) ${SUPPORTED_AI_SDK_VERSIONS}; this run uses ${found}. ` +
        'Install a supported version of `ai`, or use the detector directly (DoomLoopSession).',
    );
  }

  #checkVersion(callOptions) {
    if (this.#versionChecked) return;
    const major = aiMajor(callOptions?.headers);
    if (major === undefined) return; // not called by generateText/streamText (e.g. a test harness)
    this.#versionChecked = true;
    if (!SUPPORTED_MAJORS.has(major)) {
      throw new Error(
        `doom-loop-wasm/ai-sdk supports the AI SDK (\`ai\`) ${SUPPORTED_AI_SDK_VERSIONS}; this run uses ai ${major}.x. ` +
          'Install a supported version of `ai`, or use the detector directly (DoomLoopSession).',
      );
    }
  }

  /** A model response: its calls are one round; returns nothing (decisions are read per call). */
  #onResponse(text, calls) {
    this.#guarded(() => {
      const out = this.#session.onResponse({ text: text === '' ? undefined : text, calls });
      if (out?.halt) this.#halted = out.halt.verdict ?? out.halt;
    });
  }

  #onContent(content) {
    let text = '';
    const calls = [];
    for (const part of Array.isArray(content) ? content : []) {
      if (part?.type === 'text' && typeof part.text === 'string') text += part.text;
      else if (part?.type === 'tool-call' && !part.providerExecuted) {
        // The raw argument text: the engine parses it (malformed text is the call's identity).
        calls.push({ id: part.toolCallId, toolName: part.toolName, args: part.input });
      }
    }
    this.#onResponse(text, calls);
  }

  /** Wraps a language model so each response is seen before its tools run (one wrapper per model). */
  wrapModel(model) {
    if (!isRecord(model) || model[WRAPPED] || typeof model.doGenerate !== 'function') return model;
    const cached = this.#wrappers.get(model);
    if (cached) return cached;
    const guard = this;
    const bound = new Map();
    const doGenerate = async (callOptions) => {
      guard.#checkVersion(callOptions);
      const result = await model.doGenerate(callOptions);
      guard.#onContent(result?.content);
      return result;
    };
    const doStream = async (callOptions) => {
      guard.#checkVersion(callOptions);
      const result = await model.doStream(callOptions);
      return { ...result, stream: result.stream.pipeThrough(guard.#roundStream()) };
    };
    const proxy = new Proxy(model, {
      get(target, prop) {
        if (prop === WRAPPED) return true;
        if (prop === 'doGenerate') return doGenerate;
        if (prop === 'doStream') return doStream;
        const value = Reflect.get(target, prop, target);
        if (typeof value !== 'function') return value;
        let fn = bound.get(prop);
        if (fn === undefined || fn.original !== value) {
          fn = Object.assign(value.bind(target), { original: value });
          bound.set(prop, fn);
        }
        return fn;
      },
    });
    this.#wrappers.set(model, proxy);
    return proxy;
  }

  /** Holds a streamed response's tool-call parts until it finishes, then declares the round. */
  #roundStream() {
    let text = '';
    let held = [];
    let declared = false;
    const declare = (controller) => {
      if (declared) return;
      declared = true;
      this.#onContent([{ type: 'text', text }, ...held]);
      for (const part of held) controller.enqueue(part);
      held = [];
    };
    return new TransformStream({
      transform: (part, controller) => {
        if (part?.type === 'tool-call' && !part.providerExecuted) {
          held.push(part);
          return;
        }
        if (part?.type === 'text-delta') text += part.delta ?? part.textDelta ?? '';
        if (part?.type === 'finish') declare(controller);
        controller.enqueue(part);
      },
      flush: (controller) => declare(controller),
    });
  }

  #decide(toolName, input, toolCallId) {
    return this.#guarded(() => {
      const decision = typeof toolCallId === 'string' ? this.#session.decision(toolCallId) : null;
      if (decision) return decision;
      // The response was not seen (a model the adapter could not wrap): the call is
      // recorded alone, into the current round.
      const lone = this.#session.onCall({ id: toolCallId ?? `call-${toolName}`, toolName, args: input ?? {} });
      const halt = this.#session.haltVerdict();
      if (halt) this.#halted = halt;
      return lone;
    });
  }

  /** Wraps every tool's `execute`: refused calls return the verdict text, results feed the engine. */
  wrapTools(tools) {
    if (!isRecord(tools)) return tools;
    // Each tool an own property (defineProperty, never `out[name] = …`: a
    // tool named `__proto__` would set the copy's prototype instead).
    const out = {};
    const put = (name, value) => Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
    for (const [name, tool] of Object.entries(tools)) {
      if (!isRecord(tool) || typeof tool.execute !== 'function') {
        put(name, tool);
        continue;
      }
      const execute = tool.execute;
      put(name, {
        ...tool,
        execute: async (input, options) => {
          const id = options?.toolCallId;
          const decision = this.#decide(name, input, id);
          if (decision?.action === 'refuse') return decision.message;
          let result;
          try {
            result = await execute.call(tool, input, options);
          } catch (error) {
            this.#guarded(() => this.#session.onResult(id, undefined, { error, failed: true, toolName: name }));
            throw error;
          }
          this.#guarded(() => this.#session.onResult(id, result, { toolName: name }));
          return result;
        },
      });
    }
    return out;
  }

  #model(id) {
    const { models, resolveModel } = this.#options;
    if (isRecord(models) && Object.hasOwn(models, id) && models[id] !== undefined) return models[id];
    if (typeof resolveModel === 'function') return resolveModel(id);
    return id;
  }

  /** The `prepareStep` that wraps the step's model and applies steer / escalate. */
  prepareStep(userPrepareStep, baseSystem) {
    return async (args) => {
      this.#checkSpecification(args?.model);
      const user = typeof userPrepareStep === 'function' ? await userPrepareStep(args) : undefined;
      const result = isRecord(user) ? { ...user } : {};
      if (args?.stepNumber === 0) {
        // A new run is a new user turn (a halt is lifted, the evidence kept) —
        // except the first run of a fresh session.
        if (this.#runs++ > 0 || this.#options.state !== undefined) this.#guarded(() => this.#session.onUserTurn());
        this.#halted = null;
      }
      const patch = this.#guarded(() => this.#session.nextRequest(), null);
      if (patch?.model) result.model = this.#model(patch.model);
      // 7.x keeps a step's instructions for the steps after it; 6.x reads `system` per step.
      const v7 = isRecord(args) && 'initialInstructions' in args;
      const key = v7 ? 'instructions' : 'system';
      const base = result.instructions ?? result.system ?? (v7 ? args.initialInstructions : baseSystem);
      if (patch?.guidance) {
        result[key] = withGuidance(base, patch.guidance);
        this.#steered = true;
      } else if (this.#steered && v7) {
        result[key] = base;
        this.#steered = false;
      }
      result.model = this.wrapModel(result.model ?? args?.model);
      return result;
    };
  }

  /** The `stopWhen` conditions: the caller's, plus "the engine halted". */
  stopWhen(userStopWhen, defaultStop) {
    const user = userStopWhen === undefined ? [defaultStop] : Array.isArray(userStopWhen) ? userStopWhen : [userStopWhen];
    return [...user, () => this.#halted !== null];
  }

  /**
   * Options for `generateText` / `streamText`: `tools`, `prepareStep` and
   * `stopWhen` wrapped; everything else as given. Without `stopWhen`, the
   * SDK's default (one step) is kept.
   *
   * @template {object} T
   * @param {T} callOptions
   * @returns {T}
   */
  wrap(callOptions) {
    return this.#wrap(callOptions, 1);
  }

  /** Settings for `new ToolLoopAgent(…)` (the agent's default: 20 steps). */
  wrapAgent(settings) {
    return this.#wrap(settings, 20);
  }

  #wrap(options, defaultSteps) {
    if (!isRecord(options)) throw new TypeError('doom-loop-wasm/ai-sdk: wrap(options) takes the options object of generateText / streamText / ToolLoopAgent');
    return {
      ...options,
      tools: this.wrapTools(options.tools),
      prepareStep: this.prepareStep(options.prepareStep, options.system ?? options.instructions),
      stopWhen: this.stopWhen(options.stopWhen, ({ steps }) => steps.length >= defaultSteps),
    };
  }

  /** The verdict that halted the current run, or `null`. */
  haltVerdict() {
    return this.#halted ?? this.#guarded(() => this.#session.haltVerdict(), null) ?? null;
  }

  /** Every verdict so far, in order. */
  verdicts() {
    return this.#guarded(() => this.#session.verdicts(), []) ?? [];
  }

  /** The detector state, plain JSON: persist it and pass it back as `createDoomLoop({ state })`. */
  getState() {
    return this.#guarded(() => this.#session.getState(), undefined);
  }

  /** The underlying engine session. */
  get session() {
    return this.#session;
  }
}

/**
 * Creates the detector for one conversation. Wrap each `generateText` /
 * `streamText` call with `.wrap(options)`, or a `ToolLoopAgent`'s settings
 * with `.wrapAgent(settings)`.
 *
 * @param {object} [options]
 * @returns {AiSdkDoomLoop}
 */
export function createDoomLoop(options) {
  return new AiSdkDoomLoop(options);
}

export { AiSdkDoomLoop };
