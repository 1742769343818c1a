/**
 * `doom-loop-wasm/ai-sdk`: doom-loop detection for the Vercel AI SDK (`ai` 6.x and 7.x) —
 * `generateText`, `streamText` and `ToolLoopAgent` — as thin glue over the session engine.
 * The SDK is an optional peer dependency, used here for types only.
 *
 * @module
 */
import type { LanguageModel } from 'ai';
import type { DoomLoopOption, DoomLoopVerdict, LoopEffect } from 'doom-loop-wasm';

/** The `ai` majors this adapter supports and is tested against: `'6.x, 7.x'`. */
export declare const SUPPORTED_AI_SDK_VERSIONS: string;

/** Options of {@link createDoomLoop}. */
export interface AiSdkDoomLoopOptions {
  /**
   * `true` (default) for the reference defaults, `RECOMMENDED_DOOM_LOOP_OPTION`, or a
   * `DoomLoopConfig` to tune the ladder; `false` observes nothing.
   */
  doomLoop?: DoomLoopOption;
  /**
   * Per-tool loop identity, by tool name: a function `(args) => keyMaterial`, a field list
   * `['command', 'cwd']`, or `false` to exempt the tool.
   */
  loopKeys?: Record<string, unknown>;
  /** Per-tool result identity for outcome-aware streaks: a function `(result) => outcome`, a field list, or `false`. */
  loopOutputKeys?: Record<string, unknown>;
  /** Per-tool effect by tool name: `'write'` (changes what later calls observe) or `'read'`; read by `effects`. */
  loopEffects?: Record<string, LoopEffect>;
  /** A state from {@link AiSdkDoomLoop.getState} to resume (a corrupt one is ignored with one warning). */
  state?: unknown;
  /** Called for every verdict (the only visible effect of the `observe` rung). */
  onDetected?: (verdict: DoomLoopVerdict) => void;
  /** Escalation models by id (`escalation.model` of the config). */
  models?: Record<string, LanguageModel>;
  /** Resolves an escalation model id to a model (after `models`); without either, the id is passed to the SDK as is. */
  resolveModel?: (id: string) => LanguageModel;
}

/** The detector for one conversation: wrap each of its runs with it. */
export declare class AiSdkDoomLoop {
  private constructor();
  /**
   * Options for `generateText` / `streamText`: `tools` (each `execute` wrapped), `prepareStep`
   * and `stopWhen` (the caller's kept) replaced; without `stopWhen`, the SDK's default of one
   * step is kept. Every call is a new run of the conversation.
   */
  wrap<T extends object>(options: T): T;
  /** Settings for `new ToolLoopAgent(…)`; without `stopWhen`, the agent's default of 20 steps is kept. */
  wrapAgent<T extends object>(settings: T): T;
  /** Wraps a language model so that each response's tool calls are seen before any of them runs. */
  wrapModel<M>(model: M): M;
  /** The verdict that halted the current run, or `null`. */
  haltVerdict(): DoomLoopVerdict | null;
  /** Every verdict so far, in order. */
  verdicts(): DoomLoopVerdict[];
  /** The detector state, plain JSON: persist it and pass it back as `createDoomLoop({ state })`. */
  getState(): unknown;
  /** The underlying engine session. */
  readonly session: unknown;
}

/**
 * Creates the detector for one conversation.
 *
 * @example
 * const guard = createDoomLoop({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
 * const result = await generateText(guard.wrap({ model, tools, prompt, stopWhen: stepCountIs(20) }));
 * if (guard.haltVerdict()) console.warn(guard.haltVerdict()?.message);
 */
export declare function createDoomLoop(options?: AiSdkDoomLoopOptions): AiSdkDoomLoop;
