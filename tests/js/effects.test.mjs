// Effect-aware streaks through the npm package: DoomLoopSession's
// `loopEffects` under RECOMMENDED_DOOM_LOOP_OPTION (the edit-and-retest
// session completes, the same edit re-applied is still blocked), a bad
// declaration warned about and treated as unknown, and doom-loop-wasm/mcp
// mapping MCP tool annotations to `loopEffects`.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as main from '../../pkg/node.mjs';
import { withWarnings } from './quiet.mjs';

const { DoomLoopSession, RECOMMENDED_DOOM_LOOP_OPTION, resolveDoomLoopOption } = await import('../../pkg/node.mjs');
const { mcpLoopEffects, annotatedLoopEffect } = await import('../../pkg/mcp.mjs');

const FAIL = 'FAILED test_x - AssertionError: 1 != 2';
const CLAUDE_CODE = { Edit: 'write', Write: 'write', MultiEdit: 'write', NotebookEdit: 'write' };

/** Plays `(tool, args, result)` one call a round; returns each call's decision. */
function play(session, calls) {
  return calls.map(([toolName, args, result], i) => {
    const id = `c${i}`;
    const [decision] = session.onResponse({ calls: [{ id, toolName, args }] }).decisions;
    if (decision.action === 'run') session.onResult(id, result);
    return decision;
  });
}

const test_ = ['Bash', { command: 'pytest tests/test_x.py' }, FAIL];
const edit = (from, to) => ['Edit', { file_path: 'x.py', old_string: from, new_string: to }, 'The file x.py has been updated.'];

test('the recommended option turns effect-aware streaks on', () => {
  assert.equal(RECOMMENDED_DOOM_LOOP_OPTION.effects, true);
  assert.equal(resolveDoomLoopOption(RECOMMENDED_DOOM_LOOP_OPTION).beyond.effects, true);
  assert.equal(resolveDoomLoopOption(true).beyond, undefined, 'the defaults stay the reference');
});

test('a new edit between identical failing test runs is progress: three failing edits before the fix complete', () => {
  const session = new DoomLoopSession({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION, loopEffects: CLAUDE_CODE });
  const calls = [test_, edit('a', 'b'), test_, edit('b', 'c'), test_, edit('c', 'd'), test_, edit('d', 'e'), ['Bash', test_[1], '1 passed']];
  const decisions = play(session, calls);
  assert.deepEqual(decisions.map((d) => d.verdict?.action ?? null), calls.map(() => null));
  session.free();
});

test('without loopEffects the same session is refused at the third test run', () => {
  const session = new DoomLoopSession({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
  const decisions = play(session, [test_, edit('a', 'b'), test_, edit('b', 'c'), test_]);
  assert.equal(decisions[4].action, 'refuse');
  assert.match(decisions[4].message, /Repeating the call will not change the result\./);
  session.free();
});

test('the same edit re-applied each time is still blocked', () => {
  const session = new DoomLoopSession({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION, loopEffects: CLAUDE_CODE });
  const calls = [test_];
  for (let i = 0; i < 4; i++) calls.push(edit('a', 'b'), test_);
  const decisions = play(session, calls);
  const refused = decisions.findIndex((d) => d.action === 'refuse');
  assert.equal(refused, 5, 'the third identical edit');
  assert.equal(decisions[refused].toolName, 'Edit');
  session.free();
});

test('a declaration that is not write or read: one warning, the tool treated as unknown', () => {
  const { value: decisions, warnings } = withWarnings(() => {
    const session = new DoomLoopSession({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION, loopEffects: { Edit: 'writes', Read: undefined } });
    const out = play(session, [test_, edit('a', 'b'), test_, edit('b', 'c'), test_]);
    session.free();
    return out;
  });
  assert.deepEqual(warnings, ['[DoomLoop] loopEffect of "Edit" must be "write" or "read", got "writes"; treating the tool\'s effect as unknown.']);
  assert.equal(decisions[4].action, 'refuse');
});

test('MCP annotations map to loopEffects: readOnlyHint, destructiveHint; non-booleans ignored with one warning', () => {
  const tools = [
    { name: 'read_file', annotations: { readOnlyHint: true } },
    { name: 'write_file', annotations: { readOnlyHint: false, idempotentHint: true } },
    { name: 'delete_file', annotations: { destructiveHint: true } },
    { name: 'plain' },
    { name: 'odd', annotations: { readOnlyHint: 'yes', destructiveHint: 1 } },
    { name: 'overridden', annotations: { readOnlyHint: true } },
  ];
  const { value: result, warnings } = withWarnings(() => mcpLoopEffects({ tools }, { prefix: 'mcp__fs__', loopEffects: { overridden: 'write' } }));
  assert.deepEqual(result, { mcp__fs__read_file: 'read', mcp__fs__write_file: 'write', mcp__fs__delete_file: 'write', mcp__fs__overridden: 'write' });
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /odd\.readOnlyHint, odd\.destructiveHint/);
  assert.equal(annotatedLoopEffect(null), undefined);
  assert.equal(annotatedLoopEffect({ readOnlyHint: true, destructiveHint: true }), 'read');
  assert.throws(() => mcpLoopEffects(42), /mcpLoopEffects: expected/);
  assert.ok(main.DoomLoopSession);
});

test('doom-loop-wasm/mcp maps annotations as the Rust core does (the shared cases the log importers are held to)', async () => {
  const { readFile } = await import('node:fs/promises');
  const { cases } = JSON.parse(await readFile(new URL('../fixtures/mcp-annotations.json', import.meta.url), 'utf8'));
  assert.ok(cases.length >= 10);
  for (const { annotations, effect, invalid } of cases) {
    const named = [];
    assert.equal(annotatedLoopEffect(annotations, (hint) => named.push(hint)) ?? null, effect, JSON.stringify(annotations));
    assert.deepEqual(named, invalid, JSON.stringify(annotations));
  }
});
