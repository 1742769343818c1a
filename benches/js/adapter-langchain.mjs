// `make bench`: what doom-loop-wasm/langchain adds per tool call.
//
// 1. The hooks alone (in-run baseline, the number the adapter is judged by):
//    the middleware's hooks driven with the shapes LangChain passes them
//    (beforeModel, wrapModelCall, afterModel, wrapToolCall per call, real
//    LangChain message objects), against the session engine driven directly
//    with the same calls (what the hooks ask of it). The difference is the
//    glue on top of the detector; the adapter aims to keep it under 20 µs.
// 2. End to end: a real createAgent run (langchain's own fakeModel drives
//    the agent loop, no network; each call has new arguments, so nothing is
//    refused) without middleware, with a no-op middleware of the same hooks
//    (LangChain's own cost of having a middleware: graph nodes, state
//    parsing) and with doomLoopMiddleware — median CPU time of alternating
//    rounds. LangChain's per-step cost is milliseconds on a shared 2-core
//    machine, so this part is coarse: read its ratios, not µs.
// Needs the built package (`make build`).
import { AIMessage, HumanMessage, ToolMessage, createAgent, fakeModel, tool } from 'langchain';
import { z } from 'zod';
import { DoomLoopSession, RECOMMENDED_DOOM_LOOP_OPTION } from '../../pkg/node.mjs';
import { doomLoopMiddleware } from '../../pkg/langchain.mjs';

const CALLS = Number(process.env.CALLS ?? 30);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const lookup = tool(async ({ page }) => ({ page, rows: [page * 10, page * 10 + 1] }), {
  name: 'read_page',
  description: 'Read one page.',
  schema: z.object({ page: z.number() }),
});

function model() {
  const m = fakeModel();
  // A fixed AIMessage per response (respondWithTools derives its content from the whole history).
  for (let i = 0; i < CALLS; i++) m.respond(new AIMessage({ content: '', tool_calls: [{ name: 'read_page', args: { page: i }, id: `call_${i}`, type: 'tool_call' }] }));
  m.respond(new AIMessage('done'));
  return m;
}

// CPU time of this process (µs): the machine is shared, and the run does no I/O.
const cpu = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

// A middleware with the same hooks that does nothing: LangChain's own cost of having one.
const noop = {
  [Symbol.for('AgentMiddleware')]: true,
  name: 'NoopMiddleware',
  stateSchema: z.object({ doomLoop: z.any().optional() }),
  beforeAgent: () => undefined,
  beforeModel: () => undefined,
  wrapModelCall: (request, handler) => handler(request),
  afterModel: { canJumpTo: ['end'], hook: () => undefined },
  wrapToolCall: (request, handler) => handler(request),
};

async function agentRun(kind, option) {
  const middleware = kind === 'ours' ? [doomLoopMiddleware({ doomLoop: option })] : kind === 'noop' ? [noop] : [];
  const agent = createAgent({ model: model(), tools: [lookup], middleware });
  const t0 = cpu();
  await agent.invoke({ messages: [{ role: 'user', content: 'read them all' }] }, { recursionLimit: 10 * CALLS + 20 });
  return cpu() - t0;
}

function detectorRun(option) {
  const t0 = cpu();
  const s = new DoomLoopSession({ doomLoop: option });
  s.onUserTurn();
  s.getState();
  for (let i = 0; i < CALLS; i++) {
    s.getState();
    s.nextRequest();
    s.onResponse({ text: '', calls: [{ id: `call_${i}`, toolName: 'read_page', args: { page: i } }] });
    s.getState();
    s.decision(`call_${i}`);
    s.onResult(`call_${i}`, { page: i, rows: [i * 10, i * 10 + 1] }, { failed: false });
  }
  s.onResponse({ text: 'done', calls: [] });
  s.getState();
  s.free?.();
  return cpu() - t0;
}

async function measure(label, option) {
  for (let i = 0; i < 2; i++) {
    await agentRun('none', option);
    await agentRun('noop', option);
    await agentRun('ours', option);
    detectorRun(option);
  }
  const plain = [];
  const empty = [];
  const guarded = [];
  const detector = [];
  for (let r = 0; r < ROUNDS; r++) {
    plain.push(await agentRun('none', option));
    empty.push(await agentRun('noop', option));
    guarded.push(await agentRun('ours', option));
    detector.push(detectorRun(option));
  }
  const perCall = (xs) => median(xs) / CALLS;
  const f = (x) => x.toFixed(1).padStart(7);
  const det = perCall(detector);
  const glue = perCall(guarded) - perCall(empty) - det;
  console.log(`${label}:`);
  console.log(`  no middleware ${f(perCall(plain))} µs/call | a no-op middleware, same hooks ${f(perCall(empty))} | doomLoopMiddleware ${f(perCall(guarded))} (ratio ${(median(guarded) / median(plain)).toFixed(3)} to none, ${(median(guarded) / median(empty)).toFixed(3)} to no-op)`);
  console.log(`  added by doomLoopMiddleware over the no-op: ${f(perCall(guarded) - perCall(empty))} µs/call = detector ${f(det)} + glue ${f(glue)}`);
}

// ---- 1. the hooks alone vs the detector alone
const HOOK_CALLS = Number(process.env.HOOK_CALLS ?? 50);
const HOOK_ROUNDS = Number(process.env.HOOK_ROUNDS ?? 41);
const toolStub = { name: 'read_page' };

// The messages LangChain would hand the hooks, built before the clock starts.
const calls = Array.from({ length: HOOK_CALLS }, (_, i) => ({ name: 'read_page', args: { page: i }, id: `call_${i}`, type: 'tool_call' }));
const aiMessages = calls.map((call) => new AIMessage({ content: '', tool_calls: [call] }));
const toolMessages = calls.map((call, i) => new ToolMessage({ content: JSON.stringify({ page: i, rows: [i * 10, i * 10 + 1] }), tool_call_id: call.id, name: 'read_page' }));
const modelAnswer = new AIMessage('');

// One run of both, step by step: call i through the hooks, then call i through the
// engine alone (the order swapped every call), each step timed on its own, so a
// burst of load on this shared machine lands on both sides alike.
async function pairedRun(option) {
  const mw = doomLoopMiddleware({ doomLoop: option });
  const state = { messages: [new HumanMessage('read them all')], doomLoop: undefined };
  const apply = (update) => {
    if (update?.doomLoop !== undefined) state.doomLoop = update.doomLoop;
  };
  const answer = async () => modelAnswer;
  const s = new DoomLoopSession({ doomLoop: option });
  let hooks = 0n;
  let engine = 0n;
  const hookStep = async (i) => {
    const t0 = process.hrtime.bigint();
    apply(mw.beforeModel(state));
    await mw.wrapModelCall({ messages: state.messages, systemPrompt: 'You read pages.', state }, answer);
    state.messages.push(aiMessages[i]);
    apply(mw.afterModel.hook(state));
    const result = await mw.wrapToolCall({ toolCall: calls[i], tool: toolStub, state: { messages: state.messages }, runtime: {} }, async () => toolMessages[i]);
    state.messages.push(result);
    hooks += process.hrtime.bigint() - t0;
  };
  const engineStep = (i) => {
    const t0 = process.hrtime.bigint();
    s.getState();
    s.nextRequest();
    s.onResponse({ text: '', calls: [{ id: `call_${i}`, toolName: 'read_page', args: { page: i } }] });
    s.getState();
    s.decision(`call_${i}`);
    s.onResult(`call_${i}`, JSON.parse(toolMessages[i].content), { failed: false });
    engine += process.hrtime.bigint() - t0;
  };
  apply(mw.beforeAgent(state));
  s.onUserTurn();
  s.getState();
  for (let i = 0; i < HOOK_CALLS; i++) {
    if (i % 2 === 0) {
      await hookStep(i);
      engineStep(i);
    } else {
      engineStep(i);
      await hookStep(i);
    }
  }
  s.free?.();
  return { hooks: Number(hooks) / 1e3, engine: Number(engine) / 1e3 };
}

async function measureHooks(label, option) {
  for (let i = 0; i < 3; i++) await pairedRun(option);
  const hooks = [];
  const engine = [];
  const glue = [];
  for (let r = 0; r < HOOK_ROUNDS; r++) {
    const run = await pairedRun(option);
    hooks.push(run.hooks / HOOK_CALLS);
    engine.push(run.engine / HOOK_CALLS);
    glue.push((run.hooks - run.engine) / HOOK_CALLS);
  }
  const [h, e] = [median(hooks), median(engine)];
  console.log(`${label.padEnd(30)} hooks ${h.toFixed(1).padStart(6)} µs/call  engine alone ${e.toFixed(1).padStart(6)} µs/call  ratio ${(h / e).toFixed(3)}  glue on top of the detector: median ${median(glue).toFixed(1)} µs/call`);
}

console.log(`node ${process.version}\n`);
console.log(`1. the middleware's hooks vs the session engine alone, ${HOOK_CALLS} calls per run, call by call, median of ${HOOK_ROUNDS} runs`);
await measureHooks('doomLoop: true', true);
await measureHooks('RECOMMENDED_DOOM_LOOP_OPTION', RECOMMENDED_DOOM_LOOP_OPTION);
if (process.env.HOOKS_ONLY) process.exit(0);
console.log(`\n2. end to end: createAgent + fakeModel, ${CALLS} tool calls per run, median CPU time of ${ROUNDS} alternating rounds`);
await measure('doomLoop: true', true);
await measure('RECOMMENDED_DOOM_LOOP_OPTION', RECOMMENDED_DOOM_LOOP_OPTION);
