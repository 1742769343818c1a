// `make bench`: the AI SDK adapter's added cost per tool call. The same
// generateText run (the real `ai` 6.x loop, a MockLanguageModelV3 from
// ai/test answering instantly: one distinct tool call per step, so nothing is
// refused) with and without doom-loop-wasm/ai-sdk, alternated in one process
// after a warm-up (in-run baseline). Reported: the median per-call time of
// each, the adapter's added cost per call, the detector alone (the same
// calls straight into DoomLoopSession) and the glue on top of it, and the
// median ratio with ÷ without. Times are the process's CPU time
// (process.cpuUsage), which a loaded machine disturbs less than wall time.
// Needs the built package (pkg/).
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { DoomLoopSession } from '../../pkg/node.mjs';
import { createDoomLoop } from '../../pkg/ai-sdk.mjs';

const STEPS = Number(process.env.ADAPTER_BENCH_STEPS ?? 100);
const ROUNDS = Number(process.env.ADAPTER_BENCH_ROUNDS ?? 21);
const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

function model() {
  let step = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      step++;
      return step > STEPS
        ? { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
        : {
            content: [{ type: 'tool-call', toolCallId: `c${step}`, toolName: 'read_page', input: JSON.stringify({ page: step }) }],
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
            usage,
            warnings: [],
          };
    },
  });
}

const tools = { read_page: tool({ inputSchema: z.object({ page: z.number() }), execute: async ({ page }) => ({ page, text: `page ${page}` }) }) };

async function once(guarded) {
  const options = { model: model(), prompt: 'read', tools, stopWhen: stepCountIs(STEPS + 1) };
  const t0 = cpu();
  const result = await generateText(guarded ? createDoomLoop({ doomLoop: true }).wrap(options) : options);
  const us = cpu() - t0;
  if (result.steps.length !== STEPS + 1) throw new Error(`expected ${STEPS + 1} steps, got ${result.steps.length}`);
  return us / STEPS; // µs per call
}

/** CPU time of this process so far, µs. */
function cpu() {
  const { user, system } = process.cpuUsage();
  return user + system;
}

function detectorAlone() {
  const session = new DoomLoopSession({ doomLoop: true });
  const t0 = cpu();
  for (let i = 1; i <= STEPS; i++) {
    session.onResponse({ calls: [{ id: `c${i}`, toolName: 'read_page', args: { page: i } }] });
    session.nextRequest();
    session.onResult(`c${i}`, { page: i, text: `page ${i}` }, { failed: false });
  }
  return (cpu() - t0) / STEPS;
}

/**
 * The adapter's hooks driven directly, as the SDK drives them for one step
 * (prepareStep, the wrapped model's doGenerate, the wrapped execute), with an
 * instant inner model: the same session calls as detectorAlone plus the glue.
 */
async function glueAlone() {
  const guard = createDoomLoop({ doomLoop: true });
  let step = 0;
  const inner = {
    specificationVersion: 'v3',
    provider: 'bench',
    modelId: 'm',
    supportedUrls: {},
    doGenerate: async () => ({ content: [{ type: 'tool-call', toolCallId: `c${step}`, toolName: 'read_page', input: `{"page":${step}}` }] }),
  };
  const prepare = guard.prepareStep(undefined, undefined);
  const wrapped = guard.wrapTools({ read_page: { execute: async ({ page }) => ({ page, text: `page ${page}` }) } });
  const headers = { 'user-agent': 'ai/6.0.326' };
  const t0 = cpu();
  for (let i = 1; i <= STEPS; i++) {
    step = i;
    const { model: m } = await prepare({ model: inner, stepNumber: i - 1, steps: [], messages: [] });
    await m.doGenerate({ headers, prompt: [] });
    await wrapped.read_page.execute({ page: i }, { toolCallId: `c${i}`, messages: [] });
  }
  return (cpu() - t0) / STEPS;
}

async function detectorAloneAsync() {
  const session = new DoomLoopSession({ doomLoop: true });
  const t0 = cpu();
  for (let i = 1; i <= STEPS; i++) {
    await null;
    session.nextRequest();
    await null;
    session.onResponse({ calls: [{ id: `c${i}`, toolName: 'read_page', args: `{"page":${i}}` }] });
    await null;
    session.decision(`c${i}`);
    session.onResult(`c${i}`, { page: i, text: `page ${i}` }, { toolName: 'read_page' });
  }
  return (cpu() - t0) / STEPS;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

for (let i = 0; i < 5; i++) {
  await once(false);
  await once(true);
  detectorAlone();
  await glueAlone();
  await detectorAloneAsync();
}
const glue = [];
for (let i = 0; i < 41; i++) {
  const a = await detectorAloneAsync();
  const b = await glueAlone();
  glue.push(b - a);
}
const plain = [];
const guarded = [];
const alone = [];
const ratios = [];
for (let i = 0; i < ROUNDS; i++) {
  const a = await once(false);
  const b = await once(true);
  plain.push(a);
  guarded.push(b);
  ratios.push(b / a);
  alone.push(detectorAlone());
}
const added = median(guarded.map((g, i) => g - plain[i]));
const detector = median(alone);
console.log(`AI SDK adapter (ai 6, generateText, MockLanguageModelV3; ${STEPS} calls per run, ${ROUNDS} alternated runs; CPU time):`);
console.log(`  per call without the adapter   ${median(plain).toFixed(1)} µs`);
console.log(`  per call with the adapter      ${median(guarded).toFixed(1)} µs`);
console.log(`  added by the adapter           ${added.toFixed(1)} µs/call, median of the paired differences (${(median(guarded) - median(plain)).toFixed(1)} between the medians; median ratio with/without ${median(ratios).toFixed(3)})`);
console.log(`  of which the detector (session) ${detector.toFixed(1)} µs/call; the rest ${(added - detector).toFixed(1)} µs/call`);
console.log(`  the glue alone (the hooks driven directly, minus the same session calls): ${median(glue).toFixed(1)} µs/call (aim < 20)`);
