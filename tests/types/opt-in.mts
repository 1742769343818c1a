// The opt-in detectors' own types: what the monitor's extra methods return,
// and how a consumer tells an opt-in verdict from a reference one.
import {
  DoomLoopMonitor,
  resolveDoomLoopOption,
  type DoomLoopBudgetVerdict,
  type DoomLoopConfig,
  type DoomLoopOptInDetectorKind,
  type DoomLoopVerdict,
  type ResolvedDoomLoopBeyond,
} from 'doom-loop-wasm';

const option: DoomLoopConfig = { cycles: { maxPeriod: 3 }, ledger: true, failures: true, budget: { maxSpend: 1e6, unit: 'usd' } };
const config = resolveDoomLoopOption(option);
export const beyond: ResolvedDoomLoopBeyond | undefined = config.beyond;
export const period: 2 | 3 | 4 | undefined = config.beyond?.cycles?.maxPeriod;
export const recommendedShape: DoomLoopConfig = { outcomes: true, novelty: { maskDigits: true }, repetition: { minRepeats: 20, minChars: 16 }, ladder: { stop: 12 } };
export const chantLimit: number | undefined = resolveDoomLoopOption(recommendedShape).beyond?.repetition?.minRepeats;
export const chantLabel: DoomLoopOptInDetectorKind = 'in-response-repetition';
// @ts-expect-error periods beyond 4 are not searched
export const tooLong: DoomLoopConfig = { cycles: { maxPeriod: 5 } };

const monitor = new DoomLoopMonitor(config);
const record = monitor.recordToolCallSync('get_invoice', { invoice_id: 'INV-2291' }, 1);
const result = monitor.recordToolResultSync('get_invoice', record.fingerprint, { status: 'pending' }, false, 1);
if (result) {
  const kind: 'no-progress' | 'tool-failure' = result.optInDetector;
  const detector: 'tool-fingerprint' = result.detector;
  const tool: string = result.toolName;
  void [kind, detector, tool];
}
const spend: DoomLoopBudgetVerdict | undefined = monitor.recordSpend(1200);
if (spend) {
  const stop: 'stop' = spend.action;
  const detector: 'text-streak' = spend.detector;
  void [stop, detector];
}
/** The label a consumer shows: the opt-in detector when there is one. */
export function label(verdict: DoomLoopVerdict): DoomLoopOptInDetectorKind | DoomLoopVerdict['detector'] {
  return verdict.optInDetector ?? verdict.detector;
}
monitor.free();

// The replay entry's types compile against the main entry's.
import type { EvaluationReport, ReplayedTimeline } from '../../js/replay.js';
declare const replayed: ReplayedTimeline;
export const firstCallResult: unknown = replayed.rounds[0]?.calls[0]?.result;
declare const report: EvaluationReport;
export const blocked: number | undefined = report.options[0]?.total.blocked;
