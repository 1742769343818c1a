// `make bench`: what doom-loop-wasm/langchain adds per tool call to a real
// LangChain v1 createAgent run. The same agent (langchain's own fakeModel
// driving the real agent loop, no network) runs CALLS tool calls — each with
// new arguments, so nothing is ever refused — with and without the
// middleware, alternating A/B rounds in one process after a warm-up; and the
// session engine alone is driven with the same calls (onResponse + onResult
// + getState per round, what the middleware asks of it). Reports medians per
// call: the middleware's cost, the detector's share of it, and the rest (the
// adapter glue on top of the detector), which the adapter aims to keep
// under 20 µs. Needs the built package (`make build`).
import { AIMessage, createAgent, fakeModel, tool } from 'langchain';
import { z } from 'zod';
import { DoomLoopSession, RECOMMENDED_DOOM_LOOP_OPTION } from '../../pkg/node.mjs';
import { doomLoopMiddleware } from '../../pkg/langchain.mjs';

const CALLS = Number(process.env.CALLS ?? 60);
const ROUNDS = Number(process.env.ROUNDS ?? 9);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const lookup = tool(async ({ page }) => ({ page, rows: [page * 10, page * 10 + 1] }), {
  name: 'read_page',
  description: 'Read one page.',
  schema: z.object({ page: z.number() }),
});

function model() {
  const m = fakeModel();
  for (let i = 0; i < CALLS; i++) m.respondWithTools([{ name: 'read_page', args: { page: i }, id: `call_${i}` }]);
  m.respond(new AIMessage('done'));
  return m;
}

async function agentRun(withMiddleware, option) {
  const middleware = withMiddleware ? [doomLoopMiddleware({ doomLoop: option })] : [];
  const agent = createAgent({ model: model(), tools: [lookup], middleware });
  const t0 = process.hrtime.bigint();
  await agent.invoke({ messages: [{ role: 'user', content: 'read them all' }] }, { recursionLimit: 10 * CALLS + 20 });
  return Number(process.hrtime.bigint() - t0) / 1e3; // µs
}

function detectorRun(option) {
  const t0 = process.hrtime.bigint();
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
  return Number(process.hrtime.bigint() - t0) / 1e3;
}

async function measure(label, option) {
  for (let i = 0; i < 2; i++) {
    await agentRun(false, option);
    await agentRun(true, option);
    detectorRun(option);
  }
  const plain = [];
  const guarded = [];
  const detector = [];
  for (let r = 0; r < ROUNDS; r++) {
    plain.push(await agentRun(false, option));
    guarded.push(await agentRun(true, option));
    detector.push(detectorRun(option));
  }
  const perCall = (xs) => median(xs) / CALLS;
  const added = perCall(guarded) - perCall(plain);
  const det = perCall(detector);
  console.log(
    `${label.padEnd(34)} run without ${perCall(plain).toFixed(1).padStart(7)} µs/call  with ${perCall(guarded).toFixed(1).padStart(7)} µs/call  ` +
      `ratio ${(median(guarded) / median(plain)).toFixed(3)}  added ${added.toFixed(1).padStart(6)} µs/call  detector ${det.toFixed(1).padStart(5)} µs/call  glue ${(added - det).toFixed(1).padStart(6)} µs/call`,
  );
}

console.log(`node ${process.version}; LangChain createAgent + fakeModel, ${CALLS} tool calls per run, median of ${ROUNDS} alternating rounds\n`);
await measure('doomLoop: true', true);
await measure('RECOMMENDED_DOOM_LOOP_OPTION', RECOMMENDED_DOOM_LOOP_OPTION);
