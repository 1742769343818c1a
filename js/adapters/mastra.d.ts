/**
 * `doom-loop-wasm/mastra`: doom-loop detection for a Mastra `Agent` (`@mastra/core` 1.x)
 * `generate` / `stream`, as thin glue over the session engine. Mastra is an optional peer
 * dependency; these types are structural and need none of its declarations.
 *
 * @module
 */
import type { DoomLoopOption, DoomLoopVerdict, LoopEffect } from 'doom-loop-wasm';

/** The `@mastra/core` versions this adapter supports and is tested against. */
export declare const SUPPORTED_MASTRA_VERSIONS: string;

/** Options of {@link createDoomLoop}. */
export interface MastraDoomLoopOptions {
  /** `true` (default) for the reference defaults, `RECOMMENDED_DOOM_LOOP_OPTION`, or a `DoomLoopConfig`. */
  doomLoop?: DoomLoopOption;
  /** Per-tool loop identity, by tool name: a function, a field list, or `false` to exempt the tool. */
  loopKeys?: Record<string, unknown>;
  /** Per-tool result identity for outcome-aware streaks. */
  loopOutputKeys?: Record<string, unknown>;
  /** Per-tool effect by tool name: `'write'` (changes what later calls observe) or `'read'`; read by `effects`. */
  loopEffects?: Record<string, LoopEffect>;
  /** A state from {@link MastraDoomLoop.getState} to resume (a corrupt one is ignored with one warning). */
  state?: unknown;
  /** Called for every verdict. */
  onDetected?: (verdict: DoomLoopVerdict) => void;
  /** Escalation models by id (`escalation.model` of the config): any model Mastra accepts. */
  models?: Record<string, unknown>;
  /** Resolves an escalation model id (after `models`); without either, the id goes to Mastra's model router. */
  resolveModel?: (id: string) => unknown;
}

/** What {@link MastraDoomLoop.options} sets on the execution options. */
export interface MastraDoomLoopRunOptions {
  /** The caller's output processors, then the detector's. */
  outputProcessors: any[];
  /** `beforeToolCall` (refuse) and `afterToolCall` (results), around the caller's own hooks. */
  hooks: any;
  /** Steer and escalate for one step, after the caller's `prepareStep`. */
  prepareStep: (args: any) => Promise<any>;
  /** The caller's stop conditions, plus "the engine halted". */
  stopWhen: Array<(args: any) => boolean>;
}

/** The detector's output processor. */
export interface MastraDoomLoopProcessor {
  /** `'doom-loop'`. */
  id: string;
  /** `'doom-loop'`. */
  name: string;
  /** Declares the response's tool calls as one round, before any of them runs. */
  processOutputStep(args: any): unknown;
}

/** The detector for one conversation: pass `guard.options(…)` to each run. */
export declare class MastraDoomLoop {
  private constructor();
  /**
   * Execution options for `agent.generate(input, options)` / `agent.stream(input, options)`:
   * the detector's output processor appended to `outputProcessors`, and `hooks`,
   * `prepareStep`, `stopWhen` wrapped (the caller's kept). Every call is a new run.
   */
  options<T extends object>(executionOptions?: T): T & MastraDoomLoopRunOptions;
  /** The output processor alone (its `processOutputStep` declares each response's calls as a round). */
  readonly processor: MastraDoomLoopProcessor;
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
 * Creates the detector for one conversation of a Mastra Agent.
 *
 * @example
 * const guard = createDoomLoop({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
 * const result = await agent.generate('Find the bug', guard.options({ maxSteps: 20 }));
 */
export declare function createDoomLoop(options?: MastraDoomLoopOptions): MastraDoomLoop;
