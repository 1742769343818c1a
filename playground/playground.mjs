// The playground: renders the timeline that doom-loop-wasm's
// `replayTranscript` returns, and edits the transcript's `doomLoop` option.
// A trace in any format the package's importers read (pasted, or loaded
// from a file: JSON, JSON Lines, gzip) is replayed with each call's recorded
// result shown; the option switches between the reference defaults and the
// package's RECOMMENDED_DOOM_LOOP_OPTION.
//
// Deliberately no detection logic here: identity rules, declared rounds, the
// ladder and the stop all live in the Rust core. This file only turns its
// answers into DOM, and captures the `console.warn` output of the resolver
// and of `restore` to show it.
import { loadPackage } from './tooling.mjs';
import { EXAMPLES } from './examples.mjs';

// Set once the modules have loaded (main()).
let replayTranscript;
let importTranscript;
let resolveDoomLoopOption;
let DoomLoopMonitor;
/** The package's RECOMMENDED_DOOM_LOOP_OPTION. */
let recommended;

const RUNGS = ['observe', 'steer', 'escalate', 'block', 'stop'];
const TYPING_DEBOUNCE_MS = 200;

const $ = (id) => document.getElementById(id);

/** Creates an element: el('p', {class: 'x'}, 'text', child, …). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function show(node, visible) {
  node.hidden = !visible;
}

function describeError(error) {
  return error instanceof Error ? error.message : String(error);
}

/** Runs `fn`, collecting what it prints with console.warn (the package's warning channel). */
function captureWarnings(fn) {
  const warnings = [];
  const original = console.warn;
  console.warn = (...args) => {
    warnings.push(args.map((a) => (typeof a === 'string' ? a : a instanceof Error ? a.message : JSON.stringify(a))).join(' '));
  };
  try {
    return { value: fn(), warnings };
  } catch (error) {
    return { error, warnings };
  } finally {
    console.warn = original;
  }
}

function renderWarnings(container, title, warnings) {
  container.replaceChildren();
  if (warnings.length === 0) return;
  container.append(
    el(
      'div',
      { class: 'message message-warning', role: 'note' },
      el('strong', {}, title),
      el('ul', {}, warnings.map((w) => el('li', {}, w))),
    ),
  );
}

// ---------------------------------------------------------------------------
// The transcript and its doomLoop option

/** The parsed transcript (object or bare message list), or null while the text does not parse. */
let transcript = null;

function optionOf(doc) {
  return Array.isArray(doc) ? undefined : doc?.doomLoop;
}

/** The option the replay uses: absent means `true`. */
function effectiveOption(doc) {
  const option = optionOf(doc);
  return option === undefined ? true : option;
}

/** A copy of `doc` with its doomLoop option replaced (a bare list is wrapped as {doomLoop, messages}). */
function withOption(doc, option) {
  if (Array.isArray(doc)) return { doomLoop: option, messages: doc };
  return { ...doc, doomLoop: option };
}

function setTranscriptText(doc) {
  $('transcript').value = `${JSON.stringify(doc, null, 2)}\n`;
}

// ---------------------------------------------------------------------------
// Option presets: the reference defaults, the recommended option

const sameJson = (a, b) => a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b);

/** Shows the effective option and which preset it is. */
function syncPreset() {
  const option = transcript === null ? undefined : effectiveOption(transcript);
  const select = $('option-preset');
  if (sameJson(option, true)) select.value = 'defaults';
  else if (sameJson(option, recommended)) select.value = 'recommended';
  else select.value = 'custom';
  $('option-json').textContent = option === undefined ? '' : JSON.stringify(option, null, 2);
}

function applyPreset() {
  if (transcript === null) return;
  const preset = $('option-preset').value;
  if (preset === 'custom') return;
  const option = preset === 'recommended' ? structuredClone(recommended) : true;
  transcript = withOption(transcript, option);
  optionBeforeOff = undefined;
  setTranscriptText(transcript);
  syncLadderEditor();
  markCustomIfEdited();
  replay();
}

// ---------------------------------------------------------------------------
// Ladder editor

function rungInputs(rung) {
  return { value: $(`rung-${rung}`), off: $(`rung-${rung}-off`), resolved: $(`rung-${rung}-resolved`) };
}

/** Fills the editor from the transcript's option (explicit values win; otherwise the resolved ones). */
function syncLadderEditor() {
  const option = optionOf(transcript);
  const detectionOn = option !== false;
  $('detection-on').checked = detectionOn;
  const explicit = option !== null && typeof option === 'object' && option.ladder && typeof option.ladder === 'object'
    ? option.ladder
    : {};
  const resolved = detectionOn ? captureWarnings(() => resolveDoomLoopOption(effectiveOption(transcript))).value : null;
  for (const rung of RUNGS) {
    const inputs = rungInputs(rung);
    const given = explicit[rung];
    const value = given === false || typeof given === 'number' ? given : resolved?.ladder?.[rung];
    inputs.off.checked = value === false;
    inputs.value.value = typeof value === 'number' ? String(value) : '';
    inputs.value.disabled = value === false || !detectionOn;
    inputs.off.disabled = !detectionOn;
  }
}

/** The ladder the editor shows, as a `ladder` option section. */
function ladderFromEditor() {
  const ladder = {};
  for (const rung of RUNGS) {
    const inputs = rungInputs(rung);
    if (inputs.off.checked) ladder[rung] = false;
    else if (inputs.value.value.trim() !== '') ladder[rung] = Number(inputs.value.value);
    // An empty box leaves the rung to its default.
  }
  return ladder;
}

/** Writes the editor's ladder into the transcript's option, then replays. */
function applyLadderEdit() {
  if (transcript === null) return;
  const current = optionOf(transcript);
  const base = current !== null && typeof current === 'object' && !Array.isArray(current) ? current : {};
  transcript = withOption(transcript, { ...base, ladder: ladderFromEditor() });
  for (const rung of RUNGS) {
    const inputs = rungInputs(rung);
    inputs.value.disabled = inputs.off.checked;
  }
  setTranscriptText(transcript);
  markCustomIfEdited();
  replay();
}

let optionBeforeOff;

function applyDetectionToggle() {
  if (transcript === null) return;
  // Turning detection off remembers the option, so turning it back on restores it.
  if ($('detection-on').checked) {
    transcript = withOption(transcript, optionBeforeOff ?? true);
    optionBeforeOff = undefined;
  } else {
    const current = optionOf(transcript);
    optionBeforeOff = current === undefined || current === false ? undefined : current;
    transcript = withOption(transcript, false);
  }
  setTranscriptText(transcript);
  syncLadderEditor();
  markCustomIfEdited();
  replay();
}

/** Shows what resolveDoomLoopOption makes of the option, and its warnings. */
function showResolved() {
  const container = $('resolver-warnings');
  if (transcript === null) {
    for (const rung of RUNGS) rungInputs(rung).resolved.value = '';
    container.replaceChildren();
    return;
  }
  const option = effectiveOption(transcript);
  const result = captureWarnings(() => resolveDoomLoopOption(option));
  const ladder = result.value?.ladder;
  for (const rung of RUNGS) {
    const out = rungInputs(rung).resolved;
    if (!ladder) out.value = '—';
    else out.value = ladder[rung] === false ? 'off' : `at ${ladder[rung]}`;
  }
  container.replaceChildren();
  if (result.error) {
    container.append(el('p', { class: 'message message-error' }, `resolveDoomLoopOption threw: ${describeError(result.error)}`));
  }
  if (result.value === null) {
    container.append(el('p', { class: 'message message-info' }, 'Detection is off: doomLoop is false, so nothing is resolved or replayed.'));
  }
  const box = el('div');
  renderWarnings(box, 'Resolver warnings (console.warn of resolveDoomLoopOption):', result.warnings);
  container.append(...box.childNodes);
  return result.warnings;
}

// ---------------------------------------------------------------------------
// Timeline

const fingerprintPrefix = (fingerprint) => `${fingerprint.slice(0, 8)}…`;

function badge(kind, label = kind, title) {
  return el('span', { class: `badge badge-${kind}`, title }, label);
}

function fingerprintCell(fingerprint) {
  if (!fingerprint) return el('td', { class: 'fingerprint muted' }, '—');
  return el('td', { class: 'fingerprint' }, el('code', { title: fingerprint }, fingerprintPrefix(fingerprint)));
}

const RESULT_PREVIEW = 90;

/** A call's recorded result: a preview (the whole of it in the title), and whether the call failed. */
function resultCell(call) {
  if (call === undefined) return el('td', { class: 'result muted' }, '');
  const failed = call.failed ? el('span', { class: 'tag tag-failed' }, 'failed') : null;
  if (call.result === null || call.result === undefined) {
    return el('td', { class: 'result muted', title: 'No result recorded for this call' }, failed, failed ? ' ' : '', '—');
  }
  const full = typeof call.result === 'string' ? call.result : JSON.stringify(call.result);
  const preview = full.length > RESULT_PREVIEW ? `${full.slice(0, RESULT_PREVIEW)}…` : full;
  return el('td', { class: 'result' }, failed, failed ? ' ' : '', el('code', { title: full }, preview));
}

function verdictRow({ source, sourceNote, fingerprint, streak, rung, text, flags = [], stopping = false, call }) {
  return el(
    'tr',
    { class: stopping ? 'call is-stop' : 'call' },
    el('th', { scope: 'row', class: 'source' }, el('span', { class: 'tool' }, source), sourceNote && el('span', { class: 'source-note' }, sourceNote)),
    fingerprintCell(fingerprint),
    el('td', { class: 'streak' }, streak === null ? '—' : String(streak)),
    el('td', { class: 'rung' }, rung, flags),
    el('td', { class: 'verdict' }, text),
    resultCell(call),
  );
}

/** The verdict's text; an observe verdict is only reported, so its text is de-emphasised. */
function verdictText(verdict) {
  if (verdict.action !== 'observe') return el('span', {}, verdict.message);
  return el('span', { class: 'muted' }, el('span', { class: 'observed-only' }, 'Observed only: '), verdict.message);
}

function callRow(call, verdictIsStop, previousMessage) {
  const v = call.verdict;
  const flags = [];
  if (call.duplicateInRound) flags.push(el('span', { class: 'tag' }, 'duplicate in round'));
  if (call.malformed) flags.push(el('span', { class: 'tag' }, 'malformed JSON'));
  let rung;
  let text;
  if (call.exempt) {
    rung = badge('exempt', 'exempt');
    text = el('span', { class: 'muted' }, 'Not tracked: loopKeys declares it false (or its identity is null).');
  } else if (v) {
    rung = badge(v.action, v.action, `${detectorName(v)}: ${v.action} at streak ${v.streak}`);
    if (call.duplicateInRound) {
      text = el('span', { class: 'muted' }, 'A repeat of an earlier call in this round: it shares that call\'s decision.');
    } else if (v.message === previousMessage) {
      text = el('span', { class: 'muted' }, 'Same verdict text as the call above.');
    } else {
      text = verdictText(v);
    }
  } else if (call.fingerprint === null) {
    rung = badge('none', 'skipped');
    text = el('span', { class: 'muted' }, 'No usable identity: detection skipped for this call (see the warnings).');
  } else {
    rung = badge('ok', 'ok');
    text = el('span', { class: 'muted' }, call.duplicateInRound ? 'A repeat of an earlier call in this round.' : 'Below every rung.');
  }
  return verdictRow({
    source: call.toolName,
    fingerprint: call.fingerprint,
    streak: call.exempt ? null : call.streak,
    rung,
    text,
    flags,
    stopping: verdictIsStop,
    call,
  });
}

/** The opt-in detector when one raised the verdict (its `detector` is then the reference kind it is reported under). */
function detectorName(verdict) {
  return verdict.optInDetector ?? verdict.detector;
}

function textRow(verdict) {
  return verdictRow({
    source: 'assistant text',
    sourceNote: detectorName(verdict),
    fingerprint: verdict.fingerprint,
    streak: verdict.streak,
    rung: badge(verdict.action, verdict.action, `${detectorName(verdict)}: ${verdict.action} at streak ${verdict.streak}`),
    text: verdictText(verdict),
    stopping: verdict.action === 'stop',
  });
}

const COLUMNS = 6;

function roundHeader(label, extra = []) {
  return el('tr', { class: 'round-header' }, el('th', { scope: 'rowgroup', colspan: COLUMNS }, el('span', { class: 'round-label' }, label), extra));
}

/** The strongest action in a round, for the round header. */
function strongestAction(round) {
  const actions = [round.textVerdict?.action, ...round.calls.filter((c) => !c.exempt).map((c) => c.verdict?.action)].filter(Boolean);
  let best;
  for (const action of actions) if (best === undefined || RUNGS.indexOf(action) > RUNGS.indexOf(best)) best = action;
  return best;
}

function renderTimeline(timeline) {
  const table = $('timeline');
  for (const body of [...table.tBodies]) body.remove();
  const stoppedAt = timeline.stopVerdict ? timeline.rounds.length : null;

  for (const round of timeline.rounds) {
    const body = el('tbody', { class: round.round === stoppedAt ? 'round is-stopped-round' : 'round', 'data-round': round.round });
    const strongest = strongestAction(round);
    body.append(roundHeader(`Round ${round.round}`, strongest ? [' ', el('span', { class: 'sr-only' }, `strongest rung: ${strongest}`)] : []));
    if (round.textVerdict) body.append(textRow(round.textVerdict));
    let previousMessage;
    for (const call of round.calls) {
      body.append(callRow(call, call.verdict?.action === 'stop' && !call.duplicateInRound, previousMessage));
      if (!call.duplicateInRound) previousMessage = call.verdict?.message;
    }
    if (!round.textVerdict && round.calls.length === 0) {
      body.append(el('tr', {}, el('td', { colspan: COLUMNS, class: 'muted' }, 'No tool calls, and the assistant text raised no verdict.')));
    }
    table.append(body);
  }

  if (timeline.stopVerdict) {
    const v = timeline.stopVerdict;
    const detail = `${detectorName(v)}${v.toolName !== undefined ? ` on ${v.toolName}` : ''}, streak ${v.streak}`;
    table.append(
      el(
        'tbody',
        { class: 'stop-marker' },
        el(
          'tr',
          {},
          el(
            'td',
            { colspan: COLUMNS },
            el('div', { class: 'stop-banner', role: 'note' },
              badge('stop', 'stop'),
              el('strong', { class: 'stop-text' }, `stopped: doom_loop at round ${stoppedAt}`),
              el('span', {}, ` of ${timeline.totalRounds} (${detail})`),
            ),
          ),
        ),
      ),
    );
  }

  for (let n = timeline.rounds.length + 1; n <= timeline.totalRounds; n++) {
    table.append(
      el(
        'tbody',
        { class: 'round not-reached', 'data-round': n },
        roundHeader(`Round ${n}`, [' ', el('span', { class: 'not-reached-note' }, '— not reached (the run had stopped)')]),
      ),
    );
  }
  show(table, true);

  // Summary: how the run ended and what fired.
  const counts = {};
  for (const round of timeline.rounds) {
    for (const v of [round.textVerdict, ...round.calls.filter((c) => !c.duplicateInRound).map((c) => c.verdict)]) {
      if (v) counts[v.action] = (counts[v.action] ?? 0) + 1;
    }
  }
  const fired = RUNGS.filter((r) => counts[r]).map((r) => `${counts[r]} ${r}`);
  const ending = timeline.stopVerdict
    ? `Stopped: doom_loop at round ${stoppedAt} of ${timeline.totalRounds}.`
    : `Completed: all ${timeline.totalRounds} round${timeline.totalRounds === 1 ? '' : 's'} replayed, no stop.`;
  $('summary').textContent = `${ending} Verdicts: ${fired.length ? fired.join(', ') : 'none'}.`;
  $('summary').className = timeline.stopVerdict ? 'summary summary-stopped' : 'summary summary-completed';
  $('timeline-text').textContent = timeline.text ?? '';
}

function clearTimeline(message, kind = 'error') {
  const table = $('timeline');
  for (const body of [...table.tBodies]) body.remove();
  show(table, false);
  $('summary').textContent = '';
  $('summary').className = 'summary';
  $('timeline-text').textContent = '';
  $('replay-warnings').replaceChildren();
  const box = $('replay-error');
  box.textContent = message ?? '';
  box.className = `message message-${kind}`;
  show(box, Boolean(message));
  lastState = null;
  renderExport();
}

// ---------------------------------------------------------------------------
// Replay

let lastState = null;

/** What the importers read the transcript as: format, rounds, calls, results. */
function showFormat() {
  const status = $('format-status');
  if (transcript === null) {
    status.textContent = '';
    return;
  }
  try {
    const { format, transcript: imported } = importTranscript(transcript);
    const calls = imported.rounds.flatMap((r) => r.calls);
    const withResult = calls.filter((c) => c.result !== null).length;
    status.textContent = `Read as ${FORMAT_NAMES[format] ?? format}: ${imported.rounds.length} rounds, ${calls.length} calls, ${withResult} with a recorded result.`;
  } catch {
    status.textContent = '';
  }
}

const FORMAT_NAMES = {
  rounds: 'the rounds format',
  'openai-chat': 'OpenAI chat messages',
  responses: 'OpenAI Responses items',
  anthropic: 'Anthropic Messages',
  gemini: 'Gemini contents',
  'swe-agent': 'a SWE-agent trajectory',
  'mini-swe-agent': 'a mini-swe-agent trajectory',
  'gemini-cli': 'Gemini CLI stream-json events',
  'gemini-cli-chat': 'a Gemini CLI chat file',
  openhands: 'OpenHands events',
  'cline-ui': 'a Cline / Roo Code ui_messages.json',
  'cline-history': 'a Cline / Roo Code api_conversation_history.json',
  pi: 'a pi session',
};

function replay() {
  const resolverWarnings = showResolved() ?? [];
  syncPreset();
  showFormat();
  if (transcript === null) return;
  if (effectiveOption(transcript) === false) {
    clearTimeline('Detection is off (doomLoop: false): there is nothing to replay. Tick “Detection on” to turn it back on.', 'info');
    return;
  }
  const result = captureWarnings(() => replayTranscript(transcript));
  if (result.error) {
    clearTimeline(`The transcript could not be replayed: ${describeError(result.error)}`);
    return;
  }
  const timeline = result.value;
  show($('replay-error'), false);
  renderTimeline(timeline);
  // The replay's warnings include the resolver's, already shown in the ladder panel.
  const remaining = [...timeline.warnings, ...result.warnings];
  for (const w of resolverWarnings) {
    const i = remaining.indexOf(w);
    if (i !== -1) remaining.splice(i, 1);
  }
  renderWarnings($('replay-warnings'), 'Replay warnings (loop keys, fallbacks):', remaining);
  lastState = timeline.state;
  renderExport();
}

// ---------------------------------------------------------------------------
// State export / import

function stateText(state) {
  return `${JSON.stringify(state, null, 2)}\n`;
}

function renderExport() {
  const has = lastState !== null;
  $('state-export').textContent = has ? stateText(lastState) : '(no replay yet)';
  for (const id of ['state-download', 'state-copy', 'state-to-import']) $(id).disabled = !has;
}

function downloadState() {
  if (lastState === null) return;
  const url = URL.createObjectURL(new Blob([stateText(lastState)], { type: 'application/json' }));
  const link = el('a', { href: url, download: 'doom-loop-state.json' });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
  $('export-status').textContent = 'Downloaded doom-loop-state.json.';
}

async function copyState() {
  if (lastState === null) return;
  try {
    await navigator.clipboard.writeText(stateText(lastState));
    $('export-status').textContent = 'Copied to the clipboard.';
  } catch (error) {
    $('export-status').textContent = `Could not copy: ${describeError(error)}`;
  }
}

function restoreState() {
  const text = $('state-input').value;
  const errorBox = $('restore-error');
  const restored = $('state-restored');
  $('restore-warnings').replaceChildren();
  show(errorBox, false);
  show(restored, false);
  show($('restored-heading'), false);

  let blob;
  try {
    blob = JSON.parse(text);
  } catch (error) {
    errorBox.textContent = `The state is not valid JSON: ${describeError(error)}`;
    show(errorBox, true);
    return;
  }
  // The monitor is built from the transcript's own option (the defaults when there is none or it is off).
  let option = transcript === null ? true : effectiveOption(transcript);
  if (option === false) option = true;
  const config = captureWarnings(() => resolveDoomLoopOption(option));
  if (config.error || !config.value) {
    errorBox.textContent = `The transcript's doomLoop option does not resolve: ${describeError(config.error)}`;
    show(errorBox, true);
    return;
  }
  const result = captureWarnings(() => {
    const monitor = new DoomLoopMonitor(config.value);
    try {
      monitor.restore(blob);
      return monitor.getState();
    } finally {
      monitor.free();
    }
  });
  if (result.error) {
    errorBox.textContent = `restore failed: ${describeError(result.error)}`;
    show(errorBox, true);
    return;
  }
  const container = $('restore-warnings');
  if (result.warnings.length > 0) {
    renderWarnings(container, 'Restore warnings (console.warn of restore):', result.warnings);
  } else {
    container.append(el('p', { class: 'message message-ok' }, 'Restored without warnings.'));
  }
  // Name what was dropped: tool entries present in the blob but not in the restored state.
  const given = blob && typeof blob === 'object' && blob.tools && typeof blob.tools === 'object' ? Object.keys(blob.tools) : [];
  const dropped = given.filter((name) => !Object.prototype.hasOwnProperty.call(result.value.tools ?? {}, name));
  if (dropped.length > 0) {
    container.append(el('p', { class: 'message message-warning' }, `Dropped as invalid: ${dropped.map((n) => `tools[${JSON.stringify(n)}]`).join(', ')}.`));
  }
  restored.textContent = stateText(result.value);
  show($('restored-heading'), true);
  show(restored, true);
}

// ---------------------------------------------------------------------------
// Wiring

let typingTimer;
let loadedExampleText = null;

function parseTranscriptText() {
  const text = $('transcript').value;
  const errorBox = $('transcript-error');
  if (text.trim() === '') {
    transcript = null;
    errorBox.textContent = 'Paste a transcript, load a file or pick an example.';
    show(errorBox, true);
    clearTimeline(null);
    showResolved();
    return;
  }
  try {
    transcript = JSON.parse(text);
  } catch (error) {
    // Not one JSON document: JSON Lines (a message or a run per line)?
    if (convertTrace(text, '<paste>')) return;
    transcript = null;
    errorBox.textContent = `Not valid JSON: ${describeError(error)}`;
    show(errorBox, true);
    clearTimeline('Fix the transcript JSON to replay it.', 'info');
    showResolved();
    setLadderDisabled(true);
    return;
  }
  show(errorBox, false);
  setLadderDisabled(false);
  syncLadderEditor();
  replay();
}

/**
 * Reads a trace that is not one JSON document (JSON Lines, gzip) with the
 * package's importers and puts it in the editor in the rounds format, each
 * call's result included. False when the importers cannot read it either.
 */
function convertTrace(input, name) {
  let imported;
  try {
    imported = importTranscript(input, { name });
  } catch {
    return false;
  }
  setTranscriptText(imported.transcript);
  $('example').value = 'custom';
  $('example-note').textContent = `${name}: read as ${FORMAT_NAMES[imported.format] ?? imported.format}, converted to the rounds format (each call's recorded result kept).`;
  parseTranscriptText();
  return true;
}

function setLadderDisabled(disabled) {
  $('ladder').disabled = disabled;
  $('option-preset').disabled = disabled;
  $('detection-on').disabled = disabled;
  $('ladder-defaults').disabled = disabled;
}

function markCustomIfEdited() {
  if ($('transcript').value !== loadedExampleText) $('example').value = 'custom';
}

async function loadExample(id) {
  const example = EXAMPLES[id];
  if (!example) return;
  $('example-note').textContent = example.note ?? '';
  try {
    const doc = await example.load();
    setTranscriptText(doc);
    loadedExampleText = $('transcript').value;
    parseTranscriptText();
  } catch (error) {
    $('transcript-error').textContent = describeError(error);
    show($('transcript-error'), true);
  }
}

function readFileInto(input, onText) {
  const file = input.files?.[0];
  if (!file) return;
  file.text().then(onText, (error) => {
    $('transcript-error').textContent = `Could not read ${file.name}: ${describeError(error)}`;
    show($('transcript-error'), true);
  });
}

function wire() {
  const select = $('example');
  select.replaceChildren(
    ...Object.entries(EXAMPLES).map(([id, ex]) => el('option', { value: id }, ex.label)),
    el('option', { value: 'custom' }, 'Custom (pasted, edited or loaded)'),
  );
  select.addEventListener('change', () => {
    if (select.value === 'custom') {
      $('example-note').textContent = 'Your own transcript.';
      return;
    }
    loadExample(select.value);
  });

  $('transcript').addEventListener('input', () => {
    markCustomIfEdited();
    if ($('example').value === 'custom') $('example-note').textContent = 'Your own transcript.';
    clearTimeout(typingTimer);
    typingTimer = setTimeout(parseTranscriptText, TYPING_DEBOUNCE_MS);
  });

  $('transcript-file').addEventListener('change', async (event) => {
    const file = event.target.files?.[0];
    if (!file) return;
    let bytes;
    try {
      bytes = new Uint8Array(await file.arrayBuffer());
    } catch (error) {
      $('transcript-error').textContent = `Could not read ${file.name}: ${describeError(error)}`;
      show($('transcript-error'), true);
      return;
    }
    const gzip = bytes[0] === 0x1f && bytes[1] === 0x8b;
    const text = gzip ? null : new TextDecoder().decode(bytes);
    let isJson = false;
    try {
      if (text !== null) JSON.parse(text);
      isJson = text !== null;
    } catch {
      isJson = false;
    }
    if (isJson) {
      $('transcript').value = text;
      select.value = 'custom';
      $('example-note').textContent = `Loaded from ${file.name}.`;
      parseTranscriptText();
    } else if (!convertTrace(bytes, file.name)) {
      // Show the importers' own error, with the file's name and place.
      let message = `${file.name} could not be read`;
      try {
        importTranscript(bytes, { name: file.name });
      } catch (error) {
        message = describeError(error);
      }
      transcript = null;
      $('transcript-error').textContent = message;
      show($('transcript-error'), true);
      clearTimeline('Load or paste a trace the importers can read.', 'info');
    }
  });

  for (const rung of RUNGS) {
    const inputs = rungInputs(rung);
    inputs.value.addEventListener('input', applyLadderEdit);
    inputs.off.addEventListener('change', () => {
      // Turning a rung back on with an empty box leaves it to its default.
      applyLadderEdit();
      if (!inputs.off.checked) inputs.value.focus();
    });
  }
  $('detection-on').addEventListener('change', applyDetectionToggle);
  $('option-preset').addEventListener('change', applyPreset);
  $('ladder-defaults').addEventListener('click', () => {
    if (transcript === null) return;
    const current = optionOf(transcript);
    const base = current !== null && typeof current === 'object' ? { ...current } : {};
    delete base.ladder;
    transcript = withOption(transcript, Object.keys(base).length ? base : true);
    setTranscriptText(transcript);
    markCustomIfEdited();
    syncLadderEditor();
    replay();
  });

  $('state-download').addEventListener('click', downloadState);
  $('state-copy').addEventListener('click', copyState);
  $('state-to-import').addEventListener('click', () => {
    if (lastState === null) return;
    $('state-input').value = stateText(lastState);
    $('state-input').focus();
  });
  $('state-file').addEventListener('change', (event) => {
    readFileInto(event.target, (text) => {
      $('state-input').value = text;
      restoreState();
    });
  });
  $('state-restore').addEventListener('click', restoreState);
}

async function main() {
  const status = $('load-status');
  try {
    const loaded = await loadPackage();
    ({ resolveDoomLoopOption, DoomLoopMonitor } = loaded.detector);
    ({ replayTranscript, importTranscript } = loaded.tooling);
    recommended = loaded.recommended;
  } catch (error) {
    status.textContent = `Could not load the WebAssembly module: ${describeError(error)}. Is pkg/ built (bash scripts/build-pkg.sh)?`;
    status.className = 'load-status message message-error';
    return;
  }
  status.textContent = 'WebAssembly module loaded.';
  status.classList.add('is-ready');
  wire();
  renderExport();
  await loadExample('billing');
  document.documentElement.dataset.ready = 'true';
}

main();
