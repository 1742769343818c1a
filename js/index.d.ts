/**
 * Types of `doom-loop-wasm`: a byte-for-byte, synchronous drop-in for
 * `@openrouter/agent/doom-loop`.
 *
 * Every type the reference exports is declared here with the reference's
 * name and is mutually assignable with the reference's own (checked by
 * `tests/types/`, which compiles assignments both ways). What this package
 * adds is additive and optional, so it never breaks that:
 *
 * - the synchronous twins (`*Sync`), `init`, `DoomLoopMonitor.free`;
 * - the opt-in detectors (`cycles`, `ledger`, `failures`, `budget` in the
 *   option). Their verdicts keep `detector` within the reference's four
 *   {@link DoomLoopDetectorKind}s — so an engine or schema that validates
 *   verdicts against the reference accepts them — and name the opt-in
 *   detector in the added {@link DoomLoopVerdict.optInDetector} field;
 * - the `callModel` adapter for `@openrouter/agent@0.8.0`
 *   ({@link withDoomLoop}, {@link withLoopKey});
 * - the trace tooling ({@link replayTranscript}).
 *
 * No DOM or Node types are needed: the loader's input is described
 * structurally.
 *
 * @packageDocumentation
 */

//#region Reference types

/**
 * Escalation actions, weakest to strongest:
 *
 * - `observe`  — report only (the reference emits its `DoomLoopDetected`
 *   hook; {@link withDoomLoop} calls `onDetected`).
 * - `steer`    — inject corrective guidance before the next model turn;
 *   the call still runs.
 * - `escalate` — run the NEXT turn with more intelligence (a stronger model
 *   and/or an advisor consult, per {@link DoomLoopEscalationConfig}), bounded
 *   by `maxEscalations`; exhausted or unconfigured escalations fall through
 *   to the weaker rungs. The call still runs.
 * - `block`    — refuse the tool call; the verdict's message becomes the
 *   tool's error output, where the model looks.
 * - `stop`     — halt the run before the next model request.
 */
export type DoomLoopAction = 'observe' | 'steer' | 'escalate' | 'block' | 'stop';

/**
 * Which detector produced a verdict — exactly the reference's four kinds:
 *
 * - `tool-fingerprint` — a client tool re-issued with the same identity;
 * - `server-tool-fingerprint` — the same for server tools (recorded after
 *   they ran, so never blocked);
 * - `text-repetition` — a token block repeating within one response;
 * - `text-streak` — identical assistant text across consecutive turns.
 *
 * Verdicts of the opt-in detectors are reported under one of these kinds and
 * name themselves in {@link DoomLoopVerdict.optInDetector}.
 */
export type DoomLoopDetectorKind =
  | 'tool-fingerprint'
  | 'server-tool-fingerprint'
  | 'text-repetition'
  | 'text-streak';

/**
 * A doom-loop detection event.
 *
 * `streak` is the repetition count that crossed a ladder threshold: for the
 * fingerprint detectors the number of consecutive rounds in which the tool
 * was called with the same fingerprint *set* (every call of a repeated
 * fan-out reports the round's count); for `text-repetition` the number of
 * consecutive repeats of a token block within one response; for
 * `text-streak` the number of consecutive turns with identical text.
 *
 * @example
 * const record = monitor.recordToolCallSync('get_invoice', { invoice_id: 'INV-2291' }, round);
 * if (record.verdict?.action === 'block') {
 *   // hand record.verdict.message to the model as the tool's error output
 * }
 */
export interface DoomLoopVerdict {
  /** The reference detector kind (also for opt-in verdicts: see {@link optInDetector}). */
  detector: DoomLoopDetectorKind;
  /** The ladder rung reached. */
  action: DoomLoopAction;
  /** The repetition count that crossed the rung. */
  streak: number;
  /** Deterministic fingerprint of the repeated unit (call identity or text), 64 lowercase hex digits. */
  fingerprint: string;
  /** The tool, present for tool verdicts (`tool-fingerprint`, `server-tool-fingerprint`). */
  toolName?: string;
  /** Human- and model-readable explanation; used verbatim as block output and steer guidance. */
  message: string;
  /**
   * Not in the reference: the opt-in detector that raised this verdict, when
   * one did (absent on the reference's own verdicts). A consumer that only
   * knows the reference ignores it; `detector` then says how to treat the
   * verdict (`tool-fingerprint` for tool-cycle, no-progress and tool-failure
   * verdicts — a cycle found on a server-tool record keeps
   * `server-tool-fingerprint` — and `text-streak` for the budget guard,
   * which, like the text detectors, is fed per model response and names no
   * tool).
   */
  optInDetector?: DoomLoopOptInDetectorKind;
}

/**
 * Result of recording one tool call with the monitor.
 *
 * `duplicateInRound` is true when the same `(toolName, fingerprint)` was
 * already recorded in this round: the streak did not increment, and the
 * caller should reuse the decision it applied to the first occurrence
 * rather than act (or report) again.
 */
export interface DoomLoopCallRecord {
  /** The call's fingerprint: `sha256(toolName + "\n" + jcs(keyMaterial))`, lowercase hex. */
  fingerprint: string;
  /** The effective streak: the stronger of the round-set and the per-call count. */
  streak: number;
  /** The same call was already recorded in this round (reuse its decision). */
  duplicateInRound: boolean;
  /** The verdict, when a ladder rung was reached. */
  verdict?: DoomLoopVerdict;
}

/**
 * Streak thresholds for each action. `false` disables a rung. When several
 * rungs are crossed the strongest wins (stop > block > escalate > steer >
 * observe). Thresholds compare with `>=`, so a verdict fires on every record
 * at or past a rung, escalating as the streak grows. Invalid values
 * (non-numbers, `< 1`, non-finite) fall back to the default; fractions are
 * floored.
 *
 * @example
 * const config = resolveDoomLoopOption({ ladder: { steer: 2, block: 4, stop: 8 } });
 */
export interface DoomLoopLadder {
  /** Report only. Default 2. */
  observe?: number | false;
  /** Inject corrective guidance before the next turn. Default off. */
  steer?: number | false;
  /** Run the next turn with more intelligence (needs `escalation`). Default off. */
  escalate?: number | false;
  /** Refuse the call (tool verdicts only). Default 3. */
  block?: number | false;
  /** Halt the run. Default 6. */
  stop?: number | false;
}

/**
 * Recovery configuration for the `escalate` rung: what "throw more
 * intelligence at the stuck turn" means for this run. At least one of
 * `model` / `advisor` must be set for the rung to do anything (an enabled
 * rung without one warns and is skipped).
 */
export interface DoomLoopEscalationConfig {
  /**
   * Model slug to run the NEXT turn on (e.g. a frontier model), replacing
   * the configured model for one request only; the following turn reverts.
   */
  model?: string;
  /**
   * Force an `openrouter:advisor` consult on the next turn. `true` uses the
   * defaults (platform-chosen advisor, transcript forwarded, instructions
   * describing the loop); an object is passed through as the advisor tool's
   * parameters. `false` is an explicit opt-out, the same as absent. Not
   * available through {@link withDoomLoop} (0.8.0 cannot add a tool for one
   * turn; the adapter warns and applies `model` only).
   */
  advisor?: boolean | Record<string, unknown>;
  /**
   * How many times this run may escalate; when exhausted, `escalate`
   * verdicts fall through to steer/observe. Default 2
   * ({@link DEFAULT_MAX_ESCALATIONS}).
   */
  maxEscalations?: number;
}

/** Options of the text detectors (within-response repetition and cross-turn identical text). */
export interface DoomLoopTextOptions {
  /** Master switch for both text detectors. Default true. */
  enabled?: boolean;
  /** Longest repeating token block searched for. Default 16. */
  maxPeriodTokens?: number;
  /** Minimum consecutive repeats of a block to count as repetition. Default 4. */
  minRepeats?: number;
  /** Minimum number of tokens the repetition must cover. Default 12. */
  minCoveredTokens?: number;
  /** Only the trailing N tokens of a response are scanned. Default 400. */
  maxWindowTokens?: number;
}

/**
 * Configuration for doom-loop detection (`doomLoop: true` uses every
 * default). The first three keys are the reference's; the others switch on
 * this package's opt-in detectors, which the reference ignores, so a config
 * object can be shared by both.
 *
 * @example
 * // The reference's defaults plus cycle and failure detection:
 * const config = resolveDoomLoopOption({ cycles: true, failures: true });
 */
export interface DoomLoopConfig {
  /** Streak thresholds per action ({@link DEFAULT_DOOM_LOOP_LADDER} when absent). */
  ladder?: DoomLoopLadder;
  /** Text-loop detection: `false` disables it, an object tunes it. Default on. */
  text?: boolean | DoomLoopTextOptions;
  /** Recovery behaviour for the `escalate` rung. Off unless configured. */
  escalation?: DoomLoopEscalationConfig;
  /**
   * Opt-in ({@link DoomLoopToolCycleVerdict}): a tool cycling through the
   * same 2..`maxPeriod` round identities (`A,B,A,B`; `A,B,C,A,B,C`) — the
   * reference's streak resets every round there. `true` = `maxPeriod: 4`.
   */
  cycles?: boolean | DoomLoopCycleOptions;
  /**
   * Opt-in ({@link DoomLoopNoProgressVerdict}): consecutive results of a
   * tool with the same outcome (its `loopOutputKey` material, default the
   * whole result) while its inputs change — a nonce defeats fingerprints,
   * not this. Fed by {@link DoomLoopMonitor.recordToolResultSync}.
   */
  ledger?: boolean;
  /**
   * Opt-in ({@link DoomLoopToolFailureVerdict}): a tool failing in
   * consecutive rounds, whatever its arguments. Fed by
   * {@link DoomLoopMonitor.recordToolResultSync}.
   */
  failures?: boolean;
  /**
   * Opt-in ({@link DoomLoopBudgetVerdict}): stop once this much was spent
   * while a loop was suspected, or in all. Fed by
   * {@link DoomLoopMonitor.recordSpend}.
   */
  budget?: DoomLoopBudgetOptions;
  /**
   * Opt-in: outcome-aware streaks. An identical call counts only since its
   * result last turned new (not among its `recent` latest results), so a
   * repeated call whose result keeps changing (a poller, a test run after
   * edits) is progress, not a loop. Results come from
   * {@link DoomLoopMonitor.recordToolResultSync} (the adapter feeds them at
   * `PostToolUse`, per `loopOutputKey`); calls whose results are unknown count
   * as in the reference. It changes when the reference's own
   * `tool-fingerprint` verdicts fire, so it adds no verdict kind of its own
   * (no {@link DoomLoopVerdict.optInDetector}).
   */
  outcomes?: boolean | DoomLoopOutcomeOptions;
  /**
   * Opt-in: novelty-aware streaks. An identical repeat is not loop evidence
   * when, since the previous identical call, some call returned a result new
   * to its tool (not the tool's first result) — unless the repeated call's
   * own last two results were the same. Fed like `outcomes`; calls whose
   * results are unknown count as in the reference.
   */
  novelty?: boolean | DoomLoopNoveltyOptions;
  /**
   * Opt-in: in-response repetition. A response in which one sentence
   * (outside code fences, at least `minChars` long) occurs `minRepeats`
   * times scores as a repeat of itself (streak 2: observe by default), each
   * following chanting response adds one. A `text-repetition` verdict with
   * `optInDetector: 'in-response-repetition'`; never blocks.
   */
  repetition?: boolean | DoomLoopRepetitionOptions;
  /**
   * Opt-in: effect-aware streaks. An identical repeat is not loop evidence
   * when, since its previous identical call, a tool declared `'write'`
   * (`loopEffects`, an MCP tool's annotations, the coding agents' edit
   * tools in the hooks) ran with arguments new to it and did not fail: a
   * test re-run after a new edit is progress, even when it fails the same
   * way. A write that repeats identically keeps its own streak; `'read'`
   * and undeclared tools change nothing.
   */
  effects?: boolean;
}

/** Options of the opt-in novelty-aware streaks. */
export interface DoomLoopNoveltyOptions {
  /** Compare results with every run of digits masked (timings, ids). Default false. */
  maskDigits?: boolean;
}

/** Options of the opt-in in-response repetition detector. */
export interface DoomLoopRepetitionOptions {
  /** Occurrences of one sentence that make a response chant (≥ 2). Default 20. */
  minRepeats?: number;
  /** Shortest sentence counted, in characters. Default 16. */
  minChars?: number;
}

/** The `doomLoop` option: `true` for the defaults, a config object, or `false` / absent for off. */
export type DoomLoopOption = boolean | DoomLoopConfig;

/** Consecutive-repetition counter for one identity (a tool, or the assistant's text). */
export interface DoomLoopStreak {
  /** The identity the streak counts. */
  fingerprint: string;
  /** Consecutive rounds (or turns) with that identity. */
  streak: number;
  /**
   * The full fingerprint set of the tool's last round, present only when
   * that round had more than one distinct call, so a resumed run knows which
   * set earned the count. Never present on the text streak.
   */
  roundFingerprints?: readonly string[];
  /**
   * Per-call streaks of the tool's last round (fingerprint → consecutive
   * rounds that exact call was issued in): the evidence of the per-call
   * detector, persisted so a repeat spanning a save/resume keeps counting.
   * Omitted when `fingerprint` + `streak` already say the same. Never
   * present on the text streak.
   */
  callStreaks?: Record<string, number>;
}

/**
 * Plain-JSON detector state, persisted as `ConversationState.doomLoop` so
 * loop memory survives serialize → resume. Blobs are interchangeable with
 * the reference's: either side restores the other's.
 */
export interface DoomLoopSerializedState {
  /** Per-tool streaks keyed by tool name; interleaved other tools do not reset a tool's streak. */
  tools: Record<string, DoomLoopStreak>;
  /** Cross-turn assistant-text streak. */
  text?: DoomLoopStreak;
  /**
   * The verdict that condemned the run, when a `stop` armed (engine-owned:
   * kept across decision-only resumes, cleared by a fresh turn).
   */
  stopVerdict?: DoomLoopVerdict;
  /** Steer guidance queued but not yet delivered when the run paused (engine-owned). */
  pendingSteer?: string[];
  /** Escalations consumed, so a resumed run cannot reset its budget. */
  escalationsUsed?: number;
  /**
   * Not in the reference: the opt-in detectors' evidence, present only when
   * one is configured and has evidence. Bounded, plain JSON, validated on
   * restore; the reference ignores the key.
   */
  beyond?: Record<string, unknown>;
}

/**
 * The result of resolving a tool's `loopKey` declaration against one call's
 * arguments (see {@link resolveLoopKeyMaterial}).
 */
export type LoopKeyResolution =
  | {
      /** The tool (or this call) is exempt from detection. */
      kind: 'exempt';
    }
  | {
      /** The declaration produced the identity. */
      kind: 'key';
      /** What the call's fingerprint is computed from. */
      keyMaterial: unknown;
    }
  | {
      /** The declaration could not be used; the full arguments stand in. */
      kind: 'fallback';
      /** The full arguments. */
      keyMaterial: unknown;
      /** Why the declaration was not used (the reference's text). */
      warning: string;
    };

/** Escalation config with the budget resolved. */
export interface ResolvedEscalationConfig {
  /** Model for the escalated turn, when configured. */
  model?: string;
  /** Advisor parameters, when configured (never `false` here). */
  advisor?: boolean | Record<string, unknown>;
  /** The resolved escalation budget (default 2). */
  maxEscalations: number;
}

/** The fully resolved config the monitor runs (from {@link resolveDoomLoopOption}). */
export interface ResolvedDoomLoopConfig {
  /** Every rung resolved to a threshold or `false`. */
  ladder: Required<DoomLoopLadder>;
  /** Every text option resolved. */
  text: Required<DoomLoopTextOptions>;
  /** The escalation mechanism, or `null` when none is configured. */
  escalation: ResolvedEscalationConfig | null;
  /**
   * Not in the reference: the opt-in detectors that run, present only when
   * at least one is configured (so the reference's defaults resolve to the
   * reference's exact object).
   */
  beyond?: ResolvedDoomLoopBeyond;
}

/** A detected repeating token block at the tail of a response. */
export interface TextRepetitionResult {
  /** Consecutive repeats of the block (feeds the ladder as the streak). */
  repeats: number;
  /** Block length in whitespace-delimited tokens. */
  periodTokens: number;
  /** `repeats × periodTokens`. */
  coveredTokens: number;
  /** The repeating block itself. */
  sample: string;
}

//#endregion

//#region Opt-in detectors (not in the reference)

/**
 * The opt-in detectors, named in {@link DoomLoopVerdict.optInDetector}:
 * `tool-cycle` (`cycles`), `no-progress` (`ledger`), `tool-failure`
 * (`failures`), `budget` (`budget`).
 */
export type DoomLoopOptInDetectorKind = 'tool-cycle' | 'no-progress' | 'tool-failure' | 'budget' | 'in-response-repetition';

/** Options of the opt-in cycle detector. */
export interface DoomLoopCycleOptions {
  /** Longest cycle searched for, in rounds. Default 4. */
  maxPeriod?: 2 | 3 | 4;
}

/** Options of the opt-in budget guard (in whatever unit you feed to {@link DoomLoopMonitor.recordSpend}). */
export interface DoomLoopBudgetOptions {
  /** Stop once this much was spent in turns where a loop was suspected. */
  maxSpendWhileLooping?: number;
  /** Stop once this much was spent in all. */
  maxSpend?: number;
  /**
   * The unit named in the verdict message. Default `"tokens"`. With
   * {@link withDoomLoop}, `"usd"` feeds `usage.cost` instead of
   * input + output tokens.
   */
  unit?: string;
}

/** Options of the opt-in outcome-aware streaks. */
export interface DoomLoopOutcomeOptions {
  /** A result is new when it is not among this many latest results of the same call. Default 2. */
  recent?: number;
  /** Compare results with every run of digits masked (timings, ids). Default false. */
  maskDigits?: boolean;
}

/** The opt-in detectors of a resolved config (only the configured ones are present). */
export interface ResolvedDoomLoopBeyond {
  /** Cycle detection, with the period resolved. */
  cycles?: {
    /** The longest cycle searched for (2..4). */
    maxPeriod: 2 | 3 | 4;
  };
  /** The progress ledger runs. */
  ledger?: true;
  /** The failure streak runs. */
  failures?: true;
  /** The budget guard, with the unit resolved. */
  budget?: {
    /** The limit on spend while a loop was suspected, if set. */
    maxSpendWhileLooping?: number;
    /** The limit on all spend, if set. */
    maxSpend?: number;
    /** The unit named in messages (default `"tokens"`). */
    unit: string;
  };
  /** Outcome-aware streaks, with both options resolved. */
  outcomes?: {
    /** How many latest results of a call a new result is compared with. */
    recent: number;
    /** Whether digit runs are masked before comparing. */
    maskDigits: boolean;
  };
  /** Novelty-aware streaks, with the option resolved. */
  novelty?: {
    /** Whether digit runs are masked before comparing. */
    maskDigits: boolean;
  };
  /** In-response repetition, with both options resolved. */
  repetition?: {
    /** Occurrences of one sentence that make a response chant. */
    minRepeats: number;
    /** Shortest sentence counted, in characters. */
    minChars: number;
  };
  /** Effect-aware streaks are on. */
  effects?: true;
}

/** A verdict raised by one of the opt-in detectors. */
export interface DoomLoopOptInVerdict extends DoomLoopVerdict {
  /** The opt-in detector that raised it. */
  optInDetector: DoomLoopOptInDetectorKind;
}

/**
 * A tool cycling through the same calls (`cycles`). Returned by
 * `recordToolCall` when it is stronger than the fingerprint verdict; may
 * `block` like one.
 */
export interface DoomLoopToolCycleVerdict extends DoomLoopOptInVerdict {
  /** The record's kind: `tool-fingerprint`, or `server-tool-fingerprint` for a server-tool record. */
  detector: 'tool-fingerprint' | 'server-tool-fingerprint';
  /** Always `tool-cycle`. */
  optInDetector: 'tool-cycle';
  /** The tool that cycles. */
  toolName: string;
}

/** The same outcome while the inputs change (`ledger`). Post-execution: never `block`. */
export interface DoomLoopNoProgressVerdict extends DoomLoopOptInVerdict {
  /** Always `tool-fingerprint`. */
  detector: 'tool-fingerprint';
  /** Always `no-progress`. */
  optInDetector: 'no-progress';
  /** The tool whose outcome does not change. */
  toolName: string;
}

/** A tool failing round after round (`failures`). Post-execution: never `block`. */
export interface DoomLoopToolFailureVerdict extends DoomLoopOptInVerdict {
  /** Always `tool-fingerprint`. */
  detector: 'tool-fingerprint';
  /** Always `tool-failure`. */
  optInDetector: 'tool-failure';
  /** The failing tool. */
  toolName: string;
}

/** The spend limit reached (`budget`): always `stop`, names no tool. */
export interface DoomLoopBudgetVerdict extends DoomLoopOptInVerdict {
  /** Always `text-streak`: fed per model response like the text detectors, and names no tool. */
  detector: 'text-streak';
  /** Always `budget`. */
  optInDetector: 'budget';
  /** Always `stop`. */
  action: 'stop';
}

//#endregion

//#region Defaults and functions

/**
 * Default ladder: observe at 2 consecutive identical rounds, block at 3,
 * stop at 6; steer and escalate off. Frozen.
 */
export declare const DEFAULT_DOOM_LOOP_LADDER: Readonly<Required<DoomLoopLadder>>;

/** Default escalation budget when the rung is enabled without a cap. */
export declare const DEFAULT_MAX_ESCALATIONS: 2;

/**
 * Not in the reference: the recommended opt-in option (frozen), measured on
 * recorded agent runs — the reference's ladder with outcome-aware streaks.
 * `doomLoop: true` stays the reference's exact defaults.
 *
 * @example
 * withDoomLoop(request, { doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
 */
export declare const RECOMMENDED_DOOM_LOOP_OPTION: Readonly<DoomLoopConfig>;

/**
 * Deepest nesting {@link canonicalizeKeyMaterial} accepts; deeper key
 * material throws (a catchable error, never a stack overflow).
 */
export declare const MAX_CANONICALIZE_DEPTH: 64;

/**
 * What {@link init} can load the module from: a URL (string or `URL`), a
 * `Request` / `Response` (or a promise of one), the module's bytes, or a
 * compiled `WebAssembly.Module`. Described structurally so no DOM types are
 * needed to compile against this file.
 */
export type InitInput =
  | string
  | {
      /** A `URL`'s address. */
      readonly href: string;
    }
  | ArrayBuffer
  | ArrayBufferView
  | PromiseLike<unknown>
  | object;

/**
 * Loads the wasm module. A no-op in Node, Bun, Deno and Workers (loading is
 * synchronous there); required once in browsers and bundlers before the
 * first synchronous call. Idempotent: later calls return the same promise.
 *
 * @param input where to load the module from; default the `.wasm` next to the entry.
 * @example
 * import { init, fingerprintToolCallSync } from 'doom-loop-wasm';
 * await init();
 * fingerprintToolCallSync('bash', { command: 'ls' });
 */
export declare function init(input?: InitInput): Promise<void>;

/**
 * Normalizes the `doomLoop` option: `undefined` / `false` → `null`
 * (detection off), `true` → every default, a config object → resolved.
 * Warns (with the reference's text) about configurations that are accepted
 * but probably not meant: block without stop, dead rungs, an escalate rung
 * without a mechanism and vice versa.
 *
 * Overloaded like the reference's, so `new DoomLoopMonitor(resolveDoomLoopOption(true))`
 * compiles without a null check.
 *
 * @example
 * const monitor = new DoomLoopMonitor(resolveDoomLoopOption(true));
 */
export declare function resolveDoomLoopOption(option: DoomLoopConfig | true): ResolvedDoomLoopConfig;
/**
 * Normalizes a caller's raw `doomLoop` option; `null` when detection is off.
 */
export declare function resolveDoomLoopOption(option: DoomLoopOption | undefined): ResolvedDoomLoopConfig | null;

/**
 * Resolves a tool's `loopKey` declaration against one call's arguments:
 *
 * - absent → the full arguments;
 * - `false` → the tool is exempt;
 * - a field list (`['command', 'cwd']`) → those fields; an empty list, or
 *   one whose fields are all absent, falls back to the full arguments with
 *   a warning (it would give every call the same identity);
 * - a function → called with the arguments: `null` exempts this call,
 *   `undefined` falls back (with a warning), a throw falls back, any other
 *   value is the identity.
 *
 * @example
 * resolveLoopKeyMaterial(['command'], { command: 'ls', cwd: '/tmp' });
 * // → { kind: 'key', keyMaterial: { command: 'ls' } }
 */
export declare function resolveLoopKeyMaterial(loopKey: unknown, args: Record<string, unknown>): LoopKeyResolution;

/**
 * RFC 8785 (JCS) canonical JSON, as the reference writes it: object keys
 * sorted by UTF-16 code units, `JSON.stringify` serialization of strings and
 * numbers; `undefined`, functions and symbols dropped from objects and
 * `null` in arrays.
 *
 * @throws Error for NaN/Infinity, bigint, cycles and nesting deeper than
 * {@link MAX_CANONICALIZE_DEPTH} (the reference's messages).
 * @example
 * canonicalizeKeyMaterial({ b: 2, a: [1, 'x'] }); // '{"a":[1,"x"],"b":2}'
 */
export declare function canonicalizeKeyMaterial(value: unknown): string;

/**
 * Fingerprints a tool call: `sha256(utf8(toolName + "\n" + jcs(keyMaterial)))`,
 * 64 lowercase hex digits — the cross-port contract. Throws synchronously on
 * unrepresentable key material, like the reference.
 */
export declare function fingerprintToolCall(toolName: string, keyMaterial: unknown): Promise<string>;

/**
 * The synchronous twin of {@link fingerprintToolCall} (the reference cannot
 * offer one: WebCrypto is async).
 *
 * @example
 * fingerprintToolCallSync('bash', { cwd: '/tmp', command: 'ls -la' });
 * // 'c3430466c9a1a7c11c8e23328fcf3057189c44d86839527ac6e61bb4574410d4'
 */
export declare function fingerprintToolCallSync(toolName: string, keyMaterial: unknown): string;

/** Fingerprints arbitrary key material: `sha256(utf8(jcs(keyMaterial)))`, lowercase hex. */
export declare function fingerprintKeyMaterial(keyMaterial: unknown): Promise<string>;

/** The synchronous twin of {@link fingerprintKeyMaterial}. */
export declare function fingerprintKeyMaterialSync(keyMaterial: unknown): string;

/**
 * Detects a token block repeating at the tail of `text` ("I am stuck. I am
 * stuck. …"): whitespace tokens, exact repeats, ties to the smallest
 * period. Only the trailing window is read, so huge responses stay cheap.
 * `null` when nothing meets the thresholds.
 *
 * @example
 * detectTextRepetition('I am stuck. '.repeat(6));
 * // { repeats: 6, periodTokens: 3, coveredTokens: 18, sample: 'I am stuck.' }
 */
export declare function detectTextRepetition(text: string, options?: Partial<DoomLoopTextOptions>): TextRepetitionResult | null;

/**
 * Maps a streak onto the strongest crossed ladder rung, or `undefined`.
 * `allowBlock: false` (text and server-tool verdicts) lets a block-level
 * streak fall through to escalate/steer/observe; `allowEscalate: false` skips
 * the escalate rung.
 */
export declare function resolveLadderAction(
  ladder: Required<DoomLoopLadder>,
  streak: number,
  options: {
    /** False when there is nothing to block (text, server tools). */
    allowBlock: boolean;
    /** False when no escalation mechanism or budget remains. Default true. */
    allowEscalate?: boolean;
  },
): DoomLoopAction | undefined;

//#endregion

//#region Monitor

/** Options of {@link DoomLoopMonitor.recordToolCall}. */
export interface RecordToolCallOptions {
  /** False for post-execution records (server tools): block is meaningless. Default true. */
  allowBlock?: boolean;
  /** Verdict detector label. Default `'tool-fingerprint'`. */
  detector?: Extract<DoomLoopDetectorKind, 'tool-fingerprint' | 'server-tool-fingerprint'>;
}

/** One call of a round to declare: its tool and its resolved key material. */
export interface DoomLoopDeclaredCall {
  /** The tool. */
  toolName: string;
  /** The call's identity (see {@link resolveLoopKeyMaterial}). */
  keyMaterial: unknown;
}

/**
 * The detector: a pure state machine over the recorded transcript. Feed it
 * rounds, tool calls and assistant texts; get verdicts back. Holds no engine
 * concerns (blocking, steering, stopping are the caller's). State is bounded
 * plain JSON and round-trips through {@link getState} / {@link restore}.
 *
 * @example
 * const monitor = new DoomLoopMonitor(resolveDoomLoopOption(true));
 * for (let round = 1; round <= 3; round++) {
 *   const record = monitor.recordToolCallSync('get_invoice', { invoice_id: 'INV-2291' }, round);
 *   if (record.verdict) console.log(record.verdict.action); // observe (round 2), block (round 3)
 * }
 */
export declare class DoomLoopMonitor {
  /**
   * @param config the resolved config ({@link resolveDoomLoopOption}).
   * @param initialState a persisted {@link DoomLoopSerializedState} to resume
   *   from; invalid blobs are ignored with a warning.
   */
  constructor(config: ResolvedDoomLoopConfig, initialState?: unknown);
  /**
   * Declares the complete set of calls a round will make, before any of
   * them is recorded, so the round is scored as one set (a superset round is
   * progress, arrival order never matters). Idempotent per round and safe to
   * skip: per-call detection needs no declaration. Unhashable key material
   * is left out with a warning.
   */
  declareRound(round: number, calls: readonly DoomLoopDeclaredCall[]): Promise<void>;
  /** The synchronous twin of {@link declareRound}. */
  declareRoundSync(round: number, calls: readonly DoomLoopDeclaredCall[]): void;
  /**
   * Records one tool call and returns its streak record plus any verdict.
   * The same `(tool, fingerprint)` again in the same `round` is a duplicate
   * (`duplicateInRound`, no increment); interleaved other tools do not reset
   * a tool's streak; blocked calls count like any other.
   *
   * With `cycles` configured, a stronger {@link DoomLoopToolCycleVerdict}
   * may come back instead (its `detector` is still the record's kind).
   *
   * @throws Rejects, like the reference, with what
   * {@link canonicalizeKeyMaterial} throws for unhashable key material.
   */
  recordToolCall(toolName: string, keyMaterial: unknown, round: number, options?: RecordToolCallOptions): Promise<DoomLoopCallRecord>;
  /** The synchronous twin of {@link recordToolCall}. */
  recordToolCallSync(toolName: string, keyMaterial: unknown, round: number, options?: RecordToolCallOptions): DoomLoopCallRecord;
  /**
   * Records one turn's assistant text and returns the stronger verdict of
   * the two text detectors (`text-repetition` within the response,
   * `text-streak` across turns). Whitespace-only text is a no-op.
   */
  recordAssistantText(text: string): Promise<DoomLoopVerdict | undefined>;
  /** The synchronous twin of {@link recordAssistantText}. */
  recordAssistantTextSync(text: string): DoomLoopVerdict | undefined;
  /**
   * Not in the reference: records one executed call's result for the opt-in
   * progress ledger (`ledger`), failure streak (`failures`) and outcome-aware
   * streaks (`outcomes`); a no-op returning `undefined` unless one is
   * configured. Post-execution, so the
   * verdict never blocks; `stop` still stops.
   *
   * @param toolName the tool.
   * @param inputFingerprint the call's fingerprint from {@link recordToolCallSync}.
   * @param outcome the result's identity (e.g. its `loopOutputKey` material);
   *   `undefined` leaves the ledger out for this result.
   * @param failed whether the call failed (threw, or returned an error).
   * @param round the round the call was recorded in.
   * @throws what {@link canonicalizeKeyMaterial} throws for `outcome`; the state is unchanged then.
   */
  recordToolResultSync(
    toolName: string,
    inputFingerprint: string,
    outcome: unknown,
    failed: boolean,
    round: number,
  ): DoomLoopNoProgressVerdict | DoomLoopToolFailureVerdict | undefined;
  /**
   * Not in the reference: feeds one model response's spend (tokens or cost)
   * to the opt-in budget guard. Returns a `stop` verdict once the limit is
   * reached; `undefined` otherwise, and always without `budget` configured.
   * Non-finite and negative amounts count as 0.
   */
  recordSpend(amount: number): DoomLoopBudgetVerdict | undefined;
  /**
   * Clears the cross-turn text streak (the run made observable progress,
   * e.g. a late async result arrived). Tool streaks are kept.
   */
  resetTextStreak(): void;
  /** True while the escalate rung can still fire: a mechanism is configured and budget remains. */
  canEscalate(): boolean;
  /** Consumes one escalation; call it when the recovery is actually applied. */
  consumeEscalation(): void;
  /**
   * A deep copy of the serializable detector state (round markers dropped).
   * `stopVerdict` / `pendingSteer` are the engine's to merge in.
   */
  getState(): DoomLoopSerializedState;
  /**
   * Restores persisted state. Invalid blobs are ignored with the
   * reference's warning; entries are validated one by one (streaks clamped,
   * hostile names inert). Engine-owned fields are ignored here.
   */
  restore(state: unknown): void;
  /**
   * Not in the reference: frees the wasm memory now; otherwise a
   * `FinalizationRegistry` reclaims it eventually. Idempotent; the monitor
   * is unusable afterwards (its methods throw `DoomLoopMonitor was freed`).
   * The monitor also has `[Symbol.dispose]()` where the runtime defines
   * `Symbol.dispose`, so `using monitor = new DoomLoopMonitor(…)` frees it
   * at the end of the block (not declared here, so that these types compile
   * without the `esnext.disposable` lib).
   */
  free(): void;
}

//#endregion

//#region Replay (trace tooling)

/** One call of a replay timeline. */
export interface TimelineCall {
  /** The tool. */
  toolName: string;
  /** The call's fingerprint; `null` when it had no usable identity (exempt or unhashable). */
  fingerprint: string | null;
  /** The effective streak (0 when exempt). */
  streak: number;
  /** A repeat of an earlier call of this round (shares its decision). */
  duplicateInRound: boolean;
  /** `loopKey: false` or a `null` identity: not tracked. */
  exempt: boolean;
  /** The arguments were not valid JSON (identified by their raw text). */
  malformed: boolean;
  /** The verdict, when a rung was reached. */
  verdict: DoomLoopVerdict | null;
}

/** One round of a replay timeline. */
export interface TimelineRound {
  /** The round number (1-based). */
  round: number;
  /** The verdict on the round's assistant text, if any. */
  textVerdict: DoomLoopVerdict | null;
  /** The round's calls, in order. */
  calls: TimelineCall[];
}

/** The result of {@link replayTranscript}. */
export interface Timeline {
  /** The rounds replayed (up to and including the one that stopped the run). */
  rounds: TimelineRound[];
  /** How many rounds the transcript has. */
  totalRounds: number;
  /** The verdict that stopped the run, if one did. */
  stopVerdict: DoomLoopVerdict | null;
  /** The resolver's and the detector's warnings. */
  warnings: string[];
  /** The detector state after the last replayed round. */
  state: DoomLoopSerializedState;
  /** The terminal rendering (what `doomloop replay` prints). */
  text: string;
}

/**
 * Replays a recorded run through a fresh detector and returns its
 * timeline. Accepts `{ doomLoop?, loopKeys?, rounds: [{ text?, calls:
 * [{ toolName, args }] }] }`, an OpenAI chat message list, or a Responses
 * item list.
 *
 * @throws Error naming what is wrong and where, for a transcript it cannot read.
 * @example
 * const timeline = replayTranscript({
 *   rounds: [1, 2, 3].map(() => ({ calls: [{ toolName: 'get_invoice', args: { invoice_id: 'INV-2291' } }] })),
 * });
 * timeline.rounds[2].calls[0].verdict?.action; // 'block'
 */
export declare function replayTranscript(transcript: unknown): Timeline;

//#endregion

//#region callModel adapter (@openrouter/agent@0.8.0)

/**
 * A tool's loop identity, as the reference's `loopKey`:
 *
 * - a function of the call's arguments returning the key material — return
 *   `null` to exempt this call; `undefined` (or a throw) falls back to the
 *   full arguments with a warning;
 * - a field list (`['command', 'cwd']`), typed as names of the arguments;
 * - `false` to exempt the tool.
 *
 * @typeParam Args the tool's (parsed, validated) arguments.
 */
export type LoopKey<Args = Record<string, unknown>> =
  | LoopKeyFunction<Args>
  | readonly (Args extends object ? Extract<keyof Args, string> : string)[]
  | false;

/**
 * The function form of {@link LoopKey}. Declared bivariantly (like the
 * SDK's own tool callbacks), so a callback annotated with a tool's exact
 * argument type is accepted where only `Record<string, unknown>` is known.
 */
export type LoopKeyFunction<Args = Record<string, unknown>> = {
  bivarianceHack(args: Args): unknown;
}['bivarianceHack'];

/** A tool's declared effect on what later calls observe (`loopEffects`): `'write'` (an edit) or `'read'` (a search, a calculation). */
export type LoopEffect = 'write' | 'read';

/**
 * A tool's result identity for the opt-in progress ledger (`loopOutputKey`):
 * a function of the result (`null` leaves this result out), a field list, or
 * `false` to keep the tool out of the ledger. Without one the whole result
 * is the outcome (a thrown error: `{ error: message }`).
 *
 * @typeParam Result the tool's result.
 */
export type LoopOutputKey<Result = unknown> =
  | { bivarianceHack(result: Result): unknown }['bivarianceHack']
  | readonly (Result extends object ? Extract<keyof Result, string> : string)[]
  | false;

/**
 * The arguments type of an `@openrouter/agent` tool, read from its zod
 * `inputSchema` (the schema's output type); `Record<string, unknown>` when
 * it cannot be read.
 */
export type ToolArgs<T> = T extends { function: { inputSchema: { _zod: { output: infer O } } } }
  ? O
  : Record<string, unknown>;

/**
 * The result type of an `@openrouter/agent` tool: what its `execute`
 * returns (awaited); `unknown` for generator, manual and other tools.
 */
export type ToolResult<T> = T extends { function: { execute: (...args: never[]) => infer R } }
  ? R extends AsyncGenerator<unknown, unknown, unknown>
    ? unknown
    : Awaited<R>
  : unknown;

/**
 * The loop declarations {@link withLoopKey} attaches to a tool's `function`,
 * where {@link withDoomLoop} reads them (`tool()` of 0.8.0 drops unknown
 * config keys, so they cannot be passed to `tool()` itself).
 */
export interface ToolLoopKeys<Args = Record<string, unknown>, Result = unknown> {
  /** The tool's loop identity (see {@link LoopKey}); default: the full arguments. */
  loopKey?: LoopKey<Args>;
  /** The tool's result identity for the opt-in ledger (see {@link LoopOutputKey}). */
  loopOutputKey?: LoopOutputKey<Result>;
  /** The tool's effect for the opt-in `effects` rule: `'write'` (it changes what later calls observe) or `'read'`. */
  loopEffect?: LoopEffect;
}

/**
 * Returns a copy of an `@openrouter/agent` tool with `loopKey` and/or
 * `loopOutputKey` on its `function`, where {@link withDoomLoop} reads them.
 * The callbacks are typed from the tool: their argument is the tool's
 * input-schema type, field lists are checked against its fields. The tool
 * itself is not modified; the copy works anywhere the tool does.
 *
 * @throws TypeError when `tool` has no `function` object or `keys` is not an object.
 * @example
 * const getInvoice = withLoopKey(
 *   tool({
 *     name: 'get_invoice',
 *     inputSchema: z.object({ invoice_id: z.string() }),
 *     execute: async ({ invoice_id }) => fetchInvoice(invoice_id),
 *   }),
 *   // invoice_id is a string here: "INV-2291" and "inv-2291 " are one call.
 *   { loopKey: ({ invoice_id }) => invoice_id.trim().toUpperCase() },
 * );
 */
export declare function withLoopKey<
  T extends {
    /** The tool's function definition (`name`, `inputSchema`, `execute`, …). */
    function: object;
  },
>(
  tool: T,
  keys: ToolLoopKeys<ToolArgs<T>, ToolResult<T>>,
): T & {
  /** The tool's function definition, with the loop declarations attached. */
  function: ToolLoopKeys<ToolArgs<T>, ToolResult<T>>;
};

/**
 * Options of {@link withDoomLoop}.
 *
 * `loopKeys` / `loopOutputKeys` are keyed by tool name, which 0.8.0's tool
 * types do not carry as a literal, so their callbacks receive
 * `Record<string, unknown>` / `unknown`. For callbacks typed from the tool's
 * schema use {@link withLoopKey}, or annotate the parameter:
 *
 * @example
 * withDoomLoop(request, {
 *   loopKeys: {
 *     get_invoice: ({ invoice_id }: { invoice_id: string }) => invoice_id.trim().toUpperCase(),
 *     poll_job: false, // never a loop
 *     bash: ['command', 'cwd'],
 *   },
 * });
 */
export interface WithDoomLoopOptions {
  /**
   * The detector configuration: `true` (default) for the reference's
   * defaults, a {@link DoomLoopConfig}, or `false` for off (a plain copy of
   * the input comes back, with the read-only methods). `input.doomLoop` is
   * also read (and removed before sending); this option wins.
   */
  doomLoop?: DoomLoopOption;
  /**
   * Per-tool loop identity, by tool name (see {@link LoopKey}); overrides a
   * `loopKey` on the tool itself.
   */
  loopKeys?: Record<string, LoopKey>;
  /**
   * Per-tool result identity for the opt-in progress ledger, by tool name
   * (see {@link LoopOutputKey}); overrides a `loopOutputKey` on the tool.
   */
  loopOutputKeys?: Record<string, LoopOutputKey>;
  /** Per-tool effect by tool name for the opt-in `effects` rule: `'write'` or `'read'`; overrides a `loopEffect` on the tool. */
  loopEffects?: Record<string, LoopEffect>;
  /**
   * Called with every verdict (the stand-in for the reference's
   * `DoomLoopDetected` hook, and the only visible effect of `observe`).
   * Observation only: it cannot change the action; a throw is logged and
   * ignored.
   */
  onDetected?: (verdict: DoomLoopVerdict) => void;
}

/** How a run ended: the SDK's `SessionEnd` reason, or `doom_loop` when the adapter's stop ended it. */
export type DoomLoopEndReason = 'doom_loop' | 'complete' | 'max_turns' | 'error' | 'user';

/** The read-only methods {@link withDoomLoop} adds (non-enumerable, so never sent). */
export interface DoomLoopRunInfo {
  /**
   * The `stop` verdict that halted the run (or keeps halting it after a
   * decision-only resume); `null` when detection did not stop it — check
   * before use (`getDoomLoopVerdict()?.message`).
   */
  getDoomLoopVerdict(): DoomLoopVerdict | null;
  /**
   * How the run ended; `undefined` until it has. `'doom_loop'` when the
   * adapter's stop ended it (0.8.0 itself reports `'max_turns'` for every
   * stop condition).
   */
  getDoomLoopEndReason(): DoomLoopEndReason | undefined;
  /** Every verdict of the run so far, in order (a copy). */
  getDoomLoopVerdicts(): DoomLoopVerdict[];
  /** The detector snapshot persisted as `ConversationState.doomLoop` (the reference's shape). */
  getDoomLoopState(): DoomLoopSerializedState;
}

/** A `callModel` request with doom-loop detection and its {@link DoomLoopRunInfo} methods. */
export type WithDoomLoop<T> = T & DoomLoopRunInfo;

/**
 * Adds doom-loop detection to an `@openrouter/agent@0.8.0` `callModel`
 * request, through its own hook points (`onTurnStart`, `hooks.PreToolUse`,
 * `stopWhen`, `onTurnEnd`, per-turn `instructions` / `model`, the `state`
 * accessor). Returns a new request (the input is not modified); use one per
 * `callModel` call — detector memory crosses runs through `state`.
 *
 * @throws TypeError when `input` is not an object.
 * @example
 * const request = withDoomLoop({ model, input, tools: [getInvoice], stopWhen: stepCountIs(40) });
 * const text = await client.callModel(request).getText();
 * if (request.getDoomLoopEndReason() === 'doom_loop') {
 *   console.warn(request.getDoomLoopVerdict()?.message);
 * }
 */
export declare function withDoomLoop<T extends object>(input: T, options?: WithDoomLoopOptions): WithDoomLoop<T>;

//#endregion

//#region Session engine (not in the reference)

/**
 * What a host can do. A rung the host cannot carry out is skipped — its
 * verdicts fall through to weaker rungs — and constructing the session
 * warns once, as resolving the option warns about a dead rung. Every
 * capability defaults to `true`.
 */
export interface DoomLoopCapabilities {
  /** The host can refuse a tool call (the `block` rung). */
  refuse?: boolean;
  /** The host can halt the run (the `stop` rung). */
  stop?: boolean;
  /** The host can add guidance to the next request (the `steer` rung). */
  steer?: boolean;
  /** The host can run the next request on another model (the `escalate` rung). */
  escalate?: boolean;
}

/** Options of {@link DoomLoopSession}. */
export interface DoomLoopSessionOptions {
  /** The `doomLoop` option: `true` (default) for the reference defaults, a config, or `false` (detection off: every call runs). */
  doomLoop?: DoomLoopOption;
  /** Per-tool loop identity by tool name: a function `(args) => keyMaterial | null`, a field list, or `false` (exempt). */
  loopKeys?: Record<string, unknown>;
  /** Per-tool result identity by tool name (a function — sync or async —, a field list, or `false`): what outcome-aware streaks and the ledger compare. */
  loopOutputKeys?: Record<string, unknown>;
  /** Per-tool effect by tool name: `'write'` (the tool changes what later calls observe, e.g. an edit) or `'read'`; read by the opt-in `effects` rule (a repeat after a new write is not loop evidence). Any other value is warned about and the tool's effect left unknown. */
  loopEffects?: Record<string, LoopEffect>;
  /** A persisted {@link DoomLoopSession.getState} (or the reference's `doomLoop` blob) to resume; a corrupt one is dropped with the reference's warning. */
  state?: unknown;
  /** What the host can do (default: everything). */
  capabilities?: DoomLoopCapabilities;
  /** Called for every verdict, in order (observation only; a throw is logged and ignored). */
  onDetected?: (verdict: DoomLoopVerdict) => void;
}

/** One tool call of a response, as a host passes it to {@link DoomLoopSession.onResponse}. */
export interface DoomLoopSessionCall {
  /** The host's id of the call; results and {@link DoomLoopSession.decision} name it. */
  id: string;
  /** The tool. */
  toolName: string;
  /** The parsed arguments, or their raw text (parsed here; text that is not JSON is a malformed call, identified by the text). */
  args?: unknown;
  /** Set `true` when `args` is raw text that did not parse (default: decided here for string `args`). */
  malformed?: boolean;
}

/** The decision for one call. */
export interface DoomLoopDecision {
  /** The call's id. */
  id: string;
  /** The tool. */
  toolName: string;
  /** `run` it, or `refuse` it (the model reads {@link message} instead of a result). */
  action: 'run' | 'refuse';
  /** What the model reads when the call is refused (the verdict's text, or the halt's); `null` when it runs. */
  message: string | null;
  /** The verdict behind the decision, if a rung was reached (an in-round duplicate carries its first call's). */
  verdict: DoomLoopVerdict | null;
  /** The call's fingerprint; `null` when exempt, unhashable, or halted before recording. */
  fingerprint: string | null;
  /** The effective streak the call was scored with. */
  streak: number;
  /** An identical call came earlier in the same response: this one shares its decision and counts once. */
  duplicateInRound: boolean;
  /** The call is not monitored (`loopKey: false`, a `null` loop key, or unhashable). */
  exempt: boolean;
  /** The arguments were not JSON: the raw text identified the call. */
  malformed: boolean;
}

/** What {@link DoomLoopSession.onResponse} returns. */
export interface DoomLoopRound {
  /** The round the calls were recorded in (every response opens one, calls or not; `0` when the run is halted). */
  round: number;
  /** The verdict on the response's text, if any. */
  textVerdict: DoomLoopVerdict | null;
  /** One decision per call, in order. */
  decisions: DoomLoopDecision[];
  /** Set once the run is halted: the verdict and its text. */
  halt: DoomLoopHalt | null;
}

/** Why a run is halted ({@link DoomLoopRound.halt}). */
export interface DoomLoopHalt {
  /** The verdict that halted the run. */
  verdict: DoomLoopVerdict;
  /** Its text. */
  message: string;
}

/** A model response, as a host passes it to {@link DoomLoopSession.onResponse}. */
export interface DoomLoopSessionResponse {
  /** The assistant text. */
  text?: string | null;
  /** The tool calls, in order. */
  calls?: DoomLoopSessionCall[];
}

/** Options of {@link DoomLoopSession.onResult}. */
export interface DoomLoopResultOptions {
  /** The call failed (default: it threw, or returned an object with an `error`). */
  failed?: boolean;
  /** What the tool threw (its identity is `{ error: message }`). */
  error?: unknown;
  /** The tool (default: the session's record of the call). */
  toolName?: string;
}

/** What the next model request must carry ({@link DoomLoopSession.nextRequest}). */
export interface DoomLoopRequestPatch {
  /** Steer guidance to append to the request's instructions; `null` when none. */
  guidance: string | null;
  /** The escalation model to run the request on (`escalation.model`); `null`: the usual model. */
  model: unknown;
}

/**
 * The session engine: one agent run mapped onto the detector — a response's
 * calls become one round (parallel duplicates count once), each call gets a
 * decision, results feed outcome-aware streaks, steer and escalate shape the
 * next request, a stop halts the run, and the state persists and resumes.
 * Every decision is made in the Rust core (the same engine
 * `replayTranscript` and `doomloop eval` run). Detection never fails the
 * agent: an internal error turns the session observe-only with one warning.
 *
 * @example
 * const session = new DoomLoopSession({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
 * const { decisions, halt } = session.onResponse({ text, calls: [{ id: 'c1', toolName: 'search', args: { q } }] });
 * for (const d of decisions) if (d.action === 'refuse') reply(d.id, d.message);
 */
export declare class DoomLoopSession {
  /** A session for a fresh run, or resuming `options.state`. Throws only for an invalid `doomLoop` option (the reference's `TypeError`). */
  constructor(options?: DoomLoopSessionOptions);
  /** The resolved config (`null` when detection is off). */
  readonly config: ResolvedDoomLoopConfig | null;
  /** The current round number (0 before the first). */
  readonly round: number;
  /** `false` when detection is off or an internal error made the session observe-only. */
  readonly active: boolean;
  /** A model response: its text is checked, then its calls are recorded as one round and decided. */
  onResponse(response: DoomLoopSessionResponse): DoomLoopRound;
  /** One call seen alone (a per-call hook), recorded into the current round (a new one after {@link endRound}); refused with the halt text in a sealed round. A call object is read once. */
  onCall(call: DoomLoopSessionCall): DoomLoopDecision;
  /** Opens a new, empty round now (calls that arrive one by one; server-tool records). */
  beginRound(): void;
  /** The run is halted: every call of the current round is refused with the halt text, unrecorded (no-op when not halted). */
  sealRound(): void;
  /** Closes the current round. */
  endRound(): void;
  /** A response's text alone; its verdict or `null`. */
  onText(text: string): DoomLoopVerdict | null;
  /** A server-side tool's record (never refused); its verdict or `null`. */
  onServerTool(toolName: string, identity: unknown): DoomLoopVerdict | null;
  /**
   * A call's result (what the tool returned; pass `{ error }` when it threw). Its identity is the tool's
   * loopOutputKey; `failed` defaults to "threw, or returned an object with an `error`". A result for a
   * refused, unknown or already answered call is ignored. An async loopOutputKey is awaited (a Promise is returned).
   */
  onResult(
    id: string,
    result: unknown,
    options?: DoomLoopResultOptions,
  ): DoomLoopVerdict | null | Promise<DoomLoopVerdict | null>;
  /** One model response's spend (tokens or cost) for the opt-in budget guard; its verdict or `null`. */
  onSpend(amount: number): DoomLoopVerdict | null;
  /** A new user message: lifts a halt (the evidence stays) and restarts the text streak. */
  onUserTurn(): void;
  /** Re-arms the halt of the restored state (a resume that only answers pending approvals). */
  resumeHalt(): void;
  /** Resumes a persisted state in place (a host that loads it after building the session); fails open like `options.state`. */
  restore(state: unknown): void;
  /** What the model reads for a call not executed because the run is halted; `null` when it is not. */
  haltText(): string | null;
  /** Would these calls, as the next round, halt the run? The session is unchanged. */
  wouldHalt(calls: DoomLoopSessionCall[]): boolean;
  /** The queued steer guidance (joined by newlines), consumed; `null` when none. */
  takeGuidance(): string | null;
  /** Takes a pending escalation: `true` when the next request must run on the escalation model (`apply: false` drops it unspent). */
  takeEscalation(apply?: boolean): boolean;
  /** What the next request carries, consumed once. */
  nextRequest(): DoomLoopRequestPatch;
  /** The decision for a call of the current round, by id; `null` when unknown. */
  decision(id: string): DoomLoopDecision | null;
  /** The verdict that halted the run; `null` otherwise. */
  haltVerdict(): DoomLoopVerdict | null;
  /** Every verdict so far, in order. */
  verdicts(): DoomLoopVerdict[];
  /** The state to persist: the reference's `doomLoop` shape, plus the session's round and calls awaiting results under `session`. */
  getState(): DoomLoopSerializedState;
  /** Releases the session's wasm memory now (idempotent). */
  free(): void;
}

//#endregion
