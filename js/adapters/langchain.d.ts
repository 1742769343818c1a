// Types of doom-loop-wasm/langchain: the LangChain.js v1 `createAgent` middleware.
// Types only from LangChain and zod (optional peer dependencies; nothing is imported at run time
// from LangChain, and zod only for the state schema LangChain requires).
import type { AgentMiddleware } from 'langchain';
import type { ZodAny, ZodObject, ZodOptional } from 'zod';
import type { DoomLoopOption, DoomLoopVerdict, LoopEffect, LoopKey, LoopOutputKey } from '../index.js';

/** The versions an adapter is written and tested for. */
export interface LangChainSupportedVersions {
  /** The `langchain` range the middleware supports (`>=1.0.0 <2.0.0`). */
  langchain: string;
  /** The version `make test` runs it against. */
  tested: string;
}

/** The versions the LangChain adapter is written and tested for. */
export declare const SUPPORTED_VERSIONS: Readonly<LangChainSupportedVersions>;

/** The middleware's state schema shape: what it adds to the agent state. */
export type DoomLoopStateShape = {
  /** The session's JSON (`DoomLoopSession.getState()`), persisted by a checkpointer. */
  doomLoop: ZodOptional<ZodAny>;
};

/** Thrown when the middleware is driven by a LangChain without the v1 hook shapes; names the supported versions. */
export declare class UnsupportedLangChainVersionError extends Error {
  /** @param what what the hook received instead of the v1 shape */
  constructor(what: string);
}

/** Options of {@link doomLoopMiddleware}. */
export interface DoomLoopMiddlewareOptions {
  /** `true` (default): the reference defaults; a config (e.g. `RECOMMENDED_DOOM_LOOP_OPTION`); `false`: a middleware that does nothing. */
  doomLoop?: DoomLoopOption;
  /** Per-tool loop identity by tool name: a function of the arguments, a field list, or `false` (never flagged). */
  loopKeys?: Record<string, LoopKey | false>;
  /** Per-tool result identity by tool name (outcome-aware streaks). */
  loopOutputKeys?: Record<string, LoopOutputKey | false>;
  /** Per-tool effect by tool name: `'write'` (changes what later calls observe) or `'read'`; read by `effects`. */
  loopEffects?: Record<string, LoopEffect>;
  /** Chat models by name for the escalate rung: an escalation to a model named here runs that one request on it. */
  models?: Record<string, unknown>;
  /** A session state to start from when the agent state has none (runs without a checkpointer). */
  state?: unknown;
  /** Called for every verdict (the observe rung's only effect). Errors are logged and ignored. */
  onDetected?: (verdict: DoomLoopVerdict) => void;
  /**
   * What a tool that throws becomes. `'message'` (default): an error ToolMessage with the text
   * LangChain's default handler writes (`"<error>\n Please fix your mistakes."`), as without any
   * tool-wrapping middleware; `'throw'`: re-thrown (LangChain's behaviour with one).
   */
  toolErrors?: 'message' | 'throw';
}

/** The state the middleware adds to the agent state (persisted by a checkpointer, returned by `invoke`). */
export interface DoomLoopAgentState {
  /** The session's JSON (`DoomLoopSession.getState()`). */
  doomLoop?: unknown;
}

/**
 * A LangChain v1 `createAgent` middleware (the object `createMiddleware` returns) with
 * doom-loop detection: the model's tool calls are a round (`afterModel`), a refused call
 * is answered with the verdict text (`wrapToolCall`), steer guidance goes into the next
 * system prompt (`wrapModelCall`), a stop ends the run (`jumpTo: 'end'`); the state rides
 * in the agent state as `doomLoop`.
 * @param options detection and identity options
 * @returns the middleware; pass it in `createAgent({ middleware: [...] })`
 */
export declare function doomLoopMiddleware(options?: DoomLoopMiddlewareOptions): AgentMiddleware<ZodObject<DoomLoopStateShape>>;
