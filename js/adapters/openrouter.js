// callModel adapter: doom-loop detection for `@openrouter/agent` versions
// that have no built-in `doomLoop` option (0.8.0), wired only through the
// public hook points of `callModel` — per-turn request functions, the
// `onTurnStart`/`onTurnEnd` callbacks, the `PreToolUse`/`SessionEnd`
// lifecycle hooks, `stopWhen` and the `state` accessor.
//
// Runtime-neutral (no `node:` imports, no SDK import): it only rewrites the
// request object the caller hands to `callModel`. This file is also
// concatenated into the CommonJS build, so top-level names must not clash
// with api.js / lower.js.
//
// How a run maps onto the detector:
//
// * A round is one batch of tool calls the SDK executes. The calls of round
//   n are the function calls of the response that precedes it, which
//   `onTurnEnd(n-1)` receives (and, for the very first response, the
//   `state.save` that stores it — only when a state accessor is in use).
//   At `onTurnStart(n)` the round is declared as a set and every call is
//   recorded in emission order; `PreToolUse` then applies the decision of
//   the matching call. A call the adapter could not see in advance is
//   recorded when its `PreToolUse` fires (undeclared, per-call detection).
// * Malformed arguments never reach `PreToolUse` in 0.8.0; such calls are
//   recorded from the response with the raw argument text as identity.
// * `stop`: when the calls of the next round would arm a stop verdict, the
//   added `stopWhen` condition trips BEFORE that round runs, so no further
//   normal request is made. 0.8.0 then runs the pending calls through
//   `PreToolUse` (the condemned ones are refused with the verdict text) and,
//   unless `allowFinalResponse: false`, makes its one `tool_choice: "none"`
//   final-answer request.
// * `steer`: queued guidance (deduplicated by exact text) is appended to the
//   `instructions` of the next request only. `escalate`: the next follow-up
//   request runs on `escalation.model` (budgeted by `maxEscalations`).
// * State: the detector snapshot rides on the ConversationState as
//   `doomLoop`, in the same shape the reference engine persists (plus a
//   `beyond` key when an opt-in detector below has evidence).
//
// Opt-in detectors (config keys `cycles`, `ledger`, `failures`, `budget`,
// `outcomes`, `novelty`; without them no hook below is registered and a run is
// unchanged):
//
// * `cycles` is judged inside recordToolCallSync, like the fingerprint
//   ladder: nothing extra to wire (round preview included).
// * `ledger` / `failures` / `outcomes` / `novelty`: every executed call the adapter let through is
//   matched, in `PostToolUse` / `PostToolUseFailure`, to the fingerprint it
//   was recorded with, and its result fed to the session's onResult — outcome
//   from the tool's `loopOutputKey`; failed = threw, or returned an object
//   with an `error`. Post-execution: never a block. A stop armed there takes
//   effect at the next `stopWhen`, i.e. after the round's follow-up request;
//   steer/escalate land in the request after that one. `outcomes` shapes
//   the streak the next identical call is scored with (a new result
//   restarts it), so its effect shows at that call's PreToolUse.
// * `budget`: every model response's spend (usage input+output tokens, or
//   `usage.cost` with `unit: 'usd'`) is fed to recordSpend from
//   `PostModelCall`, which — unlike onTurnEnd — also fires for the initial
//   request. A budget stop takes effect at the next `stopWhen`.

import { DoomLoopSession } from '../session.js';

/**
 * @typedef {import('./index.js').DoomLoopVerdict} DoomLoopVerdict
 * @typedef {import('./index.js').DoomLoopOption} DoomLoopOption
 * @typedef {import('./index.js').DoomLoopSerializedState} DoomLoopSerializedState
 */

/**
 * @typedef {object} WithDoomLoopOptions
 * @property {DoomLoopOption} [doomLoop] `true` (default) for the reference defaults, a
 *   `DoomLoopConfig` to tune the ladder / text detection / escalation, `false` to turn
 *   detection off (a plain copy of the input is returned, with the read-only methods).
 *   May also be given as `input.doomLoop`; this option wins.
 * @property {Record<string, unknown>} [loopKeys] Per-tool loop identity, by tool name:
 *   a function `(args) => keyMaterial | null`, a field list `['command', 'cwd']`, or
 *   `false` to exempt the tool. Takes precedence over `tool.function.loopKey` on the
 *   tool object itself (`tool()` of 0.8.0 drops unknown config keys, so set it on the
 *   returned object or use this option).
 * @property {Record<string, unknown>} [loopOutputKeys] Per-tool result identity for the
 *   opt-in progress ledger (`doomLoop.ledger`), by tool name: a function
 *   `(result) => outcomeMaterial | null`, a field list `['status', 'rows']`, or `false`
 *   to keep the tool out of the ledger. Precedence over `tool.function.loopOutputKey`.
 *   Without one, the whole result is the outcome (a thrown error: `{ error: message }`).
 * @property {Record<string, unknown>} [loopEffects] Per-tool effect for the opt-in
 *   effect-aware streaks (`doomLoop.effects`), by tool name: `'write'` (the tool changes
 *   what later calls observe) or `'read'`. Precedence over `tool.function.loopEffect`.
 * @property {(verdict: DoomLoopVerdict) => void} [onDetected] Called for every verdict the
 *   ladder produces (the adapter's stand-in for the reference's `DoomLoopDetected` hook —
 *   this is the only visible effect of the `observe` rung). Observation only; errors are
 *   logged and ignored.
 */

/**
 * Read-only methods added (non-enumerable, so `callModel` never sends them) to the
 * object returned by {@link withDoomLoop}.
 *
 * @typedef {object} DoomLoopRunInfo
 * @property {() => DoomLoopVerdict | null} getDoomLoopVerdict The `stop` verdict that
 *   halted (or, after a decision-only resume, keeps halting) the run; `null` otherwise.
 * @property {() => ('doom_loop'|'complete'|'max_turns'|'error'|'user'|undefined)} getDoomLoopEndReason
 *   How the run ended: the SDK's `SessionEnd` reason, except `'doom_loop'` when the
 *   adapter's stop ended it (0.8.0 itself reports `'max_turns'` for every stop
 *   condition). `undefined` until the run has ended.
 * @property {() => DoomLoopVerdict[]} getDoomLoopVerdicts Every verdict so far, in order.
 * @property {() => DoomLoopSerializedState} getDoomLoopState The detector snapshot that is
 *   (or would be) persisted as `ConversationState.doomLoop`.
 */

/**
 * Adds doom-loop detection to a `callModel` request of `@openrouter/agent` 0.8.0.
 *
 * Returns a new request object (the input is not modified) whose `stopWhen`,
 * `onTurnStart`, `onTurnEnd`, `hooks`, `instructions`, `toolChoice` (with tools),
 * `state` (when given) and — with `escalation.model` — `model`/`models` are wrapped;
 * the caller's own values keep working. Use one returned object per `callModel`
 * call; detector memory crosses runs through the `state` accessor, as in the reference.
 *
 * @example
 * const run = withDoomLoop({ model, input, tools, stopWhen: stepCountIs(40), state }, { doomLoop: true });
 * const result = client.callModel(run);
 * const text = await result.getText();
 * if (run.getDoomLoopEndReason() === 'doom_loop') console.warn(run.getDoomLoopVerdict().message);
 *
 * @template {Record<string, unknown>} T
 * @param {T} input the request you would pass to `callModel`
 * @param {WithDoomLoopOptions} [options]
 * @returns {T & DoomLoopRunInfo}
 */
export function withDoomLoop(input, options = {}) {
  if (input === null || typeof input !== 'object') {
    throw new TypeError('withDoomLoop(input, options): input must be a callModel request object');
  }
  const opts = options ?? {};
  const option = opts.doomLoop !== undefined ? opts.doomLoop : input.doomLoop !== undefined ? input.doomLoop : true;
  // `doomLoop` is not a 0.8.0 request field: left in place it would be sent on the wire.
  const { doomLoop: _ignored, ...request } = input;
  const guard = new CallModelDoomLoop(adapterEscalationInput(option), request, opts);
  if (!guard.enabled) return attachRunInfo(request, null);
  return attachRunInfo(guard.augment(), guard);
}

/**
 * Returns a copy of a tool with `loopKey` / `loopOutputKey` set on its `function`, where
 * the adapter reads them (`tool()` of 0.8.0 drops unknown config keys). Typed in
 * index.d.ts from the tool's input schema; the tool itself is not modified.
 *
 * @example
 * const getInvoice = withLoopKey(tool({ name: 'get_invoice', inputSchema, execute }), {
 *   loopKey: ({ invoice_id }) => invoice_id.trim().toUpperCase(),
 * });
 *
 * @template {{ function: object }} T
 * @param {T} tool an `@openrouter/agent` function tool
 * @param {{ loopKey?: unknown, loopOutputKey?: unknown, loopEffect?: unknown }} keys
 * @returns {T}
 */
export function withLoopKey(tool, keys) {
  if (tool === null || typeof tool !== 'object' || tool.function === null || typeof tool.function !== 'object') {
    throw new TypeError('withLoopKey(tool, keys): tool must be a function tool (an object with a `function` object, as tool() returns)');
  }
  if (keys === null || typeof keys !== 'object') {
    throw new TypeError('withLoopKey(tool, keys): keys must be an object { loopKey?, loopOutputKey? }');
  }
  const fn = { ...tool.function };
  if (keys.loopKey !== undefined) fn.loopKey = keys.loopKey;
  if (keys.loopOutputKey !== undefined) fn.loopOutputKey = keys.loopOutputKey;
  if (keys.loopEffect !== undefined) fn.loopEffect = keys.loopEffect;
  return { ...tool, function: fn };
}

/** 0.8.0 cannot add tools per turn, so the advisor mechanism is unavailable. */
function adapterEscalationInput(option) {
  if (option === null || typeof option !== 'object' || option.escalation == null) return option;
  const { advisor, ...escalation } = option.escalation;
  if (advisor === undefined || advisor === false) return option;
  console.warn(
    '[DoomLoop] escalation.advisor is ignored: @openrouter/agent 0.8.0 cannot add a server tool ' +
      'for a single turn. Only escalation.model is applied.',
  );
  return { ...option, escalation };
}

function attachRunInfo(target, guard) {
  const methods = {
    getDoomLoopVerdict: () => (guard ? guard.stopVerdict() : null),
    getDoomLoopEndReason: () => (guard ? guard.endReason() : undefined),
    getDoomLoopVerdicts: () => (guard ? guard.verdicts() : []),
    getDoomLoopState: () => (guard ? guard.snapshot() : { tools: {} }),
  };
  for (const [name, value] of Object.entries(methods)) {
    Object.defineProperty(target, name, { value, enumerable: false, configurable: true, writable: true });
  }
  return target;
}

/** Call a request field that may be a per-turn function. */
function resolveTurnValue(value, ctx) {
  return typeof value === 'function' ? value(ctx) : value;
}

function isPlainRecord(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses a function_call's arguments the way the 0.8.0 tool loop does. */
function parseCallArguments(raw) {
  if (typeof raw !== 'string') return { args: raw, malformed: false };
  const trimmed = raw.trim();
  if (trimmed === '') return { args: {}, malformed: false };
  try {
    return { args: JSON.parse(trimmed), malformed: false };
  } catch {
    return { args: raw, malformed: true };
  }
}

/** Assistant text of a response: the pre-joined `outputText`, else the first message. */
function responseText(response) {
  if (typeof response?.outputText === 'string' && response.outputText !== '') return response.outputText;
  const message = Array.isArray(response?.output)
    ? response.output.find((item) => item && item.type === 'message')
    : undefined;
  return message ? messageText(message) : '';
}

function messageText(message) {
  if (!Array.isArray(message.content)) return typeof message.content === 'string' ? message.content : '';
  return message.content
    .filter((part) => part && part.type === 'output_text' && typeof part.text === 'string')
    .map((part) => part.text)
    .join('');
}

/**
 * Identity of a server-tool output item (web_search_call, …): the request fields it
 * echoes, without ids, status or results, so repeats fingerprint alike. Null when
 * nothing identifying is left.
 */
function serverToolIdentity(item) {
  const skipped = new Set(['id', 'type', 'status', 'output', 'result', 'results', 'error']);
  const identity = Object.create(null);
  let fields = 0;
  for (const [key, value] of Object.entries(item)) {
    if (skipped.has(key) || value === undefined) continue;
    if (typeof value === 'function' || typeof value === 'symbol') continue;
    identity[key] = value;
    fields++;
  }
  return fields > 0 ? identity : null;
}

function isServerToolItem(item) {
  return (
    isPlainRecord(item) &&
    typeof item.type === 'string' &&
    item.type !== 'message' &&
    item.type !== 'reasoning' &&
    item.type !== 'function_call' &&
    item.type !== 'function_call_output'
  );
}

/** Is this state message something a model response produced (vs. caller input)? */
function isResponseItem(item) {
  if (!isPlainRecord(item)) return false;
  if (item.type === 'function_call_output') return false;
  if (item.type === 'message' || item.type === undefined) return item.role === 'assistant';
  return typeof item.type === 'string';
}

/**
 * The SDK glue of the callModel adapter: it maps 0.8.0's hook points onto one
 * DoomLoopSession (every decision is the session's — the Rust engine's) and
 * applies the session's answers where the SDK lets it.
 */
class CallModelDoomLoop {
  #session;
  #request;
  #beyond;
  // Calls let through to execution, awaiting their Post* hook: signature -> [{id, name}].
  #inflight = new Map();
  #usdWarned = false;
  // 'closed' between rounds; 'planned' (recorded from the response) or 'lazy'
  // (calls seen only at PreToolUse).
  #roundKind = 'closed';
  #plannedDecisions = new Map();
  // The calls of the next round, known from the response that carries them.
  #next = null;
  #escalateTurn = -1;
  #loopStopped = false;
  #stoppedByDoom = false;
  #finalTurn = false;
  #turnsStarted = 0;
  #runsStarted = 0;
  #lazyIds = 0;
  #endReason = undefined;
  #stateLoaded = false;
  #messagesSeen = 0;
  #lastResponseId = undefined;
  #lastStatus = undefined;
  #reuseWarned = false;

  constructor(option, request, options) {
    this.#request = request;
    const loopKeys = this.#keysFrom(options.loopKeys, 'loopKey');
    const loopOutputKeys = this.#keysFrom(options.loopOutputKeys, 'loopOutputKey');
    const loopEffects = this.#keysFrom(options.loopEffects, 'loopEffect');
    this.#session = new DoomLoopSession({
      doomLoop: option,
      loopKeys,
      loopOutputKeys,
      loopEffects,
      onDetected: typeof options.onDetected === 'function' ? options.onDetected : undefined,
    });
    const config = this.#session.config;
    this.#beyond = config !== null && isPlainRecord(config.beyond) ? config.beyond : null;
  }

  get enabled() {
    return this.#session.config !== null;
  }

  /** Per-tool declarations: the option's entry by tool name, else the executable tool's own. */
  #keysFrom(given, field) {
    // Null-prototype: `keys[name] = …` must make an own key even for a tool named `__proto__`.
    const keys = Object.create(null);
    for (const tool of Array.isArray(this.#request.tools) ? this.#request.tools : []) {
      const name = tool?.function?.name;
      if (typeof name !== 'string' || this.#toolFor(name) !== tool) continue;
      if (tool.function[field] !== undefined) keys[name] = tool.function[field];
    }
    if (isPlainRecord(given)) {
      for (const [name, key] of Object.entries(given)) if (key !== undefined) keys[name] = key;
    }
    return keys;
  }

  // ---------------------------------------------------------------- wiring

  augment() {
    const request = this.#request;
    const out = { ...request };
    const userStop = request.stopWhen;
    out.stopWhen = (ctx) => this.#stopWhen(ctx, userStop);
    out.onTurnStart = async (ctx) => {
      this.#guarded(() => this.#turnStart(ctx));
      if (typeof request.onTurnStart === 'function') await request.onTurnStart(ctx);
    };
    out.onTurnEnd = async (ctx, response) => {
      this.#guarded(() => this.#turnEnd(ctx, response));
      if (typeof request.onTurnEnd === 'function') await request.onTurnEnd(ctx, response);
    };
    out.hooks = this.#hooks(request.hooks);
    out.instructions = (ctx) => this.#instructions(ctx);
    if (Array.isArray(request.tools) && request.tools.length > 0) {
      out.toolChoice = (ctx) => this.#toolChoice(ctx);
    }
    const escalation = this.#session.config.escalation;
    if (escalation?.model !== undefined) {
      out.model = (ctx) =>
        this.#escalateTurn === ctx?.numberOfTurns ? escalation.model : resolveTurnValue(request.model, ctx);
      if (request.models !== undefined) {
        out.models = (ctx) => (this.#escalateTurn === ctx?.numberOfTurns ? undefined : resolveTurnValue(request.models, ctx));
      }
    }
    if (request.state && typeof request.state.load === 'function' && typeof request.state.save === 'function') {
      const state = request.state;
      out.state = {
        load: async () => {
          const loaded = await state.load();
          if (!this.#stateLoaded) {
            this.#stateLoaded = true;
            this.#guarded(() => this.#restore(loaded));
          }
          return loaded;
        },
        save: async (snapshot) => {
          this.#guarded(() => this.#beforeSave(snapshot));
          return state.save(snapshot);
        },
      };
    }
    return out;
  }

  /** Detection must never fail a run: internal errors are logged and skipped. */
  #guarded(fn) {
    try {
      return fn();
    } catch (error) {
      console.warn('[DoomLoop] internal adapter error ignored; the run continues:', error);
      return undefined;
    }
  }

  #checkReuse() {
    if (this.#endReason !== undefined && !this.#reuseWarned) {
      this.#reuseWarned = true;
      console.warn(
        '[DoomLoop] this withDoomLoop() request already served a run; wrap the input again for every ' +
          'callModel() call (detector memory carries between runs through the state accessor).',
      );
    }
  }

  /** A run's first request resolves its instructions at turn 0: a second one is a second run. */
  #runStarted() {
    this.#runsStarted++;
    if (this.#runsStarted > 1 && this.#endReason === undefined && !this.#reuseWarned) {
      this.#reuseWarned = true;
      console.warn(
        '[DoomLoop] this withDoomLoop() request already served a run: a second callModel() run started while the ' +
          'first is still running, and the two would share one detector. Wrap the input again for every ' +
          'callModel() call (detector memory carries between runs through the state accessor).',
      );
    }
  }

  #hooks(userHooks) {
    const pre = { handler: (payload) => this.#guarded(() => this.#preToolUse(payload)) };
    const end = { handler: (payload) => void this.#guarded(() => this.#sessionEnd(payload)) };
    const observers = this.#observerHooks();
    if (userHooks == null) return { PreToolUse: [pre], SessionEnd: [end], ...observers };
    if (typeof userHooks.emit === 'function' && typeof userHooks.on === 'function') {
      return this.#wrapManager(userHooks, observers);
    }
    const merged = { ...userHooks };
    merged.PreToolUse = [pre, ...(Array.isArray(userHooks.PreToolUse) ? userHooks.PreToolUse : [])];
    for (const [name, entries] of Object.entries(observers)) {
      merged[name] = [...entries, ...(Array.isArray(userHooks[name]) ? userHooks[name] : [])];
    }
    merged.SessionEnd = [
      end,
      ...(Array.isArray(userHooks.SessionEnd) ? userHooks.SessionEnd : []).map((entry) =>
        entry && typeof entry.handler === 'function'
          ? {
              ...entry,
              handler: (payload, ctx) =>
                entry.handler(this.#endReason === 'doom_loop' ? { ...payload, reason: 'doom_loop' } : payload, ctx),
            }
          : entry,
      ),
    ];
    return merged;
  }

  /**
   * The observe-only hooks of the opt-in detectors — registered only when their
   * config key is present, so a default run emits exactly what it did before.
   */
  #observerHooks() {
    const beyond = this.#beyond;
    const hooks = {};
    if (this.#tracksResults()) {
      hooks.PostToolUse = [{ handler: (payload) => this.#guarded(() => this.#toolResult(payload, false)) }];
      hooks.PostToolUseFailure = [{ handler: (payload) => this.#guarded(() => this.#toolResult(payload, true)) }];
    }
    if (beyond !== null && isPlainRecord(beyond.budget)) {
      hooks.PostModelCall = [{ handler: (payload) => void this.#guarded(() => this.#modelCall(payload)) }];
    }
    return hooks;
  }

  /**
   * A caller-owned HooksManager is not modified: a view of it (same handlers, same
   * pending work) runs the adapter's check before its own PreToolUse chain, and its
   * observers before the caller's.
   */
  #wrapManager(manager, observers) {
    const view = Object.create(manager);
    view.emit = async (hookName, payload, context) => {
      if (Object.hasOwn(observers, hookName)) {
        for (const entry of observers[hookName]) await entry.handler(payload);
      }
      if (hookName === 'PreToolUse') {
        const result = this.#guarded(() => this.#preToolUse(payload));
        if (result?.block) {
          return { results: [result], pending: [], finalPayload: payload, blocked: true, mutated: false };
        }
      } else if (hookName === 'SessionEnd') {
        this.#guarded(() => this.#sessionEnd(payload));
      }
      return manager.emit(hookName, payload, context);
    };
    return view;
  }

  // ------------------------------------------------------------ read side

  stopVerdict() {
    return this.#session.haltVerdict();
  }

  endReason() {
    if (this.#endReason !== undefined) return this.#endReason;
    // 0.8.0 emits no SessionEnd for a resume with approval decisions; its last
    // save tells how it ended.
    if (this.#lastStatus === 'complete') return this.#halted() ? 'doom_loop' : 'complete';
    return undefined;
  }

  verdicts() {
    return this.#session.verdicts();
  }

  snapshot() {
    return this.#session.getState();
  }

  #halted() {
    return this.#session.haltVerdict() !== null;
  }

  // ------------------------------------------------------- tool identity

  #toolFor(name) {
    const tools = Array.isArray(this.#request.tools) ? this.#request.tools : [];
    const tool = tools.find((t) => t && t.type === 'function' && t.function && t.function.name === name);
    if (!tool) return undefined;
    const fn = tool.function;
    return typeof fn.execute === 'function' || typeof fn.onToolCalled === 'function' ? tool : undefined;
  }

  #mayNeedApproval(name) {
    if (typeof this.#request.requireApproval === 'function') return true;
    const requireApproval = this.#toolFor(name)?.function.requireApproval;
    return requireApproval === true || typeof requireApproval === 'function';
  }

  /** The calls of a response that the SDK will execute, in emission order. */
  #plan(items) {
    const calls = [];
    for (const item of Array.isArray(items) ? items : []) {
      if (!isPlainRecord(item) || item.type !== 'function_call') continue;
      const name = String(item.name);
      // Unknown and client-executed tools are never executed by the loop: not evidence.
      if (!this.#toolFor(name)) continue;
      const { args, malformed } = parseCallArguments(item.arguments);
      calls.push({
        id: String(item.callId ?? item.call_id ?? `call-${calls.length}`),
        toolName: name,
        args: malformed ? args : (args ?? {}),
        malformed,
        signature: malformed ? undefined : this.#signature(name, args ?? {}),
      });
    }
    return calls;
  }

  #signature(name, args) {
    try {
      return `${name}\n${JSON.stringify(args)}`;
    } catch {
      return undefined;
    }
  }

  // ------------------------------------------------------------ recording

  /** Records the round's complete call set; PreToolUse then applies each call's decision. */
  #commit(calls) {
    this.#roundKind = 'planned';
    this.#plannedDecisions = new Map();
    // Calls that never reported (blocked by a later PreToolUse handler, paused HITL).
    this.#inflight = new Map();
    const { decisions } = this.#session.onResponse({ calls });
    calls.forEach((call, i) => {
      if (call.signature === undefined) return;
      const queue = this.#plannedDecisions.get(call.signature);
      if (queue) queue.push(decisions[i]);
      else this.#plannedDecisions.set(call.signature, [decisions[i]]);
    });
  }

  /** Text and server-tool checkpoints for a fresh response, then the next round's plan. */
  #onResponse(items, text) {
    this.#session.onText(text);
    for (const item of Array.isArray(items) ? items : []) {
      if (!isServerToolItem(item)) continue;
      const identity = serverToolIdentity(item);
      if (identity === null) continue;
      this.#session.onServerTool(`server:${item.type}`, identity);
    }
    const calls = this.#plan(items);
    // A round that may pause for approval is left to the SDK's approval flow.
    const previewable = !this.#halted() && calls.length > 0 && !calls.some((call) => this.#mayNeedApproval(call.toolName));
    this.#next = { calls, stops: previewable && this.#session.wouldHalt(calls), committed: false };
  }

  // ---------------------------------------------------------- hook points

  async #stopWhen(ctx, userStop) {
    let mine = false;
    this.#guarded(() => {
      this.#checkReuse();
      if (!this.#halted() && this.#next?.stops && !this.#next.committed) {
        // Record the condemned round now: the loop will not start it normally.
        this.#commit(this.#next.calls);
        this.#next.committed = true;
      }
      mine = this.#halted();
    });
    const conditions = userStop === undefined ? [] : Array.isArray(userStop) ? userStop : [userStop];
    const results = await Promise.all(conditions.map((condition) => condition(ctx)));
    const stopped = mine || results.some((result) => result === true);
    this.#loopStopped = stopped;
    this.#stoppedByDoom = mine;
    return stopped;
  }

  #turnStart(ctx) {
    this.#checkReuse();
    this.#turnsStarted++;
    this.#finalTurn = this.#loopStopped;
    const next = this.#next;
    this.#next = null;
    if (next?.committed) {
      // Recorded by stopWhen already.
    } else if (this.#finalTurn && this.#halted()) {
      // Halted before this round: the session refuses its calls, unrecorded.
      this.#roundKind = 'sealed';
      this.#session.sealRound();
    } else if (next) {
      this.#commit(next.calls);
    } else {
      // Calls seen one by one at PreToolUse (the first response without a state accessor).
      this.#session.beginRound();
      this.#roundKind = 'lazy';
      this.#inflight = new Map();
    }
    const turn = ctx?.numberOfTurns;
    this.#escalateTurn = this.#session.takeEscalation(!this.#finalTurn) ? turn : -1;
  }

  #turnEnd(_ctx, response) {
    this.#roundKind = 'closed';
    this.#session.endRound();
    this.#lastResponseId = response?.id;
    // The SDK's forced final answer is not inspected (no round can follow it).
    if (this.#finalTurn) return;
    this.#onResponse(response?.output, responseText(response));
  }

  #preToolUse(payload) {
    this.#checkReuse();
    const name = String(payload?.toolName);
    const input = payload?.toolInput ?? {};
    const signature = this.#signature(name, input);
    let decision;
    const queue = this.#roundKind === 'planned' && signature !== undefined ? this.#plannedDecisions.get(signature) : undefined;
    if (queue && queue.length > 0) {
      decision = queue.shift();
    } else {
      // Not seen in advance (the first response without a state accessor, approval batches, a sealed round).
      if (this.#roundKind === 'closed') this.#roundKind = 'lazy';
      decision = this.#session.onCall({ id: `pre-${++this.#lazyIds}`, toolName: name, args: input, malformed: false });
    }
    if (decision.action === 'refuse') {
      return {
        block:
          typeof decision.message === 'string' && decision.message !== ''
            ? decision.message
            : `Doom loop suspected: this "${name}" call keeps repeating and was refused. Try something different.`,
      };
    }
    // 0.8.0 executes the calls pending at a stop without its approval gate: refuse
    // anything that could need approval rather than run it unapproved.
    if (this.#finalTurn && this.#stoppedByDoom && this.#mayNeedApproval(name)) return { block: this.#session.haltText() };
    if (this.#tracksResults() && typeof decision.fingerprint === 'string' && signature !== undefined) {
      const entry = { id: decision.id, name };
      const pending = this.#inflight.get(signature);
      if (pending) pending.push(entry);
      else this.#inflight.set(signature, [entry]);
    }
    return undefined;
  }

  /** Results feed the ledger, the failure streak, outcome- and novelty-aware streaks. */
  #tracksResults() {
    return this.#beyond !== null && Boolean(this.#beyond.ledger || this.#beyond.failures || this.#beyond.outcomes || this.#beyond.novelty);
  }

  /**
   * The recorded call a Post* hook reports on: same name and arguments, else (the
   * arguments were rewritten by a later PreToolUse handler) the oldest of that tool.
   */
  #takeInflight(name, input) {
    const signature = this.#signature(name, input);
    let queue = signature === undefined ? undefined : this.#inflight.get(signature);
    let key = signature;
    if (!queue || queue.length === 0) {
      for (const [candidate, entries] of this.#inflight) {
        if (entries.length > 0 && entries[0].name === name) {
          queue = entries;
          key = candidate;
          break;
        }
      }
    }
    if (!queue || queue.length === 0) return undefined;
    const entry = queue.shift();
    if (queue.length === 0) this.#inflight.delete(key);
    return entry;
  }

  /** `PostToolUse` / `PostToolUseFailure`: one executed call's result, for the session's result-aware detectors. */
  #toolResult(payload, threw) {
    const name = String(payload?.toolName);
    const call = this.#takeInflight(name, payload?.toolInput ?? {});
    // Not recorded (exempt, unfingerprintable) or not seen: not evidence.
    if (call === undefined) return undefined;
    const recorded = threw
      ? this.#session.onResult(call.id, undefined, { error: payload?.error, toolName: name })
      : this.#session.onResult(call.id, payload?.toolOutput, { toolName: name });
    // An async loopOutputKey: the hook waits for it, so the result lands before the next round.
    return recorded !== null && typeof recorded?.then === 'function' ? recorded.then(() => undefined) : undefined;
  }

  /** `PostModelCall`: one model response's spend, for the budget guard. */
  #modelCall(payload) {
    const usage = payload?.usage;
    if (!isPlainRecord(usage)) return;
    const unit = typeof this.#beyond.budget.unit === 'string' ? this.#beyond.budget.unit.toLowerCase() : 'tokens';
    let amount;
    if (unit === 'usd') {
      amount = usage.cost;
      if (typeof amount !== 'number' && !this.#usdWarned) {
        this.#usdWarned = true;
        console.warn('[DoomLoop] budget.unit is "usd" but a response carries no usage.cost; it counts as 0.');
      }
    } else {
      amount = (Number(usage.inputTokens) || 0) + (Number(usage.outputTokens) || 0);
    }
    this.#session.onSpend(typeof amount === 'number' && Number.isFinite(amount) ? amount : 0);
  }

  #sessionEnd(payload) {
    const reason = payload?.reason;
    // 0.8.0 says 'max_turns' for any stop condition, and 'complete' for a run that
    // ends without a loop (a text answer, a resume whose stop verdict was kept). A
    // paused run (awaiting approval/HITL/client tools) keeps its reason.
    const paused = typeof this.#lastStatus === 'string' && this.#lastStatus.startsWith('awaiting_');
    const doom = (reason === 'max_turns' && this.#stoppedByDoom) || (reason === 'complete' && this.#halted() && !paused);
    this.#endReason = doom ? 'doom_loop' : reason;
  }

  #instructions(ctx) {
    if (ctx?.numberOfTurns === 0) this.#guarded(() => this.#runStarted());
    const base = resolveTurnValue(this.#request.instructions, ctx);
    // Taken now, so the guidance goes into exactly this request.
    const guidance = this.#guarded(() => this.#session.takeGuidance()) ?? null;
    if (guidance === null) return base;
    const append = (value) => (typeof value === 'string' && value !== '' ? `${value}\n\n${guidance}` : guidance);
    return base !== null && typeof base === 'object' && typeof base.then === 'function' ? base.then(append) : append(base);
  }

  #toolChoice(ctx) {
    const base = resolveTurnValue(this.#request.toolChoice, ctx);
    // A stop armed after this request was planned (a round that was not previewed,
    // a decision-only resume): make it the final text-only turn.
    return this.#halted() ? 'none' : base;
  }

  // ---------------------------------------------------------------- state

  #restore(loaded) {
    if (!isPlainRecord(loaded)) return;
    this.#messagesSeen = Array.isArray(loaded.messages) ? loaded.messages.length : 0;
    this.#lastResponseId = loaded.previousResponseId;
    if (loaded.doomLoop === undefined) return;
    this.#session.restore(loaded.doomLoop);
    // A stopped run stays stopped when resumed with approval decisions only; a fresh
    // turn (new input) clears the verdict but keeps the evidence.
    const decisionResume =
      (Array.isArray(this.#request.approveToolCalls) && this.#request.approveToolCalls.length > 0) ||
      (Array.isArray(this.#request.rejectToolCalls) && this.#request.rejectToolCalls.length > 0);
    if (decisionResume) this.#session.resumeHalt();
  }

  #beforeSave(snapshot) {
    if (!isPlainRecord(snapshot)) return;
    const messages = Array.isArray(snapshot.messages) ? snapshot.messages : [];
    // The first response of a run never reaches onTurnEnd; its save is where it shows.
    const responseId = snapshot.previousResponseId;
    if (this.#turnsStarted === 0 && responseId !== undefined && responseId !== this.#lastResponseId) {
      const fresh = messages.slice(this.#messagesSeen);
      let start = fresh.length;
      while (start > 0 && isResponseItem(fresh[start - 1])) start--;
      const items = fresh.slice(start);
      const text = items.filter((item) => item.type === 'message' || item.type === undefined).map(messageText).join('');
      this.#onResponse(items, text);
    }
    this.#lastResponseId = responseId;
    this.#lastStatus = snapshot.status;
    if (snapshot.status === 'complete' && this.#stoppedByDoom) this.#seal(snapshot);
    snapshot.doomLoop = this.snapshot();
    this.#messagesSeen = Array.isArray(snapshot.messages) ? snapshot.messages.length : 0;
  }

  /** A halted run must not persist calls without outputs (a resume would be rejected). */
  #seal(snapshot) {
    const messages = Array.isArray(snapshot.messages) ? snapshot.messages : [];
    const answered = new Set(
      messages.filter((m) => isPlainRecord(m) && m.type === 'function_call_output').map((m) => m.callId ?? m.call_id),
    );
    const text = this.#session.haltText() ?? 'Not executed: this run was stopped by doom-loop detection.';
    const outputs = messages
      .filter((m) => isPlainRecord(m) && m.type === 'function_call' && !answered.has(m.callId ?? m.call_id))
      .map((m) => {
        const callId = m.callId ?? m.call_id;
        return {
          type: 'function_call_output',
          id: `output_${callId}`,
          callId,
          output: JSON.stringify({ error: text }),
        };
      });
    if (outputs.length > 0) snapshot.messages = [...messages, ...outputs];
  }
}
