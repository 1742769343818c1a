// Resolving the `doomLoop` option over a wasm module's exports: shared by
// the detector API (api.js, the main module) and the session engine
// (session.js, which also runs on the replay entry's full module). Internal:
// no entry re-exports this file.

import { lower } from './lower.js';

// The core's answer for `true` (the default every session without a
// `doomLoop` option resolves), per module: it never changes, and a fresh
// config is parsed from it each time.
const resolvedTrueAnswers = new WeakMap();

function resolveAnswer(glue, option) {
  if (option !== true) return glue.resolveDoomLoopOption(lower(withStandIns(option)));
  let answer = resolvedTrueAnswers.get(glue);
  if (answer === undefined) {
    answer = glue.resolveDoomLoopOption(lower(true));
    resolvedTrueAnswers.set(glue, answer);
  }
  return answer;
}

export function resolveOptionWith(glue, option) {
  const { resolved, warnings, error } = JSON.parse(resolveAnswer(glue, option));
  for (const warning of warnings) console.warn(warning);
  if (error !== undefined) throw new TypeError(error);
  if (resolved !== null) keepRawValues(resolved, option === true ? {} : option);
  return resolved;
}

// The resolved config crosses the boundary as JSON, which has no room for
// what the reference copies through untouched (text options via `??`, an
// escalation `model` / `advisor` of any type). The core decides on
// stand-ins with the same presence (`true` for a function, symbol or
// bigint mechanism), and the caller's own values are put back here.
const opaque = (value) => typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint';

function withStandIns(option) {
  const escalation = option !== null && typeof option === 'object' ? option.escalation : undefined;
  if (escalation === null || typeof escalation !== 'object') return option;
  const model = escalation.model;
  const advisor = escalation.advisor;
  if (!opaque(model) && !opaque(advisor)) return option;
  return {
    ...option,
    escalation: { ...escalation, model: opaque(model) ? true : model, advisor: opaque(advisor) ? true : advisor },
  };
}

function keepRawValues(resolved, config) {
  const text = config.text === undefined || config.text === true ? {} : config.text;
  if (text !== false && text !== null && typeof text === 'object') {
    resolved.text = {
      enabled: text.enabled ?? true,
      maxPeriodTokens: text.maxPeriodTokens ?? 16,
      minRepeats: text.minRepeats ?? 4,
      minCoveredTokens: text.minCoveredTokens ?? 12,
      maxWindowTokens: text.maxWindowTokens ?? 400,
    };
  }
  if (resolved.escalation !== null) {
    const { maxEscalations } = resolved.escalation;
    const input = config.escalation;
    resolved.escalation = {
      ...(input.model !== undefined && { model: input.model }),
      ...(input.advisor !== undefined && input.advisor !== false && { advisor: input.advisor }),
      maxEscalations,
    };
  }
}

/**
 * The part of a resolved config the core monitor runs on, in values JSON
 * can carry: the text switch as the boolean its truthiness is, thresholds
 * as the numbers the reference's arithmetic makes of them (absent ones
 * take the defaults, as `??` does), and only the escalation budget.
 */
export function coreConfig(config) {
  if (config === null || typeof config !== 'object') return config;
  const view = { ...config };
  const text = config.text;
  if (text !== null && typeof text === 'object') {
    view.text = { enabled: Boolean(text.enabled) };
    for (const name of ['maxPeriodTokens', 'minRepeats', 'minCoveredTokens', 'maxWindowTokens']) {
      const value = text[name];
      if (value !== undefined && value !== null) view.text[name] = thresholdNumber(value);
    }
  }
  const escalation = config.escalation;
  if (escalation !== null && typeof escalation === 'object') {
    view.escalation = { maxEscalations: escalation.maxEscalations };
  }
  return view;
}

function thresholdNumber(value) {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  try {
    return Number(value);
  } catch {
    return NaN;
  }
}


export function resolveLoopKeyWith(glue, loopKey, args) {
  if (typeof loopKey === 'function') return resolveLoopKeyFunction(glue, loopKey, args);
  if (Array.isArray(loopKey) && loopKey.length > 0) return resolveLoopKeyFields(loopKey, args);
  // The other forms never look inside the arguments.
  const resolution = JSON.parse(glue.resolveLoopKeyDeclaration(lower(loopKey), 'null'));
  if (resolution.kind === 'exempt') return { kind: 'exempt' };
  if (resolution.kind === 'fallback') {
    return { kind: 'fallback', keyMaterial: args, warning: resolution.warning };
  }
  return { kind: 'key', keyMaterial: args };
}

// A field list selects with the reference's own reads — `field in args`
// (inherited fields count, a null-prototype object has no `constructor`),
// then `args[field]` — which only the caller's live object can answer; so
// the selection, and its warning, are made here (the core's copy of the
// text serves the Rust API).
function resolveLoopKeyFields(loopKey, args) {
  const subset = Object.create(null);
  for (const field of loopKey) {
    if (typeof field === 'string' && field in args) subset[field] = args[field];
  }
  if (Object.keys(subset).length > 0) return { kind: 'key', keyMaterial: subset };
  const names = loopKey.filter((f) => typeof f === 'string').join(', ');
  return {
    kind: 'fallback',
    keyMaterial: args,
    warning: `loopKey fields [${names}] are all absent from the arguments, which would give every call the same identity; falling back to full arguments.`,
  };
}

function resolveLoopKeyFunction(glue, loopKey, args) {
  let result;
  let outcome;
  let thrown = '';
  try {
    result = loopKey(args);
    outcome = result === null ? 'null' : result === undefined ? 'undefined' : 'value';
  } catch (error) {
    outcome = 'threw';
    thrown = error instanceof Error ? error.message : String(error);
  }
  const resolution = JSON.parse(glue.resolveLoopKeyOutcome(outcome, JSON.stringify(thrown)));
  if (resolution.kind === 'exempt') return { kind: 'exempt' };
  if (resolution.kind === 'key') return { kind: 'key', keyMaterial: result };
  return { kind: 'fallback', keyMaterial: args, warning: resolution.warning };
}

