// LangChain.js v1 adapter: doom-loop detection as a `createAgent` middleware.
//
// Thin glue over DoomLoopSession (the one session engine): no detection logic
// here, and no LangChain import at run time — the middleware is the plain
// object `createMiddleware` would return (LangChain brands middleware with
// `Symbol.for('AgentMiddleware')`), and every message it adds is either
// built by LangChain itself or a plain message-like object that LangGraph's
// messages reducer turns into a message. Its state schema is a zod object
// (zod is what LangChain itself requires for state schemas).
//
// How a run maps onto the session:
// * `afterModel`: the model's tool calls are one round (`onResponse`); parallel
//   duplicates count once; `invalid_tool_calls` go in as malformed (their raw
//   argument text). A halt (`stop`) ends the run with `jumpTo: 'end'`: each
//   pending call gets an error ToolMessage with the verdict text and an AI
//   message carries it, so the thread stays well formed for the next turn.
// * `wrapToolCall`: a refused call is answered with the verdict text (a
//   ToolMessage with `status: 'error'`, the tool does not run); a call that
//   runs feeds its result to the session (`onResult`) — a thrown error as
//   `{ error: message }`, failed.
// * `beforeAgent`: a new human message is a user turn (`onUserTurn`).
// * `wrapModelCall`: queued guidance (steer) is appended to the system prompt
//   of the next model request only; an escalation swaps the model for that
//   request when `models` names it.
// * State: the session's JSON rides in the agent state under `doomLoop`, so a
//   LangGraph checkpointer persists it and a resumed thread continues the
//   streak; `agent.invoke` returns it too. A corrupt blob restores fail-open.

import { DoomLoopSession } from 'doom-loop-wasm';
import { z } from 'zod';

/** The versions this adapter is written and tested for. */
export const SUPPORTED_VERSIONS = Object.freeze({ langchain: '>=1.0.0 <2.0.0', tested: '1.5.14' });

const BRAND = Symbol.for('AgentMiddleware');
const NAME = 'DoomLoopMiddleware';

/** Thrown when the middleware is driven by a LangChain that does not have the v1 hook shapes. */
export class UnsupportedLangChainVersionError extends Error {
  /** @param {string} what what the hook received instead of the v1 shape */
  constructor(what) {
    super(`doom-loop-wasm/langchain supports langchain ${SUPPORTED_VERSIONS.langchain} (createAgent middleware; tested with ${SUPPORTED_VERSIONS.tested}); this LangChain called the middleware with ${what}`);
    this.name = 'UnsupportedLangChainVersionError';
  }
}

const isAi = (m) => m != null && typeof m === 'object' && (m.type === 'ai' || (typeof m._getType === 'function' && m._getType() === 'ai'));
const isHuman = (m) => m != null && typeof m === 'object' && (m.type === 'human' || (typeof m._getType === 'function' && m._getType() === 'human'));
const textOf = (m) => {
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content)) return m.content.map((c) => (typeof c === 'string' ? c : c?.type === 'text' && typeof c.text === 'string' ? c.text : '')).join('');
  return '';
};
const parsedContent = (content) => {
  if (typeof content !== 'string') return content;
  const t = content.trimStart()[0];
  if (t !== '{' && t !== '[') return content;
  try { return JSON.parse(content); } catch { return content; }
};
const isBubbleUp = (e) => e != null && typeof e === 'object' && (e.is_bubble_up === true || e.name === 'GraphInterrupt' || e.name === 'NodeInterrupt' || e.name === 'ParentCommand');

/**
 * @typedef {object} DoomLoopMiddlewareOptions
 * @property {import('../index.js').DoomLoopOption} [doomLoop] `true` (default): the reference
 *   defaults; a config object (e.g. `RECOMMENDED_DOOM_LOOP_OPTION`); `false`: off.
 * @property {Record<string, unknown>} [loopKeys] Per-tool loop identity by tool name: a function
 *   `(args) => keyMaterial`, a field list, or `false` (never flagged).
 * @property {Record<string, unknown>} [loopOutputKeys] Per-tool result identity by tool name.
 * @property {Record<string, unknown>} [loopEffects] Per-tool effect by tool name: `'write'` or `'read'`.
 * @property {Record<string, unknown>} [models] Chat models by name, for the `escalate` rung:
 *   an escalation to a name found here runs that one request on that model. Without it,
 *   resolving an option with escalation warns that the rung is not available.
 * @property {unknown} [state] A session state to start from when the agent state has none
 *   (for runs without a checkpointer).
 * @property {(verdict: import('../index.js').DoomLoopVerdict) => void} [onDetected] Called for
 *   every verdict (the observe rung's only effect).
 * @property {'message' | 'throw'} [toolErrors] What a tool that throws becomes. LangChain v1
 *   turns a tool error into an error ToolMessage only while no middleware wraps tool calls;
 *   this middleware wraps them, so by default (`'message'`) it answers the error the same way
 *   LangChain's default handler would (`"<error>\n Please fix your mistakes."`). `'throw'`
 *   re-throws it (LangChain's behaviour with any tool-wrapping middleware).
 */

/**
 * A LangChain v1 `createAgent` middleware that detects doom loops (the same tool call
 * repeated round after round) and answers them with the reference's ladder: observe,
 * steer (guidance in the next system prompt), refuse (the call does not run; the model
 * reads the verdict), escalate (a stronger model for one request, with `models`), stop
 * (the run ends with the verdict). Its state rides in the agent state as `doomLoop`.
 *
 * @example
 * const agent = createAgent({ model, tools, middleware: [doomLoopMiddleware({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION })] });
 * @param {DoomLoopMiddlewareOptions} [options]
 * @returns {any} the middleware object (pass it in `createAgent({ middleware: [...] })`)
 */
export function doomLoopMiddleware(options = {}) {
  const { doomLoop = true, loopKeys, loopOutputKeys, loopEffects, models, state: initialState, onDetected, toolErrors = 'message' } = options;
  const capabilities = { refuse: true, stop: true, steer: true, escalate: models != null && typeof models === 'object' };
  const byBlob = new WeakMap(); // the state blob a hook returned → its live session
  const byMessage = new WeakMap(); // the last message before a model call → its live session
  // The AI message whose tool calls a session declared → that session. One middleware
  // serves every thread of its agent, and call ids are only unique within a response
  // (`call_0`): a call is routed by its thread (state blob, else the thread's own
  // message carrying it), then its id within that session — never by id alone.
  const byResponse = new WeakMap();
  const broken = new WeakSet(); // sessions turned observe-only by an adapter error
  let warned = false;

  const make = (blob) => new DoomLoopSession({ doomLoop, loopKeys, loopOutputKeys, loopEffects, capabilities, onDetected, ...(blob !== undefined && { state: blob }) });
  const sessionFor = (blob) => {
    const live = blob != null && typeof blob === 'object' ? byBlob.get(blob) : undefined;
    if (live) return live;
    return make(blob ?? initialState);
  };
  const sessionOfCall = (state, call) => {
    const blob = state?.doomLoop;
    const live = blob != null && typeof blob === 'object' ? byBlob.get(blob) : undefined;
    if (live) return live;
    const messages = Array.isArray(state?.messages) ? state.messages : [];
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i];
      if (!isAi(m) || !Array.isArray(m.tool_calls)) continue;
      if (m.tool_calls.some((c) => c === call || c?.id === call.id)) return byResponse.get(m) ?? sessionFor(blob);
    }
    return sessionFor(blob);
  };
  const seal = (s) => {
    const blob = s.getState();
    if (blob != null && typeof blob === 'object') byBlob.set(blob, s);
    return blob;
  };
  const fail = (s, err) => {
    if (s) broken.add(s);
    if (!warned) {
      warned = true;
      console.warn(`doom-loop-wasm/langchain: detection is off for this run after an internal error (the run continues): ${err?.message ?? err}`);
    }
  };

  if (doomLoop === false) return { [BRAND]: true, name: NAME };

  return {
    [BRAND]: true,
    name: NAME,
    stateSchema: z.object({ doomLoop: z.any().optional() }),

    beforeAgent(state) {
      if (!state || !Array.isArray(state.messages)) throw new UnsupportedLangChainVersionError('a state without a messages array');
      let s;
      try {
        s = sessionFor(state.doomLoop);
        if (broken.has(s)) return undefined;
        if (isHuman(state.messages.at(-1))) s.onUserTurn();
        return { doomLoop: seal(s) };
      } catch (err) {
        fail(s, err);
        return undefined;
      }
    },

    beforeModel(state) {
      let s;
      try {
        s = sessionFor(state.doomLoop);
        const last = state.messages.at(-1);
        if (last != null && typeof last === 'object') byMessage.set(last, s);
        if (broken.has(s)) return undefined;
        // Sealed again: the results fed since the last seal ride in the next checkpoint.
        return { doomLoop: seal(s) };
      } catch (err) {
        fail(s, err);
        return undefined;
      }
    },

    async wrapModelCall(request, handler) {
      // The thread's own state blob first: a message object can be shared by threads
      // (one HumanMessage instance sent to several), a blob never is.
      const blob = request?.state?.doomLoop;
      const s = (blob != null && typeof blob === 'object' ? byBlob.get(blob) : undefined)
        ?? byMessage.get(request?.messages?.at?.(-1) ?? request?.state?.messages?.at?.(-1));
      if (!s || broken.has(s)) return handler(request);
      let patched = request;
      try {
        const next = s.nextRequest();
        if (next.guidance) patched = { ...patched, systemPrompt: patched.systemPrompt ? `${patched.systemPrompt}\n\n${next.guidance}` : next.guidance };
        if (next.model && models && Object.prototype.hasOwnProperty.call(models, next.model)) patched = { ...patched, model: models[next.model] };
      } catch (err) {
        fail(s, err);
        patched = request;
      }
      return handler(patched);
    },

    afterModel: {
      canJumpTo: ['end'],
      hook(state) {
        const last = Array.isArray(state?.messages) ? state.messages.at(-1) : undefined;
        if (!isAi(last)) return undefined;
        if (!Array.isArray(last.tool_calls)) throw new UnsupportedLangChainVersionError('an AI message without a tool_calls array');
        let s;
        try {
          s = sessionFor(state.doomLoop);
          if (broken.has(s)) return undefined;
          const calls = [
            ...last.tool_calls.map((c) => ({ id: c.id, toolName: c.name, args: c.args })),
            ...(Array.isArray(last.invalid_tool_calls) ? last.invalid_tool_calls : []).map((c) => ({ id: c.id, toolName: c.name, args: typeof c.args === 'string' ? c.args : String(c.args ?? ''), malformed: true })),
          ];
          const out = s.onResponse({ text: textOf(last), calls });
          if (out.halt) {
            const message = out.halt.message;
            return {
              doomLoop: seal(s),
              jumpTo: 'end',
              messages: [
                ...calls.filter((c) => c.id != null).map((c) => ({ type: 'tool', content: message, tool_call_id: c.id, name: c.toolName, status: 'error' })),
                { type: 'ai', content: message },
              ],
            };
          }
          byResponse.set(last, s);
          return { doomLoop: seal(s) };
        } catch (err) {
          fail(s, err);
          return undefined;
        }
      },
    },

    async wrapToolCall(request, handler) {
      const call = request?.toolCall;
      if (!call || typeof handler !== 'function') throw new UnsupportedLangChainVersionError('a tool-call request without toolCall');
      let s;
      let decision;
      try {
        s = sessionOfCall(request.state, call);
        decision = broken.has(s) ? undefined : s.decision(call.id);
      } catch (err) {
        fail(s, err);
        decision = undefined;
      }
      if (decision && decision.action === 'refuse') {
        // The ToolMessage is LangChain's own: the call runs a stand-in tool that answers the verdict.
        const msg = await handler({ ...request, tool: { name: call.name, invoke: async () => decision.message } });
        if (msg && typeof msg === 'object' && 'status' in msg) msg.status = 'error';
        return msg;
      }
      let result;
      try {
        result = await handler(request);
      } catch (err) {
        if (isBubbleUp(err)) throw err;
        feed(s, call.id, undefined, { error: err });
        if (toolErrors === 'throw') throw err;
        const msg = await handler({ ...request, tool: { name: call.name, invoke: async () => `${err}\n Please fix your mistakes.` } });
        if (msg && typeof msg === 'object' && 'status' in msg) msg.status = 'error';
        return msg;
      }
      if (result && typeof result === 'object' && 'content' in result) {
        feed(s, call.id, result.artifact ?? parsedContent(result.content), { failed: result.status === 'error' });
      }
      return result;
    },
  };

  function feed(s, id, result, how) {
    if (!s || broken.has(s)) return;
    try {
      s.onResult(id, result, how);
    } catch (err) {
      fail(s, err);
    }
  }
}
