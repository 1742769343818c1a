// The trace tooling's JS API (js/replay.js, the `doom-loop-wasm/replay` entry) against the built package's full
// wasm module: every importer through bytes and parsed values, results in
// the timeline, the option override, clear errors, and the evaluation of the
// shared trajectories (gzip decompressed in wasm) giving the native engine's
// numbers for the reference defaults.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadReplayEntry } from './replay-entry.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = join(root, 'pkg');
const fixtures = join(root, 'trace/tests/fixtures');
const shared = join(root, '../shared/trajectories');


const api = await loadReplayEntry(pkg);
const { importTranscript, replayTranscript, evaluateTranscripts } = api;

const formats = {
  'openai-chat.json': 'openai-chat',
  'responses.json': 'responses',
  'anthropic.json': 'anthropic',
  'gemini.json': 'gemini',
  'swe-agent.traj': 'swe-agent',
  'mini-swe-agent.traj.json': 'mini-swe-agent',
  'chat-messages.jsonl': 'openai-chat',
  'claude-code-session.jsonl': 'anthropic',
  'gemini-cli-stream.jsonl': 'gemini-cli',
  'gemini-cli-chat.json': 'gemini-cli-chat',
  'openhands-events.json': 'openhands',
  'cline-ui-messages.json': 'cline-ui',
  'cline-api-history.json': 'cline-history',
  'pi-session.jsonl': 'pi',
  'mini-swe-agent-mswea.traj.json': 'mini-swe-agent',
};

test('every format is imported from its file bytes, with each call’s result', () => {
  for (const [file, format] of Object.entries(formats)) {
    const imported = importTranscript(readFileSync(join(fixtures, file)), { name: file });
    assert.equal(imported.format, format, file);
    const calls = imported.transcript.rounds.flatMap((r) => r.calls);
    assert.ok(calls.length > 0, file);
    assert.ok(calls.some((c) => c.result !== null), `${file}: some result recorded`);
  }
  const anthropic = importTranscript(readFileSync(join(fixtures, 'anthropic.json'))).transcript;
  assert.deepEqual(anthropic.rounds[0].calls[0], {
    toolName: 'bash',
    args: { command: 'pytest -q' },
    malformed: false,
    result: '1 failed',
    failed: true,
  });
});

test('a parsed value and its text replay alike; the timeline carries results', () => {
  const text = readFileSync(join(fixtures, 'responses.json'), 'utf8');
  const fromText = replayTranscript(text);
  const fromValue = replayTranscript(JSON.parse(text));
  assert.deepEqual(fromText, fromValue);
  const calls = fromValue.rounds.flatMap((r) => r.calls);
  assert.deepEqual(calls.map((c) => c.verdict?.action ?? null), [null, 'observe', 'block']);
  assert.deepEqual(calls.map((c) => c.result), ['18C, cloudy', '18C, cloudy', '18C, cloudy']);
  assert.match(fromValue.text, /round {3}3 {2}get_weather/);
});

test('doomLoop replaces the transcript’s own option', () => {
  const chat = JSON.parse(readFileSync(join(fixtures, 'chat-messages.jsonl'), 'utf8').split('\n')[1]);
  const run = [chat, chat, chat];
  assert.equal(replayTranscript(run).rounds[1].calls[0].verdict.action, 'observe');
  const strict = replayTranscript(run, { doomLoop: { ladder: { observe: 2, block: 2, stop: 3 } } });
  assert.equal(strict.stopVerdict.action, 'stop');
  assert.throws(() => replayTranscript(run, { doomLoop: false }), /turns detection off/);
});

test('bad input is a clear error naming the place, never a trap', () => {
  assert.throws(() => replayTranscript({ foo: [1] }), /unrecognised trace shape \(an object with keys foo\); accepted: .*Anthropic/);
  assert.throws(() => importTranscript('{"rounds": ['), /<input>: not valid JSON/);
  assert.throws(
    () => importTranscript(readFileSync(join(fixtures, 'tau-bench-results.json')), { name: 'tau.json' }),
    /tau\.json: holds 2 runs/,
  );
  assert.throws(
    () => importTranscript(new Uint8Array([0x1f, 0x8b, 8, 0, 1, 2]), { name: 'x.jsonl.gz' }),
    /x\.jsonl\.gz: gzip:/,
  );
  assert.throws(() => replayTranscript([{ role: 'assistant', tool_calls: [{ function: {} }] }]), /messages\[0\]: tool_calls\[0\] has no function `name`/);
  // Still usable after errors.
  assert.equal(replayTranscript(readFileSync(join(fixtures, 'gemini.json'))).totalRounds, 3);
});

test('evaluateTranscripts: the shared runs under the defaults give the published numbers', () => {
  const files = readdirSync(shared).filter((f) => f.endsWith('.jsonl.gz'));
  assert.equal(files.length, 3);
  const report = evaluateTranscripts(files.map((f) => ({ name: f, data: readFileSync(join(shared, f)) })));
  const { total } = report.options[0];
  assert.equal(report.options[0].label, 'defaults');
  assert.deepEqual(report.failures, []);
  assert.equal(total.runs, 961);
  assert.deepEqual([total.blocked, total.stopped, total.intervened], [74, 29, 75]);
  assert.deepEqual([total.resolvedBlocked, total.resolvedStopped], [13, 3]);
  assert.deepEqual(total.firstIntervention, { unchanged: 24, changing: 50, unknown: 0, text: 1 });
  assert.equal(total.firstInterventionResolved.changing, 8);
  assert.deepEqual(Object.keys(report.options[0].sources), [
    'coder-gpt4-lite',
    'mini-swe-agent-gemini3pro-verified',
    'tau-bench-gpt4o-airline',
  ]);
  assert.match(report.text, /^total\s+961\s+535\s+/m);
});

test('evaluateTranscripts: several options, parsed runs, failures counted apart', () => {
  const runs = readFileSync(join(fixtures, 'runs.jsonl'), 'utf8');
  const report = evaluateTranscripts(
    [{ name: 'runs.jsonl', data: runs }, { id: 'bad', rounds: 5 }, JSON.parse(runs.split('\n')[1])],
    { options: [{ label: 'defaults', option: true }, { label: 'off', option: false }] },
  );
  assert.equal(report.options.length, 2);
  assert.equal(report.options[0].total.runs, 4);
  assert.equal(report.options[0].total.blocked, 3, 'paging and the same edit, from the file and as a value');
  assert.equal(report.options[1].total.failed, 5);
  assert.ok(report.failures.some((f) => f.option === null && /^bad: /.test(f.error)), JSON.stringify(report.failures));
});
