/**
 * `doom-loop-wasm/cloudflare-agents`: doom-loop detection for a Cloudflare `agents`
 * `AIChatAgent` (`@cloudflare/ai-chat`), whose chat turns run the AI SDK; the detector state
 * lives in the agent's own state. The SDKs are optional peer dependencies, for types only.
 *
 * @module
 */
import type { AiSdkDoomLoop, AiSdkDoomLoopOptions } from 'doom-loop-wasm/ai-sdk';

/** The `agents` versions this adapter supports and is tested against. */
export declare const SUPPORTED_AGENTS_VERSIONS: string;
/** The `ai` majors the underlying AI SDK adapter supports. */
export declare const SUPPORTED_AI_SDK_VERSIONS: string;

/** The part of an `Agent` the adapter uses: its state and `setState`. */
export interface AgentWithState {
  /** The agent's current state (`this.state`). */
  readonly state: unknown;
  /** Writes the agent's state (persisted with the Durable Object, synced to clients). */
  setState(state: any): void;
}

/** Options of {@link doomLoopChat}: the AI SDK adapter's, without `state`, plus `stateKey`. */
export interface DoomLoopChatOptions extends Omit<AiSdkDoomLoopOptions, 'state'> {
  /** The key of the agent's state the detector blob is kept under (default `'doomLoop'`). */
  stateKey?: string;
}

/** The AI SDK guard of one chat turn, whose `wrap` also saves the state into the agent. */
export interface DoomLoopChatGuard extends AiSdkDoomLoop {
  /** Writes the detector state into the agent's state now (done after every step and at the end). */
  save(): void;
}

/**
 * The detector for one chat turn of `agent` (call it in `onChatMessage`): restored from
 * `agent.state.doomLoop`, written back with `agent.setState` after every step.
 *
 * @example
 * async onChatMessage(onFinish) {
 *   const guard = doomLoopChat(this, { doomLoop: true });
 *   const result = streamText(guard.wrap({ model, messages: await convertToModelMessages(this.messages), tools, onFinish }));
 *   return result.toUIMessageStreamResponse();
 * }
 */
export declare function doomLoopChat(agent: AgentWithState, options?: DoomLoopChatOptions): DoomLoopChatGuard;
