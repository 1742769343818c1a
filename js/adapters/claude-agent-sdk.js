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
// State is kept by session id in `store` (default: in memory) after every
// round, so a session resumed with `resume: sessionId` continues its streaks.

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
 * @property {DoomLoopStateStore} [store] Where states are kept by session id (default: a Map in memory).
 * @property {(verdict: import('../index.js').DoomLoopVerdict) => void} [onDetected] Called for every verdict.
 */

/**
 * @typedef {object} DoomLoopHooks
 * @property {Record<string, Array<{ hooks: Array<(input: any, toolUseId?: string, context?: any) => Promise<object>> }>>} hooks
 *   Pass as `query({ options: { hooks } })` (merge with your own per event).
 * @property {(sessionId: string) => unknown} getState The state of a session (what the store holds).
 * @property {(sessionId: string) => any} haltVerdict The verdict that halted a session, or null.
 * @property {(sessionId: string) => any[]} verdicts Every verdict of a session so far.
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
  const { doomLoop = true, loopKeys, loopOutputKeys, onDetected } = options;
  const memory = new Map();
  const store = options.store ?? { get: (id) => memory.get(id), set: (id, state) => void memory.set(id, state) };
  const sessions = new Map(); // session id → live DoomLoopSession
  let warned = false;
  const fail = (err) => {
    if (!warned) {
      warned = true;
      console.warn(`doom-loop-wasm/claude-agent-sdk: detection is off for this run after an internal error (the run continues): ${err?.message ?? err}`);
    }
  };
  const broken = new Set();
  const keyOf = (input) => String(input?.session_id ?? '');
  const sessionFor = (input) => {
    const id = keyOf(input);
    let s = sessions.get(id);
    if (!s) {
      const state = store.get(id);
      s = new DoomLoopSession({ doomLoop, loopKeys, loopOutputKeys, onDetected, capabilities: { refuse: true, stop: true, steer: true, escalate: false }, ...(state !== undefined && { state }) });
      sessions.set(id, s);
    }
    return s;
  };
  const save = (input, s) => store.set(keyOf(input), s.getState());
  const guarded = (fn) => async (input) => {
    if (broken.has(keyOf(input))) return {};
    try {
      return (await fn(input)) ?? {};
    } catch (err) {
      broken.add(keyOf(input));
      fail(err);
      return {};
    }
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
  };

  const live = (id) => sessions.get(String(id));
  return {
    hooks,
    getState: (id) => live(id)?.getState() ?? store.get(String(id)),
    haltVerdict: (id) => live(id)?.haltVerdict() ?? null,
    verdicts: (id) => live(id)?.verdicts() ?? [],
  };
}
