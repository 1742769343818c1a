// doomLoopHooks() serving many sessions at once, as one hooks object in a
// long-running server does: the live detectors stay bounded (the least
// recently used is stored and freed, and resumes from the store), a
// session's detector is freed when the SDK says it ended, and a subagent
// (`agent_id`) is judged apart from its session. The hooks are fed the
// payloads the SDK sends (the real SDK runs in tests/e2e/claude-agent-sdk/).
import assert from 'node:assert/strict';
import { test } from 'node:test';

const pkg = (file) => new URL(`../../pkg/${file}`, import.meta.url).href;
const { RECOMMENDED_DOOM_LOOP_OPTION } = await import(pkg('node.mjs'));
const { doomLoopHooks } = await import(pkg('claude-agent-sdk.mjs'));

const hook = (dl, event) => dl.hooks[event][0].hooks[0];
const base = (session, agent) => ({ session_id: session, transcript_path: '', cwd: '/tmp', ...(agent && { agent_id: agent, agent_type: 'general-purpose' }) });

/** One model response of one call: PreToolUse (its answer returned), PostToolUse, PostToolBatch. */
async function round(dl, { session, agent, id, tool = 'mcp__billing__get_invoice', input = { invoice_id: 'INV-2291' }, response = 'error: timed out' }) {
  const call = { tool_use_id: id, tool_name: tool, tool_input: input };
  const answer = await hook(dl, 'PreToolUse')({ ...base(session, agent), hook_event_name: 'PreToolUse', ...call });
  await hook(dl, 'PostToolUse')({ ...base(session, agent), hook_event_name: 'PostToolUse', ...call, tool_response: [{ type: 'text', text: response }] });
  await hook(dl, 'PostToolBatch')({ ...base(session, agent), hook_event_name: 'PostToolBatch', tool_calls: [call] });
  return answer.hookSpecificOutput?.permissionDecision ?? 'run';
}
const end = (dl, event, session, extra = {}) => hook(dl, event)({ ...base(session, extra.agent), hook_event_name: event, ...extra });

test('one hooks object serving 2,000 sessions keeps at most maxLiveSessions detectors live', async () => {
  const dl = doomLoopHooks({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION, maxLiveSessions: 16 });
  let most = 0;
  for (let s = 1; s <= 2000; s++) {
    for (let i = 1; i <= 3; i++) await round(dl, { session: `s-${s}`, id: `t${s}-${i}`, tool: `mcp__srv__tool${i}`, input: { q: i } });
    most = Math.max(most, dl.liveSessions());
  }
  assert.equal(most, 16);
  assert.equal(dl.liveSessions(), 16);
});

test('the default bound is 64 live detectors', async () => {
  const dl = doomLoopHooks({ doomLoop: true });
  for (let s = 1; s <= 200; s++) await round(dl, { session: `s-${s}`, id: `t${s}` });
  assert.equal(dl.liveSessions(), 64);
});

test('an evicted session resumes its streak from the store when it comes back', async () => {
  const dl = doomLoopHooks({ doomLoop: true, maxLiveSessions: 2 });
  const answers = [];
  for (let i = 1; i <= 2; i++) answers.push(await round(dl, { session: 'A', id: `a${i}` }));
  for (let s = 1; s <= 5; s++) await round(dl, { session: `other-${s}`, id: `o${s}` });
  assert.equal(dl.verdicts('A').length, 0, 'A is no longer live');
  for (let i = 3; i <= 5; i++) answers.push(await round(dl, { session: 'A', id: `a${i}` }));
  assert.deepEqual(answers, ['run', 'run', 'deny', 'deny', 'deny']);
});

test("a session's detector is freed when its session ends; its halt is still answered from the store", async () => {
  for (const event of ['Stop', 'SessionEnd']) {
    const dl = doomLoopHooks({ doomLoop: true });
    const answers = [];
    for (let i = 1; i <= 6; i++) answers.push(await round(dl, { session: 'A', id: `a${i}` }));
    assert.deepEqual(answers, ['run', 'run', 'deny', 'deny', 'deny', 'deny']);
    assert.equal(dl.liveSessions(), 1);
    await end(dl, event, 'A', event === 'SessionEnd' ? { reason: 'other' } : { stop_hook_active: false });
    assert.equal(dl.liveSessions(), 0, event);
    assert.equal(dl.haltVerdict('A').streak, 6, event);
    assert.equal(dl.getState('A').stopVerdict.action, 'stop', event);
  }
});

test('a session that goes on after Stop (the next prompt) continues its streak', async () => {
  const dl = doomLoopHooks({ doomLoop: true });
  const answers = [];
  for (let i = 1; i <= 2; i++) answers.push(await round(dl, { session: 'A', id: `a${i}` }));
  await end(dl, 'Stop', 'A', { stop_hook_active: false });
  assert.equal(dl.liveSessions(), 0);
  await hook(dl, 'UserPromptSubmit')({ ...base('A'), hook_event_name: 'UserPromptSubmit', prompt: 'try again' });
  answers.push(await round(dl, { session: 'A', id: 'a3' }));
  assert.deepEqual(answers, ['run', 'run', 'deny']);
});

test('a subagent is judged apart from its session: sequential subagents doing the same search are not a loop', async () => {
  const dl = doomLoopHooks({ doomLoop: true });
  const search = { tool: 'Grep', input: { pattern: 'chargeTwice' }, response: 'src/billing.ts:42' };
  const answers = [];
  for (let a = 1; a <= 4; a++) {
    answers.push(await round(dl, { session: 'S', agent: `agent-${a}`, id: `g${a}`, ...search }));
    await end(dl, 'SubagentStop', 'S', { agent: `agent-${a}`, stop_hook_active: false, agent_transcript_path: '' });
  }
  assert.deepEqual(answers, ['run', 'run', 'run', 'run']);
  assert.equal(dl.liveSessions(), 0);
  // The session's own loop is still its own.
  const own = [];
  for (let i = 1; i <= 3; i++) own.push(await round(dl, { session: 'S', id: `m${i}` }));
  assert.deepEqual(own, ['run', 'run', 'deny']);
});

test('two sessions interleaved, reusing tool_use ids, are judged apart', async () => {
  const dl = doomLoopHooks({ doomLoop: true });
  const a = [];
  const b = [];
  for (let i = 1; i <= 4; i++) {
    a.push(await round(dl, { session: 'A', id: 'toolu_0' }));
    b.push(await round(dl, { session: 'B', id: 'toolu_0', tool: 'mcp__docs__read_page', input: { page: i } }));
  }
  assert.deepEqual(a, ['run', 'run', 'deny', 'deny']);
  assert.deepEqual(b, ['run', 'run', 'run', 'run']);
});
