// Types of doom-loop-wasm: the reference's public types, plus the
// synchronous twins and the loader.

export type DoomLoopAction = 'observe' | 'steer' | 'escalate' | 'block' | 'stop';
export type DoomLoopDetectorKind =
  | 'tool-fingerprint'
  | 'server-tool-fingerprint'
  | 'text-repetition'
  | 'text-streak'
  // Opt-in detectors beyond the reference:
  | 'tool-cycle'
  | 'no-progress'
  | 'tool-failure'
  | 'budget';

export interface DoomLoopVerdict {
  detector: DoomLoopDetectorKind;
  action: DoomLoopAction;
  streak: number;
  fingerprint: string;
  toolName?: string;
  message: string;
}

export interface DoomLoopCallRecord {
  fingerprint: string;
  streak: number;
  duplicateInRound: boolean;
  verdict?: DoomLoopVerdict;
}

export interface DoomLoopLadder {
  observe?: number | false;
  steer?: number | false;
  escalate?: number | false;
  block?: number | false;
  stop?: number | false;
}

export interface DoomLoopEscalationConfig {
  model?: string;
  advisor?: boolean | Record<string, unknown>;
  maxEscalations?: number;
}

export interface DoomLoopTextOptions {
  enabled?: boolean;
  maxPeriodTokens?: number;
  minRepeats?: number;
  minCoveredTokens?: number;
  maxWindowTokens?: number;
}

export interface DoomLoopConfig {
  ladder?: DoomLoopLadder;
  text?: boolean | DoomLoopTextOptions;
  escalation?: DoomLoopEscalationConfig;
  /** Opt-in: a tool cycling through 2..maxPeriod calls (A,B,A,B). */
  cycles?: boolean | { maxPeriod?: 2 | 3 | 4 };
  /** Opt-in: unchanged results (per `loopOutputKey`) while inputs vary. */
  ledger?: boolean;
  /** Opt-in: a tool failing round after round, whatever its arguments. */
  failures?: boolean;
  /** Opt-in: stop once this much was spent while looping, or in all. */
  budget?: { maxSpendWhileLooping?: number; maxSpend?: number; unit?: string };
  /**
   * Opt-in: outcome-aware streaks. An identical call counts only since its result
   * last turned new (not among its `recent` latest results, default 2); results
   * come from PostToolUse (per `loopOutputKey`) or a replay's recorded results.
   */
  outcomes?: boolean | { recent?: number; maskDigits?: boolean };
}

export type DoomLoopOption = boolean | DoomLoopConfig;

export interface DoomLoopStreak {
  fingerprint: string;
  streak: number;
  roundFingerprints?: readonly string[];
  callStreaks?: Record<string, number>;
}

export interface DoomLoopSerializedState {
  tools: Record<string, DoomLoopStreak>;
  text?: DoomLoopStreak;
  stopVerdict?: DoomLoopVerdict;
  pendingSteer?: string[];
  escalationsUsed?: number;
}

export type LoopKeyResolution =
  | { kind: 'exempt' }
  | { kind: 'key'; keyMaterial: unknown }
  | { kind: 'fallback'; keyMaterial: unknown; warning: string };

export interface ResolvedEscalationConfig {
  model?: string;
  advisor?: boolean | Record<string, unknown>;
  maxEscalations: number;
}

export interface ResolvedDoomLoopConfig {
  ladder: Required<DoomLoopLadder>;
  text: Required<DoomLoopTextOptions>;
  escalation: ResolvedEscalationConfig | null;
}

export interface TextRepetitionResult {
  repeats: number;
  periodTokens: number;
  coveredTokens: number;
  sample: string;
}

export interface RecordToolCallOptions {
  allowBlock?: boolean;
  detector?: Extract<DoomLoopDetectorKind, 'tool-fingerprint' | 'server-tool-fingerprint'>;
}

export declare const DEFAULT_DOOM_LOOP_LADDER: Readonly<Required<DoomLoopLadder>>;
export declare const DEFAULT_MAX_ESCALATIONS: 2;
/** Outcome-aware streaks over the reference's ladder: `doomLoop: RECOMMENDED_DOOM_LOOP_OPTION`. */
export declare const RECOMMENDED_DOOM_LOOP_OPTION: Readonly<{ outcomes: true }>;
export declare const MAX_CANONICALIZE_DEPTH: 64;

/** Loads the wasm module. A no-op in Node, Bun, Deno and Workers; required once in browsers. Idempotent. */
export declare function init(input?: string | URL | Request | Response | BufferSource | WebAssembly.Module): Promise<void>;

export declare function resolveDoomLoopOption(option: DoomLoopConfig | true): ResolvedDoomLoopConfig;
export declare function resolveDoomLoopOption(option: DoomLoopOption | undefined): ResolvedDoomLoopConfig | null;
export declare function resolveLoopKeyMaterial(loopKey: unknown, args: Record<string, unknown>): LoopKeyResolution;
export declare function canonicalizeKeyMaterial(value: unknown): string;
export declare function fingerprintToolCall(toolName: string, keyMaterial: unknown): Promise<string>;
export declare function fingerprintToolCallSync(toolName: string, keyMaterial: unknown): string;
export declare function fingerprintKeyMaterial(keyMaterial: unknown): Promise<string>;
export declare function fingerprintKeyMaterialSync(keyMaterial: unknown): string;
export declare function detectTextRepetition(text: string, options?: Partial<DoomLoopTextOptions>): TextRepetitionResult | null;
export declare function resolveLadderAction(
  ladder: Required<DoomLoopLadder>,
  streak: number,
  options: { allowBlock: boolean; allowEscalate?: boolean },
): DoomLoopAction | undefined;

export declare class DoomLoopMonitor {
  constructor(config: ResolvedDoomLoopConfig, initialState?: unknown);
  declareRound(round: number, calls: readonly { toolName: string; keyMaterial: unknown }[]): Promise<void>;
  declareRoundSync(round: number, calls: readonly { toolName: string; keyMaterial: unknown }[]): void;
  recordToolCall(toolName: string, keyMaterial: unknown, round: number, options?: RecordToolCallOptions): Promise<DoomLoopCallRecord>;
  recordToolCallSync(toolName: string, keyMaterial: unknown, round: number, options?: RecordToolCallOptions): DoomLoopCallRecord;
  recordAssistantText(text: string): Promise<DoomLoopVerdict | undefined>;
  recordAssistantTextSync(text: string): DoomLoopVerdict | undefined;
  /** Opt-in progress ledger / failure streak (`ledger`, `failures` in the config). */
  recordToolResultSync(toolName: string, inputFingerprint: string, outcome: unknown, failed: boolean, round: number): DoomLoopVerdict | undefined;
  /** Opt-in budget guard (`budget` in the config): one turn's spend. */
  recordSpend(amount: number): DoomLoopVerdict | undefined;
  resetTextStreak(): void;
  canEscalate(): boolean;
  consumeEscalation(): void;
  getState(): DoomLoopSerializedState;
  restore(state: unknown): void;
  /** Frees the wasm memory now; otherwise a FinalizationRegistry reclaims it. */
  free(): void;
}

/** One call of a replay timeline. */
export interface TimelineCall {
  toolName: string;
  fingerprint: string | null;
  streak: number;
  duplicateInRound: boolean;
  exempt: boolean;
  malformed: boolean;
  verdict: DoomLoopVerdict | null;
}

/** The result of {@link replayTranscript}. */
export interface Timeline {
  rounds: { round: number; textVerdict: DoomLoopVerdict | null; calls: TimelineCall[] }[];
  totalRounds: number;
  stopVerdict: DoomLoopVerdict | null;
  warnings: string[];
  state: DoomLoopSerializedState;
  /** The terminal rendering (what `doomloop replay` prints). */
  text: string;
}

/**
 * Replays a transcript — `{doomLoop?, loopKeys?, rounds: [{text?, calls: [{toolName, args}]}]}`,
 * or a chat / Responses message list — through a fresh detector.
 */
export declare function replayTranscript(transcript: unknown): Timeline;

/** Options of {@link withDoomLoop}. */
export interface WithDoomLoopOptions {
  /** The detector configuration; default `true` (`input.doomLoop` is also read, and removed before sending). */
  doomLoop?: DoomLoopOption;
  /** Per-tool identity: a function of the arguments, a field list, or `false` to exempt (overrides `tool.function.loopKey`). */
  loopKeys?: Record<string, ((args: Record<string, unknown>) => unknown) | string[] | false>;
  /** Per-tool identity of a result, for the opt-in `ledger` (function, field list, or `false` to leave the tool out). */
  loopOutputKeys?: Record<string, ((result: unknown) => unknown) | string[] | false>;
  /** Called with every verdict (observe-only; it cannot change the action). */
  onDetected?: (verdict: DoomLoopVerdict) => void;
}

/** The augmented `callModel` input, with the detector's verdict API (non-enumerable). */
export type WithDoomLoop<T> = T & {
  /** The verdict that stopped the run, if detection ended it. */
  getDoomLoopVerdict(): DoomLoopVerdict | null;
  /** How the run ended: `doom_loop` when detection stopped it. */
  getDoomLoopEndReason(): 'doom_loop' | 'complete' | 'max_turns' | 'error' | 'user' | undefined;
  /** Every verdict of the run, in order. */
  getDoomLoopVerdicts(): DoomLoopVerdict[];
  /** The persisted blob (the reference's `ConversationState.doomLoop` shape). */
  getDoomLoopState(): DoomLoopSerializedState;
};

/**
 * Adds doom-loop detection to an `@openrouter/agent` `callModel` input, through
 * its own hook points (onTurnStart, hooks.PreToolUse, stopWhen, onTurnEnd,
 * per-turn instructions/model, the state accessor). Use one wrapped object per call.
 */
export declare function withDoomLoop<T extends object>(input: T, options?: WithDoomLoopOptions): WithDoomLoop<T>;
