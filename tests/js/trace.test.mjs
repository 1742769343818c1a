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
const { RECOMMENDED_DOOM_LOOP_OPTION } = await import(join(pkg, 'node.mjs'));

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

test('the effects a log records come back with its transcript and reach the replay', () => {
  // A Responses log of a remote MCP server (hand-written): the tools listed
  // with their annotations, then a new edit before each re-run of a test
  // that fails the same way until the fix.
  const FAIL = 'FAILED tests/test_dates.py::test_pad';
  const call = (n, name, args, output) => ({ type: 'mcp_call', id: `mcp_${n}`, server_label: 'repo', name, arguments: JSON.stringify(args), output, error: null });
  const list = {
    type: 'mcp_list_tools',
    server_label: 'repo',
    tools: [
      { name: 'run_tests', input_schema: { type: 'object' }, annotations: { readOnlyHint: true } },
      { name: 'write_file', input_schema: { type: 'object' }, annotations: { readOnlyHint: false } },
    ],
  };
  const calls = [call(1, 'run_tests', { path: 't.py' }, FAIL)];
  for (const v of [1, 2, 3]) {
    calls.push(call(2 * v, 'write_file', { path: 'dates.py', content: `v${v}` }, 'wrote dates.py'));
    calls.push(call(2 * v + 1, 'run_tests', { path: 't.py' }, v === 3 ? '1 passed' : FAIL));
  }
  const imported = importTranscript({ output: [list, ...calls] });
  assert.equal(imported.format, 'responses');
  assert.deepEqual(imported.transcript.loopEffects, { run_tests: 'read', write_file: 'write' });
  const refused = (timeline) => timeline.rounds.flatMap((r) => r.calls).filter((c) => ['block', 'stop'].includes(c.verdict?.action));
  const replayed = replayTranscript({ output: [list, ...calls] }, { doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
  assert.deepEqual(refused(replayed), []);
  // Without the tools list nothing says write_file writes: the re-runs count.
  assert.ok(refused(replayTranscript({ output: calls }, { doomLoop: RECOMMENDED_DOOM_LOOP_OPTION })).length > 0);
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
