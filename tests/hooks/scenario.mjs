// The hook scenario every front end of `doomloop hook claude-code` must
// pass — the native binary, the wasm CLI, the npm launcher, each release
// binary (natively, under qemu or Wine): one identical failing command per
// turn, its three events (PreToolUse, PostToolUseFailure, PostToolBatch),
// refused at the third call. Shared by tests/hooks/npx.test.mjs,
// tests/hooks/npm-native.test.mjs and scripts/check-release.mjs.
import assert from 'node:assert/strict';

const COMMAND = 'cat missing.txt';

/** A state file's text but for the wall-clock times it records for `hook log` (two front ends, the same state). */
export const timeless = (state) => state.replace(/"(at|lastEvent)":\d+/g, '"$1":0');
const ERROR = 'Exit code 1\ncat: missing.txt: No such file or directory';

/** Claude Code's PreToolUse for a Bash call. */
export const pre = (session, id, command = COMMAND) => JSON.stringify({
  session_id: session, transcript_path: '/nonexistent', cwd: '/tmp', hook_event_name: 'PreToolUse',
  tool_name: 'Bash', tool_input: { command }, tool_use_id: id,
});
/** Claude Code's PostToolUseFailure for the failing call `id`. */
export const failed = (session, id) => JSON.stringify({
  session_id: session, transcript_path: '/nonexistent', cwd: '/tmp', hook_event_name: 'PostToolUseFailure',
  tool_name: 'Bash', tool_input: { command: COMMAND }, tool_use_id: id, error: ERROR,
});
/** Claude Code's PostToolBatch closing the round of calls `ids`. */
export const batch = (session, ids) => JSON.stringify({
  session_id: session, hook_event_name: 'PostToolBatch',
  tool_calls: ids.map((id) => ({ tool_name: 'Bash', tool_input: { command: COMMAND }, tool_use_id: id, tool_response: ERROR })),
});

/** The verdict a hook's stdout carries. */
export const answer = (stdout) => (stdout === '' ? 'allow' : JSON.parse(stdout).continue === false ? 'stop' : 'deny');

/**
 * One identical failing call per turn; `hook(turn, event, input)` answers
 * each event (0 PreToolUse, 1 PostToolUseFailure, 2 PostToolBatch) as a
 * process result ({ status, stdout, stderr }). Returns the PreToolUse
 * verdicts; every event must exit 0 and the two after the call say nothing.
 */
export function failingLoop(hook, session, turns) {
  const answers = [];
  for (let turn = 1; turn <= turns; turn++) {
    const id = `c${turn}`;
    const events = [pre(session, id), failed(session, id), batch(session, [id])];
    const results = events.map((input, event) => hook(turn, event, input));
    for (const r of results) assert.equal(r.status, 0, r.stderr);
    assert.equal(results[1].stderr, '');
    assert.equal(results[2].stderr, '');
    answers.push(answer(results[0].stdout));
  }
  return answers;
}
