// Types of js/trace.js — the trace tooling of `doom-loop-wasm/replay`
// (the replay entry's types re-export these).
import type { DoomLoopVerdict, DoomLoopSerializedState, TimelineCall } from './index.js';

/** The trace formats the importers read. */
export type TraceFormat =
  | 'rounds'
  | 'openai-chat'
  | 'responses'
  | 'anthropic'
  | 'gemini'
  | 'swe-agent'
  | 'mini-swe-agent';

/**
 * A trace: a parsed value in any accepted shape, a file's text (JSON or
 * JSON Lines), or its bytes (gzip recognised by its magic bytes).
 */
export type TraceInput = unknown | string | Uint8Array | ArrayBuffer | ArrayBufferView;

/** One call of an imported transcript (the rounds format). */
export interface TranscriptCall {
  toolName: string;
  /** Parsed arguments; the raw text when `malformed`. */
  args: unknown;
  malformed: boolean;
  /** The call's recorded result (`null`: not recorded). */
  result: unknown;
  /** The call failed (an error result). */
  failed: boolean;
}

/** A transcript in the rounds format, as the importers produce it. */
export interface Transcript {
  doomLoop: unknown;
  loopKeys: Record<string, unknown>;
  rounds: { text: string | null; calls: TranscriptCall[] }[];
}

/** A timeline call with the call's recorded result. */
export interface TraceTimelineCall extends TimelineCall {
  /** The call's recorded result (`null`: not recorded). */
  result: unknown;
  failed: boolean;
}

/** The result of {@link replayTranscript}. */
export interface TraceTimeline {
  rounds: { round: number; textVerdict: DoomLoopVerdict | null; calls: TraceTimelineCall[] }[];
  totalRounds: number;
  stopVerdict: DoomLoopVerdict | null;
  warnings: string[];
  state: DoomLoopSerializedState;
  /** The terminal rendering (what `doomloop replay` prints). */
  text: string;
}

/** Reads one run in any accepted shape. `name` is used in error messages. */
export declare function importTranscript(
  input: TraceInput,
  options?: { name?: string },
): { format: TraceFormat; transcript: Transcript };

/**
 * Replays one run in any accepted shape; `doomLoop`, when given, replaces
 * the trace's own option.
 */
export declare function replayTranscript(
  input: TraceInput,
  options?: { doomLoop?: unknown; name?: string },
): TraceTimeline;

/** Runs by the class of an intervention. */
export interface InterventionSplit {
  unchanged: number;
  changing: number;
  unknown: number;
  text: number;
}

/** Counts for a set of runs (one source, or all). */
export interface EvaluationMetrics {
  runs: number;
  failed: number;
  labelled: number;
  resolved: number;
  observed: number;
  blocked: number;
  stopped: number;
  intervened: number;
  resolvedObserved: number;
  resolvedBlocked: number;
  resolvedStopped: number;
  calls: number;
  refused: number;
  saved: number;
  refusedPercent: number;
  savedPercent: number;
  /** Runs by the class of their first block or stop. */
  firstIntervention: InterventionSplit;
  /** The same, successful runs only. */
  firstInterventionResolved: InterventionSplit;
  /** Stopped runs by the class of their stopping verdict. */
  stops: InterventionSplit;
  /** Runs with any intervention on unchanged output. */
  caughtUnchanged: number;
}

/** The result of {@link evaluateTranscripts}. */
export interface EvaluationReport {
  options: { label: string; option: unknown; sources: Record<string, EvaluationMetrics>; total: EvaluationMetrics }[];
  failures: { source: string; id: string; option: string | null; error: string }[];
  /** The plain-text table (what `doomloop eval` prints). */
  text: string;
}

/**
 * Replays many runs under one or more options and counts them per source
 * and in total. Inputs: `{name, data}` files (text or bytes; JSON, JSON
 * Lines with a run per line, `.jsonl.gz`), bare text or bytes, or parsed
 * runs.
 */
export declare function evaluateTranscripts(
  inputs: TraceInput | { name?: string; data: string | Uint8Array | ArrayBuffer | ArrayBufferView } | readonly unknown[],
  options?: { options?: readonly { label?: string; option: unknown }[]; doomLoop?: unknown },
): EvaluationReport;
