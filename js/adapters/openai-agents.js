// OpenAI Agents SDK adapter: doom-loop detection for an `Agent` of
// `@openai/agents`, wired through the SDK's own extension points only.
//
// Thin glue over DoomLoopSession (the one session engine); no SDK import at
// run time — `withDoomLoop(agent)` returns `agent.clone({...})` with:
// * a tool input guardrail on every function tool: each call is recorded into
//   the open round (`onCall`; a duplicate of a call already in the round
//   counts once); a refused call is answered `rejectContent` with the verdict
//   text (the tool does not run; the model reads the text as its output);
// * a tool output guardrail: the call's output feeds the outcome-aware
//   streaks (`onResult`);
// * `instructions` as a function: before each model request the open round
//   is closed (`endRound`), the state is written to the run context, and
//   queued guidance (steer) is appended to the instructions of that request;
// * `toolUseBehavior`: after a round whose calls armed a stop verdict, the
//   run ends with the verdict text as its final output (otherwise the
//   agent's own behaviour decides);
// * the `agent_start` event: a new run is a new user turn (`onUserTurn`).
// Escalate is not available (nothing in a run swaps the model of one
// request): an option that asks for it warns, as the reference warns about
// dead rungs. State: the session's JSON is kept in the run context as
// `context.doomLoop`, so `result.state.toString()` (RunState) carries it and
// `RunState.fromString(agent, text)` resumes the streaks.

import { DoomLoopSession } from 'doom-loop-wasm';

/** The versions this adapter is written and tested for. */
export const SUPPORTED_VERSIONS = Object.freeze({ '@openai/agents': '>=0.20.0 <0.21.0', runStateSchema: ['1.22'], tested: '0.20.0' });

/** Thrown when the agent or a RunState does not have the shapes of a supported `@openai/agents`. */
export class UnsupportedOpenAIAgentsVersionError extends Error {
  /** @param {string} what what was found instead */
  constructor(what) {
    super(`doom-loop-wasm/openai-agents supports @openai/agents ${SUPPORTED_VERSIONS['@openai/agents']} (RunState schema ${SUPPORTED_VERSIONS.runStateSchema.join(', ')}; tested with ${SUPPORTED_VERSIONS.tested}); found ${what}`);
    this.name = 'UnsupportedOpenAIAgentsVersionError';
  }
}

/**
 * Checks a serialized RunState (`result.state.toString()`) before resuming it:
 * throws {@link UnsupportedOpenAIAgentsVersionError} when its `$schemaVersion`
 * is not one this adapter is tested with.
 * @param {string} serialized the RunState text
 */
export function checkRunStateVersion(serialized) {
  let version;
  try {
    version = JSON.parse(serialized)?.$schemaVersion;
  } catch {
    version = undefined;
  }
  if (!SUPPORTED_VERSIONS.runStateSchema.includes(version)) throw new UnsupportedOpenAIAgentsVersionError(`a RunState of schema ${JSON.stringify(version ?? null)}`);
}

/**
 * @typedef {object} WithDoomLoopAgentOptions
 * @property {import('../index.js').DoomLoopOption} [doomLoop] `true` (default): the reference
 *   defaults; a config object (e.g. `RECOMMENDED_DOOM_LOOP_OPTION`); `false`: the agent as is.
 * @property {Record<string, unknown>} [loopKeys] Per-tool loop identity by tool name.
 * @property {Record<string, unknown>} [loopOutputKeys] Per-tool result identity by tool name.
 * @property {Record<string, unknown>} [loopEffects] Per-tool effect by tool name: `'write'` or `'read'`.
 * @property {(verdict: import('../index.js').DoomLoopVerdict) => void} [onDetected] Called for every verdict.
 */

const isRecord = (v) => v != null && typeof v === 'object' && !Array.isArray(v);
const allow = { behavior: { type: 'allow' } };
const NOT_FINAL = { isFinalOutput: false, isInterrupted: undefined };
const smartString = (v) => (typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v));

/**
 * Returns a clone of `agent` with doom-loop detection: a repeated call is refused (its
 * tool does not run; the model reads the verdict), a stop verdict ends the run with the
 * verdict as final output, guidance (steer) goes into the next request's instructions.
 * The detector state rides in the run context as `context.doomLoop` (serialized with
 * the RunState). Pass a context object to `run()` (or none: one is created).
 *
 * @example
 * const guarded = withDoomLoop(agent, { doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
 * const result = await run(guarded, 'Look up invoice INV-2291', { context: {} });
 * @template {object} A
 * @param {A} agent an `Agent` of `@openai/agents`
 * @param {WithDoomLoopAgentOptions} [options]
 * @returns {A}
 */
export function withDoomLoop(agent, options = {}) {
  if (!agent || typeof agent.clone !== 'function' || !Array.isArray(agent.tools)) {
    throw new UnsupportedOpenAIAgentsVersionError('an agent without clone() and a tools array');
  }
  const { doomLoop = true, loopKeys, loopOutputKeys, loopEffects, onDetected } = options;
  if (doomLoop === false) return agent.clone({});
  const sessions = new WeakMap(); // RunContext → live session
  const broken = new WeakSet();
  let warned = false;
  const fail = (ctx, err) => {
    if (ctx) broken.add(ctx);
    if (!warned) {
      warned = true;
      console.warn(`doom-loop-wasm/openai-agents: detection is off for this run after an internal error (the run continues): ${err?.message ?? err}`);
    }
  };
  const sessionFor = (ctx) => {
    let s = sessions.get(ctx);
    if (!s) {
      const saved = isRecord(ctx.context) ? ctx.context.doomLoop : undefined;
      s = new DoomLoopSession({ doomLoop, loopKeys, loopOutputKeys, loopEffects, onDetected, capabilities: { refuse: true, stop: true, steer: true, escalate: false }, ...(saved !== undefined && { state: saved }) });
      sessions.set(ctx, s);
    }
    return s;
  };
  const save = (ctx, s) => {
    if (ctx.context === undefined || ctx.context === null) ctx.context = {};
    if (isRecord(ctx.context)) ctx.context.doomLoop = s.getState();
  };
  const guard = (ctx, fallback, fn) => {
    if (!ctx || broken.has(ctx)) return fallback;
    try {
      return fn(sessionFor(ctx));
    } catch (err) {
      fail(ctx, err);
      return fallback;
    }
  };

  const inputGuardrail = {
    type: 'tool_input',
    name: 'doom_loop',
    run: async ({ context, toolCall }) => guard(context, allow, (s) => {
      const decision = s.onCall({ id: toolCall.callId, toolName: toolCall.name, args: toolCall.arguments ?? '' });
      const halt = s.haltVerdict();
      save(context, s); // a run that ends here (maxTurns, an error) keeps this call in its RunState
      if (halt) {
        return { behavior: { type: 'rejectContent', message: decision?.message ?? halt.message } };
      }
      if (decision?.action === 'refuse') return { behavior: { type: 'rejectContent', message: decision.message } };
      return allow;
    }),
  };
  const outputGuardrail = {
    type: 'tool_output',
    name: 'doom_loop',
    run: async ({ context, toolCall, output }) => guard(context, allow, (s) => {
      s.onResult(toolCall.callId, output);
      save(context, s);
      return allow;
    }),
  };

  const tools = agent.tools.map((t) => (t && t.type === 'function'
    ? { ...t, inputGuardrails: [...(t.inputGuardrails ?? []), inputGuardrail], outputGuardrails: [...(t.outputGuardrails ?? []), outputGuardrail] }
    : t));

  const baseInstructions = agent.instructions;
  const instructions = async (ctx, self) => {
    const base = typeof baseInstructions === 'function' ? await baseInstructions(ctx, self) : (baseInstructions ?? '');
    const guidance = guard(ctx, null, (s) => {
      s.endRound();
      save(ctx, s);
      return s.nextRequest().guidance;
    });
    return guidance ? (base ? `${base}\n\n${guidance}` : guidance) : base;
  };

  const baseBehavior = agent.toolUseBehavior ?? 'run_llm_again';
  const toolUseBehavior = async (ctx, results) => {
    const halt = guard(ctx, null, (s) => {
      s.endRound();
      const verdict = s.haltVerdict();
      if (verdict) save(ctx, s);
      return verdict;
    });
    if (halt) return { isFinalOutput: true, isInterrupted: undefined, finalOutput: halt.message };
    if (typeof baseBehavior === 'function') return baseBehavior(ctx, results);
    const outputs = results.filter((r) => r.type === 'function_output');
    if (baseBehavior === 'stop_on_first_tool') return outputs.length ? { isFinalOutput: true, isInterrupted: undefined, finalOutput: smartString(outputs[0].output) } : NOT_FINAL;
    if (isRecord(baseBehavior) && Array.isArray(baseBehavior.stopAtToolNames)) {
      const hit = outputs.find((r) => baseBehavior.stopAtToolNames.includes(r.tool?.name));
      return hit ? { isFinalOutput: true, isInterrupted: undefined, finalOutput: smartString(hit.output) } : NOT_FINAL;
    }
    return NOT_FINAL;
  };

  const clone = agent.clone({ tools, instructions, toolUseBehavior });
  if (typeof clone.on === 'function') {
    clone.on('agent_start', (ctx) => guard(ctx, undefined, (s) => s.onUserTurn()));
  }
  return clone;
}
