// Every type the reference exports is mutually assignable with the package's
// (compiled by tests/types/check-types.mjs with tsc --strict; a failure is a
// compile error). Values — constants, functions, the monitor class — must be
// usable wherever the reference's are.
import type * as Ref from './reference-doom-loop.js';
import type * as Pkg from 'doom-loop-wasm';

/** `true` only when A and B are assignable both ways. */
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** `true` only when A is assignable to B. */
type Assignable<A, B> = [A] extends [B] ? true : false;
declare function expectTrue<T extends true>(): void;

// Types, both ways.
expectTrue<Mutual<Ref.DoomLoopAction, Pkg.DoomLoopAction>>();
expectTrue<Mutual<Ref.DoomLoopDetectorKind, Pkg.DoomLoopDetectorKind>>();
expectTrue<Mutual<Ref.DoomLoopVerdict, Pkg.DoomLoopVerdict>>();
expectTrue<Mutual<Ref.DoomLoopCallRecord, Pkg.DoomLoopCallRecord>>();
expectTrue<Mutual<Ref.DoomLoopLadder, Pkg.DoomLoopLadder>>();
expectTrue<Mutual<Ref.DoomLoopEscalationConfig, Pkg.DoomLoopEscalationConfig>>();
expectTrue<Mutual<Ref.DoomLoopTextOptions, Pkg.DoomLoopTextOptions>>();
expectTrue<Mutual<Ref.DoomLoopConfig, Pkg.DoomLoopConfig>>();
expectTrue<Mutual<Ref.DoomLoopOption, Pkg.DoomLoopOption>>();
expectTrue<Mutual<Ref.DoomLoopStreak, Pkg.DoomLoopStreak>>();
expectTrue<Mutual<Ref.DoomLoopSerializedState, Pkg.DoomLoopSerializedState>>();
expectTrue<Mutual<Ref.LoopKeyResolution, Pkg.LoopKeyResolution>>();
expectTrue<Mutual<Ref.ResolvedEscalationConfig, Pkg.ResolvedEscalationConfig>>();
expectTrue<Mutual<Ref.ResolvedDoomLoopConfig, Pkg.ResolvedDoomLoopConfig>>();
expectTrue<Mutual<Ref.TextRepetitionResult, Pkg.TextRepetitionResult>>();

// The same, as the assignments a consumer writes (fresh values, both ways).
declare const refVerdict: Ref.DoomLoopVerdict;
declare const pkgVerdict: Pkg.DoomLoopVerdict;
export const verdictToPkg: Pkg.DoomLoopVerdict = refVerdict;
export const verdictToRef: Ref.DoomLoopVerdict = pkgVerdict;
// The reference engine's own use (model-result.ts): a package verdict's
// detector feeds a parameter typed with the reference's kinds.
export const detectorToRef: Ref.DoomLoopVerdict['detector'] = pkgVerdict.detector;
declare const pkgState: Pkg.DoomLoopSerializedState;
export const stateToRef: Ref.DoomLoopSerializedState = pkgState;
declare const pkgRecord: Pkg.DoomLoopCallRecord;
export const recordToRef: Ref.DoomLoopCallRecord = pkgRecord;
declare const pkgResolved: Pkg.ResolvedDoomLoopConfig;
export const resolvedToRef: Ref.ResolvedDoomLoopConfig = pkgResolved;
declare const refResolved: Ref.ResolvedDoomLoopConfig;
export const resolvedToPkg: Pkg.ResolvedDoomLoopConfig = refResolved;

// The opt-in verdicts are reference verdicts.
expectTrue<Assignable<Pkg.DoomLoopToolCycleVerdict, Ref.DoomLoopVerdict>>();
expectTrue<Assignable<Pkg.DoomLoopNoProgressVerdict, Ref.DoomLoopVerdict>>();
expectTrue<Assignable<Pkg.DoomLoopToolFailureVerdict, Ref.DoomLoopVerdict>>();
expectTrue<Assignable<Pkg.DoomLoopBudgetVerdict, Ref.DoomLoopVerdict>>();
expectTrue<Assignable<Pkg.DoomLoopOptInVerdict, Ref.DoomLoopVerdict>>();

// Values: the package's can stand in for the reference's.
declare const pkg: typeof import('doom-loop-wasm');
export const ladder: typeof Ref.DEFAULT_DOOM_LOOP_LADDER = pkg.DEFAULT_DOOM_LOOP_LADDER;
export const maxEscalations: typeof Ref.DEFAULT_MAX_ESCALATIONS = pkg.DEFAULT_MAX_ESCALATIONS;
export const maxDepth: typeof Ref.MAX_CANONICALIZE_DEPTH = pkg.MAX_CANONICALIZE_DEPTH;
export const resolve: typeof Ref.resolveDoomLoopOption = pkg.resolveDoomLoopOption;
export const resolveKey: typeof Ref.resolveLoopKeyMaterial = pkg.resolveLoopKeyMaterial;
export const canonicalize: typeof Ref.canonicalizeKeyMaterial = pkg.canonicalizeKeyMaterial;
export const fingerprintKey: typeof Ref.fingerprintKeyMaterial = pkg.fingerprintKeyMaterial;
export const fingerprintCall: typeof Ref.fingerprintToolCall = pkg.fingerprintToolCall;
export const detectText: typeof Ref.detectTextRepetition = pkg.detectTextRepetition;
export const resolveLadder: typeof Ref.resolveLadderAction = pkg.resolveLadderAction;
export const Monitor: typeof Ref.DoomLoopMonitor = pkg.DoomLoopMonitor;
declare const pkgMonitor: Pkg.DoomLoopMonitor;
export const monitorToRef: Ref.DoomLoopMonitor = pkgMonitor;
// The reference's overloads keep working against the package.
export const resolvedTrue: Pkg.ResolvedDoomLoopConfig = pkg.resolveDoomLoopOption(true);
export const monitor: Pkg.DoomLoopMonitor = new pkg.DoomLoopMonitor(pkg.resolveDoomLoopOption(true));
