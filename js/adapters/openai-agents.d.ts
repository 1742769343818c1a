// Types of doom-loop-wasm/openai-agents: doom-loop detection for an `Agent` of `@openai/agents`.
// The SDK's own types are not imported (it is an optional peer dependency).
import type { DoomLoopOption, DoomLoopVerdict, LoopEffect, LoopKey, LoopOutputKey } from '../index.js';

/** The versions the OpenAI Agents adapter is written and tested for. */
export declare const SUPPORTED_VERSIONS: Readonly<OpenAIAgentsSupportedVersions>;

/** The versions an adapter is written and tested for. */
export interface OpenAIAgentsSupportedVersions {
  /** The `@openai/agents` range supported. */
  '@openai/agents': string;
  /** The RunState `$schemaVersion`s a resume is checked against. */
  runStateSchema: readonly string[];
  /** The version `make test` runs it against. */
  tested: string;
}

/** Thrown for an agent or a RunState without the shapes of a supported `@openai/agents`; names the supported versions. */
export declare class UnsupportedOpenAIAgentsVersionError extends Error {
  /** @param what what was found instead */
  constructor(what: string);
}

/**
 * Checks a serialized RunState (`result.state.toString()`) before resuming it: throws
 * {@link UnsupportedOpenAIAgentsVersionError} for a `$schemaVersion` this adapter is not tested with.
 * @param serialized the RunState text
 */
export declare function checkRunStateVersion(serialized: string): void;

/** Options of {@link withDoomLoop}. */
export interface WithDoomLoopAgentOptions {
  /** `true` (default): the reference defaults; a config (e.g. `RECOMMENDED_DOOM_LOOP_OPTION`); `false`: an unchanged clone. */
  doomLoop?: DoomLoopOption;
  /** Per-tool loop identity by tool name. */
  loopKeys?: Record<string, LoopKey | false>;
  /** Per-tool result identity by tool name. */
  loopOutputKeys?: Record<string, LoopOutputKey | false>;
  /** Per-tool effect by tool name: `'write'` (changes what later calls observe) or `'read'`; read by `effects`. */
  loopEffects?: Record<string, LoopEffect>;
  /** Called for every verdict. Errors are logged and ignored. */
  onDetected?: (verdict: DoomLoopVerdict) => void;
}

/**
 * A clone of `agent` with doom-loop detection: tool input guardrails refuse a repeated call
 * (`rejectContent` with the verdict text), output guardrails feed results, the instructions
 * carry steer guidance, `toolUseBehavior` ends the run on a stop verdict (the verdict text is
 * the final output). The state rides in the run context as `context.doomLoop`, so the RunState
 * carries it.
 * @param agent an `Agent` of `@openai/agents`
 * @param options detection and identity options
 */
export declare function withDoomLoop<A extends object>(agent: A, options?: WithDoomLoopAgentOptions): A;
