// A tool named `__proto__` is a tool like any other: every path that copies
// tools or their loop keys by name keeps it as an own key (an assignment
// `copy[name] = …` would set the copy's prototype instead and lose it).
// The poll below changes a nonce every call; its loop key ["job"] is what
// makes the 3rd identical poll a refusal.
import assert from 'node:assert/strict';
import { test } from 'node:test';

const pkg = (file) => new URL(`../../pkg/${file}`, import.meta.url).href;
const { DoomLoopSession, withDoomLoop } = await import(pkg('node.mjs'));
const { mcpLoopKeys } = await import(pkg('mcp.mjs'));
const { createDoomLoop } = await import(pkg('ai-sdk.mjs'));

const PROTO = '__proto__';
/** `{ __proto__: value }` as an own key (an object literal would set the prototype). */
const own = (value) => Object.defineProperty({}, PROTO, { value, enumerable: true, writable: true, configurable: true });
const poll = (round) => ({ job: 'j-1', nonce: round });

function sessionActions(loopKeys, tool) {
  const session = new DoomLoopSession({ doomLoop: true, loopKeys });
  try {
    return [1, 2, 3, 4].map((r) => session.onResponse({ calls: [{ id: `c${r}`, toolName: tool, args: poll(r) }] }).decisions[0].action);
  } finally {
    session.free();
  }
}

test('DoomLoopSession keeps the data loop key of a tool named __proto__', () => {
  const refused = ['run', 'run', 'refuse', 'refuse'];
  assert.deepEqual(sessionActions({ poll: ['job'] }, 'poll'), refused);
  assert.deepEqual(sessionActions(own(['job']), PROTO), refused);
});

test('mcpLoopKeys → DoomLoopSession: a listed tool named __proto__ keeps its advertised key', () => {
  // As a tools/list result arrives: JSON.parse makes `__proto__` an own key.
  const listed = JSON.parse('{"tools":[{"name":"__proto__","inputSchema":{},"_meta":{"openrouter/loopKey":["job"]}}]}');
  const loopKeys = mcpLoopKeys(listed);
  assert.ok(Object.hasOwn(loopKeys, PROTO));
  assert.deepEqual(sessionActions(loopKeys, PROTO), ['run', 'run', 'refuse', 'refuse']);
});

test('AI SDK wrapTools keeps a tool named __proto__ as an own, wrapped tool', async () => {
  const calls = [];
  const tools = own({ description: 'polls a job', execute: async (input) => { calls.push(input); return 'pending'; } });
  const wrapped = createDoomLoop({ doomLoop: true }).wrapTools(tools);
  assert.equal(Object.getPrototypeOf(wrapped), Object.prototype);
  assert.ok(Object.hasOwn(wrapped, PROTO));
  assert.notEqual(wrapped[PROTO].execute, tools[PROTO].execute);
  assert.equal(await wrapped[PROTO].execute(poll(1), { toolCallId: 'c1' }), 'pending');
  assert.deepEqual(calls, [poll(1)]);
});

test('withDoomLoop (callModel) keeps the loop key a tool named __proto__ declares, as an option or on the tool', async () => {
  const tool = (extra = {}) => ({ type: 'function', function: { name: PROTO, parameters: {}, execute: async () => 'pending', ...extra } });
  for (const [label, request, options] of [
    ['loopKeys option', { model: 'm', input: 'go', tools: [tool()] }, { loopKeys: own(['job']) }],
    ['tool.function.loopKey', { model: 'm', input: 'go', tools: [tool({ loopKey: ['job'] })] }, {}],
  ]) {
    const run = withDoomLoop(request, { doomLoop: true, ...options });
    const pre = run.hooks.PreToolUse[0].handler;
    const answers = [];
    for (let turn = 1; turn <= 4; turn++) {
      await run.onTurnStart({ numberOfTurns: turn });
      answers.push(pre({ toolName: PROTO, toolInput: poll(turn) })?.block ? 'refuse' : 'run');
      await run.onTurnEnd({ numberOfTurns: turn }, { output: [] });
    }
    assert.deepEqual(answers, ['run', 'run', 'refuse', 'refuse'], label);
  }
});
