/**
 * Types of `doom-loop-wasm/replay`: the trace tooling (importing recorded
 * agent runs, replaying them, evaluating many), served from the full wasm
 * module so the detector entry that agents load stays lean.
 *
 * Written from the tooling's JS API as it stands (js/trace.js of the trace
 * branch: `importTranscript`, `replayTranscript`, `evaluateTranscripts`; the
 * timeline and report JSON of trace/src/replay.rs and trace/src/eval.rs).
 *
 * Inputs (a {@link TranscriptInput}) are a parsed value (an object or array
 * in any accepted shape), a string (a file's text: JSON, or JSON Lines with a
 * message or a run per line), or bytes (`Uint8Array`, `ArrayBuffer`, a Node
 * `Buffer`; gzip is recognised by its magic bytes). Accepted shapes: the
 * rounds format, OpenAI chat, Responses items, Anthropic Messages, Gemini
 * `contents`, SWE-agent `.traj`, mini-swe-agent trajectories. Errors name the
 * place (file, line, run id).
 *
 * @packageDocumentation
 */
import type { DoomLoopOption, InitInput, LoopEffect, LoopKey, Timeline, TimelineCall, TimelineRound } from './index.js';

export type { Timeline, TimelineCall, TimelineRound } from './index.js';
export { DoomLoopSession } from './index.js';
export type { DoomLoopSessionOptions, DoomLoopSessionCall, DoomLoopDecision, DoomLoopRound, DoomLoopRequestPatch, DoomLoopCapabilities, DoomLoopHalt, DoomLoopSessionResponse, DoomLoopResultOptions } from './index.js';

/**
 * Loads the full wasm module (detector + trace tooling) in browsers and
 * bundlers; a no-op in Node, Bun, Deno and Workers, where the module loads at
 * import. Idempotent. Once it has resolved, the main entry's
 * `replayTranscript` works too.
 */
export declare function init(input?: InitInput): Promise<void>;

/** One run, as a file's text or bytes, or parsed. */
export type TranscriptInput = string | ArrayBuffer | ArrayBufferView | object;

/** The trace formats the importers read. */
export type TranscriptFormat =
  | 'rounds'
  | 'openai-chat'
  | 'responses'
  | 'anthropic'
  | 'gemini'
  | 'swe-agent'
  | 'mini-swe-agent'
  | 'gemini-cli'
  | 'gemini-cli-chat'
  | 'openhands'
  | 'cline-ui'
  | 'cline-history'
  | 'pi';

/** One call of an imported run. */
export interface ImportedCall {
  /** The tool. */
  toolName: string;
  /** The parsed arguments (the raw text when they were not valid JSON). */
  args: unknown;
  /** The arguments were not valid JSON. */
  malformed: boolean;
  /** The call's recorded result, if the trace has one. */
  result: unknown;
  /** The trace marks the call as failed. */
  failed: boolean;
}

/** One round of an imported run: the assistant's text and the calls it made. */
export interface ImportedRound {
  /** The assistant's text of the round, if any. */
  text: string | null;
  /** The round's calls, in order. */
  calls: ImportedCall[];
  /** What the turn cost in model tokens, where the log records usage. */
  tokens?: number;
}

/** An imported run, in the rounds format (what {@link replayTranscript} reads). */
export interface ImportedTranscript {
  /** The run's own `doomLoop` option, if it carries one. */
  doomLoop?: DoomLoopOption;
  /** Per-tool loop identities, by tool name. */
  loopKeys: Record<string, LoopKey>;
  /**
   * Per-tool effects the log records, by tool name (absent when none): the
   * built-in edit tools of the coding agent that wrote it (Claude Code, Codex,
   * Gemini CLI), MCP tool annotations in a tools list, and a rounds document's
   * own `loopEffects` (as written, which wins).
   */
  loopEffects?: Record<string, LoopEffect>;
  /** The run's rounds. */
  rounds: ImportedRound[];
}

/** What {@link importTranscript} returns. */
export interface ImportResult {
  /** The format the run was recognised as. */
  format: TranscriptFormat;
  /** The run in the rounds format, each call with its `result` and `failed`. */
  transcript: ImportedTranscript;
}

/** Options of {@link importTranscript}. */
export interface ImportOptions {
  /** The input's name in error messages. Default `<input>`. */
  name?: string;
}

/** Options of {@link replayTranscript}. */
export interface ReplayOptions extends ImportOptions {
  /** Replaces the transcript's own option (e.g. `RECOMMENDED_DOOM_LOOP_OPTION`). */
  doomLoop?: DoomLoopOption;
}

/** A call of a replayed timeline, with its recorded result. */
export interface ReplayedCall extends TimelineCall {
  /** The call's recorded result, if the trace has one. */
  result: unknown;
  /** The trace marks the call as failed. */
  failed: boolean;
}

/** A replayed round. */
export interface ReplayedRound extends TimelineRound {
  /** The round's calls, each with its recorded result. */
  calls: ReplayedCall[];
}

/** What {@link replayTranscript} returns: the timeline, its calls with their recorded results. */
export interface ReplayedTimeline extends Timeline {
  /** The rounds replayed (up to and including the one that stopped the run). */
  rounds: ReplayedRound[];
}

/**
 * Reads one run in any accepted shape and returns it in the rounds format.
 *
 * @throws Error naming the place and, for an unknown shape, the shapes accepted.
 * @example
 * const { format, transcript } = importTranscript(readFileSync('run.traj', 'utf8'), { name: 'run.traj' });
 */
export declare function importTranscript(input: TranscriptInput, options?: ImportOptions): ImportResult;

/**
 * Replays one run in any accepted shape through a fresh detector and
 * returns its timeline (each call with its recorded result), with the
 * terminal rendering (what `doomloop replay` prints) as `text`.
 *
 * @throws Error naming the place, for a run it cannot read.
 * @example
 * const timeline = replayTranscript({
 *   rounds: [1, 2, 3].map(() => ({ calls: [{ toolName: 'get_invoice', args: { invoice_id: 'INV-2291' } }] })),
 * });
 * timeline.rounds[2].calls[0].verdict?.action; // 'block'
 */
export declare function replayTranscript(input: TranscriptInput, options?: ReplayOptions): ReplayedTimeline;

/** A named file for {@link evaluateTranscripts}: its contents as text or bytes. */
export interface NamedTranscriptFile {
  /** The name used as the source and in errors. */
  name?: string;
  /** The file's contents: JSON, JSON Lines (a run per line), or gzip of either. */
  data: string | ArrayBuffer | ArrayBufferView;
}

/** One option to evaluate, with its label in the report. */
export interface EvaluationOption {
  /** The label in the report. */
  label: string;
  /** The `doomLoop` option. */
  option: DoomLoopOption;
}

/** Options of {@link evaluateTranscripts}. */
export interface EvaluateOptions {
  /** The options to compare. Default: the reference's defaults, `[{ label: 'defaults', option: true }]`. */
  options?: EvaluationOption[];
  /** One option to evaluate (when `options` is absent). */
  doomLoop?: DoomLoopOption;
}

/** How first interventions split by what the repeated call's output did. */
export interface InterventionSplit {
  /** The repeated call's output did not change: a real loop. */
  unchanged: number;
  /** The output was still changing: the agent was making progress. */
  changing: number;
  /** The trace does not say. */
  unknown: number;
  /** The intervention came from a text detector. */
  text: number;
}

/** What an evaluation counts, per source and in total. */
export interface EvaluationMetrics {
  /** Runs replayed (failed ones not included). */
  runs: number;
  /** Runs that failed to import or replay. */
  failed: number;
  /** Runs labelled successful or not. */
  labelled: number;
  /** Runs labelled successful. */
  resolved: number;
  /** Runs with any verdict. */
  observed: number;
  /** Runs with a `block`. */
  blocked: number;
  /** Runs with a `stop`. */
  stopped: number;
  /** Runs blocked or stopped. */
  intervened: number;
  /** Successful runs with any verdict. */
  resolvedObserved: number;
  /** Successful runs with a `block`. */
  resolvedBlocked: number;
  /** Successful runs with a `stop`. */
  resolvedStopped: number;
  /** Tool calls in all traces. */
  calls: number;
  /** Calls refused (verdict `block`). */
  refused: number;
  /** Calls saved by a stop. */
  saved: number;
  /** `refused` as a percentage of `calls`, one decimal. */
  refusedPercent: number;
  /** `saved` as a percentage of `calls`, one decimal. */
  savedPercent: number;
  /** Runs by the class of their first intervention (block or stop). */
  firstIntervention: InterventionSplit;
  /** The same, successful runs only. */
  firstInterventionResolved: InterventionSplit;
  /** Stopped runs by the class of their stopping verdict. */
  stops: InterventionSplit;
  /** Runs with any intervention (not only the first) on unchanged output. */
  caughtUnchanged: number;
  /** Runs labelled unsuccessful. */
  unresolved: number;
  /** Successful runs with a block or stop. */
  intervenedResolved: number;
  /** Unsuccessful runs with a block or stop. */
  intervenedUnresolved: number;
  /** Successful runs ended by a stop. */
  haltedResolved: number;
  /** Unsuccessful runs ended by a stop. */
  haltedUnresolved: number;
  /** Calls after the halt in unsuccessful runs: work saved. */
  savedUnresolved: number;
  /** Calls after the halt in successful runs: work the successful agent would not have done. */
  lostResolved: number;
  /** Runs that ended on a cost, step or attempt cap (their `exitStatus` or own markers). */
  capped: number;
  /** Tool calls in the capped runs. */
  cappedCalls: number;
  /** Capped runs a stop ends. */
  cappedHalted: number;
  /** Calls after the halt in capped runs. */
  cappedSaved: number;
}

/** One option's results in an {@link EvaluationReport}. */
export interface EvaluatedOption extends EvaluationOption {
  /** Metrics per source (file or `source` field). */
  sources: Record<string, EvaluationMetrics>;
  /** Metrics over every source. */
  total: EvaluationMetrics;
}

/** A run that could not be imported or replayed. */
export interface EvaluationFailure {
  /** Where it came from. */
  source: string;
  /** The run's id or place. */
  id: string;
  /** The option's label when replaying failed under one option only; `null` when importing failed. */
  option: string | null;
  /** What went wrong. */
  error: string;
}

/** What {@link evaluateTranscripts} returns. */
export interface EvaluationReport {
  /** One entry per evaluated option. */
  options: EvaluatedOption[];
  /** Runs that failed (the first 100); they do not stop the evaluation. */
  failures: EvaluationFailure[];
  /** Failures past the first 100: counted in the totals, not listed. */
  failuresOmitted: number;
  /** What the import read past (lines skipped, formats mixed); at most 20, then a line counting the rest. */
  warnings: string[];
  /** The terminal rendering (what `doomloop eval` prints). */
  text: string;
}

/**
 * Replays many runs under one or more options and counts what the
 * evaluation defines (runs observed / blocked / stopped, calls refused and
 * saved, first interventions by whether the output was changing), per source
 * and in total. A run that fails is listed in `failures` and counted; it
 * does not stop the evaluation.
 *
 * @param inputs one input or an array of them: named files, text, bytes, or parsed runs.
 * @example
 * const report = evaluateTranscripts(
 *   [{ name: 'runs.jsonl.gz', data: readFileSync('runs.jsonl.gz') }],
 *   { options: [{ label: 'defaults', option: true }, { label: 'recommended', option: RECOMMENDED_DOOM_LOOP_OPTION }] },
 * );
 * console.log(report.text);
 */
export declare function evaluateTranscripts(
  inputs: TranscriptInput | NamedTranscriptFile | readonly (TranscriptInput | NamedTranscriptFile)[],
  options?: EvaluateOptions,
): EvaluationReport;

/**
 * The gateway's decision for one request of an LLM API, as JSON text:
 * `{action: "forward"|"rewrite"|"answer", body?, contentType?, headers, log}`.
 * `doom-loop-wasm/gateway`'s fetch handler is built on it.
 * @param api `chat`, `responses` or `anthropic`
 * @param body the request body's bytes
 * @param option the `doomLoop` option as JSON text (undefined: `RECOMMENDED_DOOM_LOOP_OPTION`)
 * @param loopKeys per-tool loop keys as JSON text
 */
export declare function gatewayDecide(api: 'chat' | 'responses' | 'anthropic', body: Uint8Array, option?: string, loopKeys?: string): string;

/**
 * The API a request speaks from its method and path (`POST …/chat/completions`,
 * `…/responses`, `…/messages`), or undefined when the gateway passes it through.
 */
export declare function gatewayRoute(method: string, path: string): 'chat' | 'responses' | 'anthropic' | undefined;
