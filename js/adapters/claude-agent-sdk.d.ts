// Types of doom-loop-wasm/claude-agent-sdk: hooks for the Claude Agent SDK's `query()`.
// The SDK's own types are not imported (it is an optional peer dependency).
import type { DoomLoopOption, DoomLoopVerdict, LoopEffect, LoopKey, LoopOutputKey } from '../index.js';

/** The versions the Claude Agent SDK adapter is written and tested for. */
export declare const SUPPORTED_VERSIONS: Readonly<ClaudeAgentSdkSupportedVersions>;

/** The versions an adapter is written and tested for. */
export interface ClaudeAgentSdkSupportedVersions {
  /** The `@anthropic-ai/claude-agent-sdk` range supported. */
  'claude-agent-sdk': string;
  /** The Claude Code range supported (it must have the PostToolBatch hook). */
  'claude-code': string;
  /** The versions `make test` runs it against. */
  tested: string;
}

/** Thrown by {@link checkClaudeCodeVersion} for a Claude Code outside the supported range; names the supported versions. */
export declare class UnsupportedClaudeCodeVersionError extends Error {
  /** @param found the version the session reported */
  constructor(found: string);
}

/**
 * Checks the `claude_code_version` of a session's `system`/`init` message; throws
 * {@link UnsupportedClaudeCodeVersionError} outside the supported range. Other messages are ignored.
 * @param message a message from the `query()` stream
 */
export declare function checkClaudeCodeVersion(message: unknown): void;

/** Where session states are kept, by session id. */
export interface DoomLoopStateStore {
  /** The stored state of a session, or undefined. */
  get(sessionId: string): unknown;
  /** Stores a session's state. */
  set(sessionId: string, state: unknown): void;
}

/** Options of {@link doomLoopHooks}. */
export interface DoomLoopHooksOptions {
  /** `true` (default): the reference defaults; a config (e.g. `RECOMMENDED_DOOM_LOOP_OPTION`); `false`: no hooks. */
  doomLoop?: DoomLoopOption;
  /** Per-tool loop identity by the tool name the hooks see (`mcp__<server>__<tool>` for SDK MCP tools). */
  loopKeys?: Record<string, LoopKey | false>;
  /** Per-tool result identity, by the same names. */
  loopOutputKeys?: Record<string, LoopOutputKey | false>;
  /** Per-tool effect by tool name: `'write'` (changes what later calls observe) or `'read'`; read by `effects`. */
  loopEffects?: Record<string, LoopEffect>;
  /** Where states are kept by session id (default: in memory, the latest 10,000). */
  store?: DoomLoopStateStore;
  /**
   * Detectors kept live at once (default 64). Past it, the least recently used session's state
   * is stored and its detector freed; it resumes from the store when the session comes back.
   */
  maxLiveSessions?: number;
  /** Called for every verdict. Errors are logged and ignored. */
  onDetected?: (verdict: DoomLoopVerdict) => void;
}

/** One hook callback as the SDK calls it. */
export type DoomLoopHookCallback = (input: any, toolUseId?: string, context?: any) => Promise<Record<string, unknown>>;

/** One hook matcher as `query({ options: { hooks } })` takes it. */
export interface DoomLoopHookMatcher {
  /** The callbacks of this matcher. */
  hooks: DoomLoopHookCallback[];
}

/** What {@link doomLoopHooks} returns. */
export interface DoomLoopHooks {
  /** Pass as `query({ options: { hooks } })` (merge with your own matchers per event). */
  hooks: Record<string, DoomLoopHookMatcher[]>;
  /** The state of a session (what the store holds). */
  getState(sessionId: string): unknown;
  /** The verdict that halted a session, or null. */
  haltVerdict(sessionId: string): DoomLoopVerdict | null;
  /** Every verdict of a session whose detector is live (until its session ends or is evicted; `onDetected` sees every verdict). */
  verdicts(sessionId: string): DoomLoopVerdict[];
  /** How many detectors are live now (at most `maxLiveSessions`). */
  liveSessions(): number;
}

/**
 * Doom-loop detection for a Claude Agent SDK `query()`: PreToolUse denies a refused call with
 * the verdict text and ends the run on a stop verdict (`continue: false`); PostToolUse /
 * PostToolUseFailure feed results; PostToolBatch closes the round and carries steer guidance
 * (`additionalContext`); state is kept by session id.
 * @param options detection, identity and storage options
 */
export declare function doomLoopHooks(options?: DoomLoopHooksOptions): DoomLoopHooks;
