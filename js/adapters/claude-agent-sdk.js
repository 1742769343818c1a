// Claude Agent SDK adapter: doom-loop detection as `query()` hooks.
//
// Thin glue over DoomLoopSession (the one session engine); no SDK import at
// run time. The SDK runs the Claude Code binary, which calls these hooks:
// * `PreToolUse`: each call is recorded into the open round (`onCall`; a
//   duplicate of a call already in the round counts once). A refused call is
//   denied (`permissionDecision: 'deny'`, the verdict text as the reason the
//   model reads); a halt also answers `continue: false` with the verdict as
//   `stopReason`, which ends the run. A call that may run gets no decision
//   from the hook, so the session's own permission rules still apply.
// * `PostToolUse` / `PostToolUseFailure`: the call's result (or error) feeds
//   the outcome-aware streaks (`onResult`).
// * `PostToolBatch`: fires once after every call of a model response has
//   resolved — the round boundary (`endRound`). Queued guidance (steer) goes
//   back as `additionalContext`, which reaches the model with the next request.
// * `UserPromptSubmit`: a new user message (`onUserTurn`).
// Escalate is not available (a hook cannot swap the model of one request):
// an option that asks for it warns, as the reference warns about dead rungs.
// * `Stop` / `StopFailure` / `SubagentStop` / `SessionEnd`: the conversation
//   ended or waits for the user: its state is stored and its engine freed.
// State is kept by session id in `store` (default: in memory, the latest
// 10,000) after every round, so a session resumed with `resume: sessionId`
// continues its streaks. One hooks object may serve a whole server: at most
// `maxLiveSessions` engines stay live (the least recently used is stored and
// freed, and resumes from the store when it comes back), and a subagent
// (`agent_id`) gets a detector of its own, apart from its session's.

import { DoomLoopSession } from 'doom-loop-wasm';

/** The versions this adapter is written and tested for. */
export const SUPPORTED_VERSIONS = Object.freeze({
  'claude-agent-sdk': '>=0.3.0 <0.4.0',
  'claude-code': '>=2.1.0 <2.2.0',
  tested: '@anthropic-ai/claude-agent-sdk 0.3.333 (Claude Code 2.1.333)',
});

/** Thrown by {@link checkClaudeCodeVersion} for a Claude Code outside the supported range. */
export class UnsupportedClaudeCodeVersionError extends Error {
  /** @param {string} found the version the session reported */
  constructor(found) {
    super(`doom-loop-wasm/claude-agent-sdk supports Claude Code ${SUPPORTED_VERSIONS['claude-code']} (@anthropic-ai/claude-agent-sdk ${SUPPORTED_VERSIONS['claude-agent-sdk']}; it needs the PostToolBatch hook; tested with ${SUPPORTED_VERSIONS.tested}); this session runs Claude Code ${found}`);
    this.name = 'UnsupportedClaudeCodeVersionError';
  }
}

/** Engines kept live by default: past it, the least recently used session is stored and freed. */
const DEFAULT_LIVE_SESSIONS = 64;
/** States the default in-memory store keeps (the most recently written); pass a `store` to keep them all. */
const DEFAULT_STORED_STATES = 10_000;
/** The events after which a conversation's engine is freed (its state stored): the turn or the session ended. */
const END_EVENTS = ['Stop', 'StopFailure', 'SubagentStop', 'SessionEnd'];

/**
 * The conversation a hook event belongs to: its session, or a subagent of it
 * (`agent_id`, present only inside one). Subagents run their own model loops,
 * in parallel, with their own rounds: each gets its own detector.
 */
function conversationKey(input) {
  const session = String(input?.session_id ?? '');
  const agent = input?.agent_id;
  return typeof agent === 'string' && agent !== '' ? `${session}/agent/${agent}` : session;
}

function liveBound(value) {
  return Number.isInteger(value) && value >= 1 ? value : DEFAULT_LIVE_SESSIONS;
}

/**
 * The default store: states in memory as JSON text (half the heap of the
 * objects, and a copy nobody else holds), the oldest written dropped past `max`.
 */
function memoryStore(max) {
  const states = new Map();
  return {
    get: (id) => {
      const text = states.get(id);
      return text === undefined ? undefined : JSON.parse(text);
    },
    set: (id, state) => {
      states.delete(id);
      states.set(id, JSON.stringify(state));
      if (states.size > max) states.delete(states.keys().next().value);
    },
  };
}

const versionParts = (v) => /^(\d+)\.(\d+)\.(\d+)/.exec(String(v ?? ''))?.slice(1).map(Number);

/**
 * Checks the Claude Code version a session reports in its `system`/`init` message
 * (`claude_code_version`); throws {@link UnsupportedClaudeCodeVersionError} outside
 * the supported range. Other messages are ignored.
 * @param {any} message a message from the `query()` stream
 */
export function checkClaudeCodeVersion(message) {
  if (!message || message.type !== 'system' || message.subtype !== 'init') return;
  const parts = versionParts(message.claude_code_version);
  if (!parts || parts[0] !== 2 || parts[1] !== 1) throw new UnsupportedClaudeCodeVersionError(String(message.claude_code_version));
}

/**
 * @typedef {object} DoomLoopStateStore Where session states are kept, by session id.
 * @property {(sessionId: string) => unknown} get the stored state, or undefined
 * @property {(sessionId: string, state: unknown) => void} set stores a state
 */

/**
 * @typedef {object} DoomLoopHooksOptions
 * @property {import('../index.js').DoomLoopOption} [doomLoop] `true` (default): the reference
 *   defaults; a config object (e.g. `RECOMMENDED_DOOM_LOOP_OPTION`); `false`: off.
 * @property {Record<string, unknown>} [loopKeys] Per-tool loop identity by the tool name the
 *   hooks see (`mcp__<server>__<tool>` for SDK MCP tools): a function, a field list, or `false`.
 * @property {Record<string, unknown>} [loopOutputKeys] Per-tool result identity, by the same names.
 * @property {Record<string, unknown>} [loopEffects] Per-tool effect, by the same names: `'write'` or `'read'`.
 * @property {DoomLoopStateStore} [store] Where states are kept by session id (default: in memory, the
 *   latest 10,000).
 * @property {number} [maxLiveSessions] Detectors kept live at once (default 64): past it, the least
 *   recently used session's state is stored and its detector freed; it resumes from the store.
 * @property {(verdict: import('../index.js').DoomLoopVerdict) => void} [onDetected] Called for every verdict.
 */

/**
 * @typedef {object} DoomLoopHooks
 * @property {Record<string, Array<{ hooks: Array<(input: any, toolUseId?: string, context?: any) => Promise<object>> }>>} hooks
 *   Pass as `query({ options: { hooks } })` (merge with your own per event).
 * @property {(sessionId: string) => unknown} getState The state of a session (what the store holds).
 * @property {(sessionId: string) => any} haltVerdict The verdict that halted a session, or null.
 * @property {(sessionId: string) => any[]} verdicts Every verdict of a session whose detector is live
 *   (until its session ends or is evicted; `onDetected` sees every verdict).
 * @property {() => number} liveSessions How many detectors are live now (at most `maxLiveSessions`).
 */

/**
 * Doom-loop detection for a Claude Agent SDK `query()`: hooks that refuse a repeated
 * call (PreToolUse deny with the verdict text), end the run on a stop verdict
 * (`continue: false`), feed results to the outcome-aware streaks and steer the next
 * request (PostToolBatch `additionalContext`). State is kept by session id.
 *
 * @example
 * const dl = doomLoopHooks({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
 * for await (const m of query({ prompt, options: { hooks: dl.hooks } })) { ... }
 * @param {DoomLoopHooksOptions} [options]
 * @returns {DoomLoopHooks}
 */
export function doomLoopHooks(options = {}) {
  const { doomLoop = true, loopKeys, loopOutputKeys, loopEffects, onDetected } = options;
  const store = options.store ?? memoryStore(DEFAULT_STORED_STATES);
  const maxLive = liveBound(options.maxLiveSessions);
  // Conversation key → live DoomLoopSession, least recently used first.
  const sessions = new Map();
  let warned = false;
  const fail = (err) => {
    if (!warned) {
      warned = true;
      console.warn(`doom-loop-wasm/claude-agent-sdk: detection is off for this run after an internal error (the run continues): ${err?.message ?? err}`);
    }
  };
  const broken = new Set();
  const make = (state) => new DoomLoopSession({ doomLoop, loopKeys, loopOutputKeys, loopEffects, onDetected, capabilities: { refuse: true, stop: true, steer: true, escalate: false }, ...(state !== undefined && { state }) });
  // Written to the store, then freed: a session that comes back resumes from the store.
  const retire = (key, s) => {
    sessions.delete(key);
    try {
      if (!broken.has(key)) store.set(key, s.getState());
    } catch (err) {
      fail(err);
    } finally {
      s.free();
    }
  };
  const sessionFor = (input) => {
    const key = conversationKey(input);
    let s = sessions.get(key);
    if (s) {
      sessions.delete(key); // re-inserted last: the most recently used
    } else {
      s = make(store.get(key));
      while (sessions.size >= maxLive) {
        const [oldest, evicted] = sessions.entries().next().value;
        retire(oldest, evicted);
      }
    }
    sessions.set(key, s);
    return s;
  };
  const save = (input, s) => store.set(conversationKey(input), s.getState());
  const guarded = (fn) => async (input) => {
    if (broken.has(conversationKey(input))) return {};
    try {
      return (await fn(input)) ?? {};
    } catch (err) {
      broken.add(conversationKey(input));
      fail(err);
      return {};
    }
  };
  // The SDK says the conversation (a session, or one subagent) ended or paused
  // for the user: its state goes to the store, its engine is freed.
  const ended = async (input) => {
    try {
      const key = conversationKey(input);
      const s = sessions.get(key);
      if (s) retire(key, s);
      broken.delete(key);
    } catch (err) {
      fail(err);
    }
    return {};
  };

  const hooks = doomLoop === false ? {} : {
    UserPromptSubmit: [{ hooks: [guarded((input) => {
      const s = sessionFor(input);
      s.onUserTurn();
      save(input, s);
    })] }],
    PreToolUse: [{ hooks: [guarded((input) => {
      const s = sessionFor(input);
      const decision = s.onCall({ id: input.tool_use_id, toolName: input.tool_name, args: input.tool_input ?? {} });
      const halt = s.haltVerdict();
      if (halt) {
        save(input, s);
        const message = decision?.message ?? halt.message;
        return { continue: false, stopReason: message, hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: message } };
      }
      if (decision?.action === 'refuse') {
        return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: decision.message } };
      }
      return {};
    })] }],
    PostToolUse: [{ hooks: [guarded((input) => {
      sessionFor(input).onResult(input.tool_use_id, input.tool_response);
    })] }],
    PostToolUseFailure: [{ hooks: [guarded((input) => {
      if (input.is_interrupt) return;
      sessionFor(input).onResult(input.tool_use_id, undefined, { error: String(input.error ?? '') });
    })] }],
    PostToolBatch: [{ hooks: [guarded((input) => {
      const s = sessionFor(input);
      s.endRound();
      const { guidance } = s.nextRequest();
      save(input, s);
      if (guidance) return { hookSpecificOutput: { hookEventName: 'PostToolBatch', additionalContext: guidance } };
      return {};
    })] }],
    ...Object.fromEntries(END_EVENTS.map((event) => [event, [{ hooks: [ended] }]])),
  };

  const live = (id) => sessions.get(String(id));
  // A session without a live engine: its halt as the stored state re-arms it.
  const storedHalt = (id) => {
    const state = store.get(String(id));
    if (state === undefined) return null;
    const s = make(state);
    try {
      s.resumeHalt();
      return s.haltVerdict();
    } finally {
      s.free();
    }
  };
  return {
    hooks,
    getState: (id) => live(id)?.getState() ?? store.get(String(id)),
    haltVerdict: (id) => {
      const s = live(id);
      return s ? s.haltVerdict() : storedHalt(id);
    },
    verdicts: (id) => live(id)?.verdicts() ?? [],
    liveSessions: () => sessions.size,
  };
}
