// Mastra adapter (`@mastra/core` 1.x): doom-loop detection for a Mastra
// Agent's `generate` / `stream`, as thin glue over the session engine
// (DoomLoopSession). No SDK is imported: the adapter returns execution
// options for the caller to pass.
//
// How a run maps onto the engine:
// * A round is one model response: an output processor's `processOutputStep`
//   (after each LLM response, before tool execution) hands the response's
//   tool calls to the engine; identical calls in it count once.
// * refuse: the run's `hooks.beforeToolCall` answers a refused call with
//   `{ proceed: false, output: <the verdict text> }`; `afterToolCall` feeds
//   each executed call's result (or error, failed) to the engine.
// * stop: a `stopWhen` condition, true once the engine halts.
// * steer: `prepareStep` adds the guidance as a system message for the next
//   step only; escalate: `prepareStep` returns the escalation model.
// * State: `getState()` is plain JSON; `createDoomLoop({ state })` resumes it.

import { DoomLoopSession } from 'doom-loop-wasm';

/** The `@mastra/core` versions this adapter is tested against. */
export const SUPPORTED_MASTRA_VERSIONS = '1.71.x (1.x with output processors\' processOutputStep and run-level tool hooks)';

const isRecord = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);
const asArray = (value) => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

function versionError(what) {
  return new Error(
    `doom-loop-wasm/mastra supports @mastra/core ${SUPPORTED_MASTRA_VERSIONS}; this Mastra ${what}. ` +
      'Install a supported version of @mastra/core, or use the detector directly (DoomLoopSession).',
  );
}

class MastraDoomLoop {
  #session;
  #options;
  #warned = false;
  #runs = 0;
  #halted = null;
  #roundsSeen = 0;
  #injected = new Set();

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

  #guarded(fn, fallback) {
    if (this.#warned) return fallback;
    try {
      return fn();
    } catch (error) {
      this.#warned = true;
      console.warn('[DoomLoop] internal error in the Mastra adapter; detection is off for the rest of this run, which continues:', error);
      return fallback;
    }
  }

  /** The output processor that declares each response's calls as one round. */
  get processor() {
    return {
      id: 'doom-loop',
      name: 'doom-loop',
      processOutputStep: (args) => {
        this.#roundsSeen++;
        const calls = asArray(args?.toolCalls).map((c) => ({ id: c.toolCallId, toolName: c.toolName, args: c.args ?? {} }));
        const text = typeof args?.text === 'string' && args.text !== '' ? args.text : undefined;
        this.#guarded(() => {
          const out = this.#session.onResponse({ text, calls });
          if (out?.halt) this.#halted = out.halt.verdict ?? out.halt;
        });
        return args?.messageList ?? args?.messages;
      },
    };
  }

  /** Run-level tool hooks: refuse by decision, feed results. */
  hooks(userHooks) {
    const user = isRecord(userHooks) ? userHooks : {};
    return {
      ...user,
      beforeToolCall: async (context) => {
        const id = context?.context?.toolCallId;
        const decision = this.#guarded(() => {
          const d = typeof id === 'string' ? this.#session.decision(id) : null;
          if (d) return d;
          // Not declared by processOutputStep: recorded alone, into the current round.
          const lone = this.#session.onCall({ id: id ?? `call-${context?.toolName}`, toolName: context?.toolName, args: context?.input ?? {} });
          const halt = this.#session.haltVerdict();
          if (halt) this.#halted = halt;
          return lone;
        });
        if (decision?.action === 'refuse') return { proceed: false, output: decision.message };
        return typeof user.beforeToolCall === 'function' ? user.beforeToolCall(context) : undefined;
      },
      afterToolCall: async (context) => {
        const id = context?.context?.toolCallId;
        const threw = context?.error !== undefined;
        this.#guarded(() =>
          this.#session.onResult(id, threw ? undefined : context?.output, threw ? { error: context.error, failed: true, toolName: context?.toolName } : { toolName: context?.toolName }),
        );
        if (typeof user.afterToolCall === 'function') return user.afterToolCall(context);
      },
    };
  }

  #model(id) {
    const { models, resolveModel } = this.#options;
    if (isRecord(models) && Object.hasOwn(models, id) && models[id] !== undefined) return models[id];
    if (typeof resolveModel === 'function') return resolveModel(id);
    return id;
  }

  /** The run's `prepareStep`: a new run is a new user turn; steer / escalate for one step. */
  prepareStep(userPrepareStep) {
    return async (args) => {
      if (!isRecord(args) || typeof args.stepNumber !== 'number' || !Array.isArray(args.systemMessages)) {
        throw versionError('calls prepareStep without stepNumber / systemMessages');
      }
      const user = typeof userPrepareStep === 'function' ? await userPrepareStep(args) : undefined;
      const result = isRecord(user) ? { ...user } : {};
      if (args.stepNumber === 0) {
        if (this.#runs++ > 0 || this.#options.state !== undefined) this.#guarded(() => this.#session.onUserTurn());
        this.#halted = null;
        this.#roundsSeen = 0;
      }
      const patch = this.#guarded(() => this.#session.nextRequest(), null);
      if (patch?.model) result.model = this.#model(patch.model);
      const base = (result.systemMessages ?? args.systemMessages).filter((m) => !this.#injected.has(m?.content));
      if (patch?.guidance) {
        this.#injected.add(patch.guidance);
        result.systemMessages = [...base, { role: 'system', content: patch.guidance }];
      } else if (base.length !== (result.systemMessages ?? args.systemMessages).length) {
        result.systemMessages = base;
      }
      return Object.keys(result).length > 0 ? result : undefined;
    };
  }

  /** The run's `stopWhen`: the caller's conditions plus "the engine halted". */
  stopWhen(userStopWhen) {
    return [
      ...asArray(userStopWhen),
      ({ steps } = {}) => {
        const calledTools = asArray(steps).some((s) => asArray(s?.toolCalls).length > 0);
        if (calledTools && this.#roundsSeen === 0 && !this.#warned) {
          throw versionError('ran tool calls without calling the output processor\'s processOutputStep');
        }
        return this.#halted !== null;
      },
    ];
  }

  /**
   * Execution options for `agent.generate(input, options)` / `agent.stream(…)`:
   * the detector's output processor appended to `outputProcessors`, and
   * `hooks`, `prepareStep`, `stopWhen` wrapped (the caller's kept).
   */
  options(executionOptions = {}) {
    const options = isRecord(executionOptions) ? executionOptions : {};
    return {
      ...options,
      outputProcessors: [...asArray(options.outputProcessors), this.processor],
      hooks: this.hooks(options.hooks),
      prepareStep: this.prepareStep(options.prepareStep),
      stopWhen: this.stopWhen(options.stopWhen),
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
 * Creates the detector for one conversation of a Mastra Agent: pass
 * `guard.options({...})` as the execution options of each `generate` / `stream`.
 *
 * @param {object} [options]
 * @returns {MastraDoomLoop}
 */
export function createDoomLoop(options) {
  return new MastraDoomLoop(options);
}

export { MastraDoomLoop };
