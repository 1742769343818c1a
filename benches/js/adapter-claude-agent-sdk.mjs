// `make bench`: doom-loop-wasm/claude-agent-sdk serving a long-running server —
// one doomLoopHooks() object, 20,000 sessions of 5 rounds each (PreToolUse,
// PostToolUse, PostToolBatch per round: the payloads the SDK sends), in two
// shapes: every session ends with the SDK's SessionEnd event (its detector is
// freed then), or none does (only the bound on live detectors, the least
// recently used stored and freed, keeps memory flat). Reported per shape:
// external + wasm memory and JS heap grown after a gc, RSS, the live
// detectors at the end, and µs per hook call per block of 5,000 sessions
// (flat = no slowdown as sessions accumulate). A benchmark, not a timed test.
// Run with --expose-gc (as make bench does) so the memory is read after a gc.
import { RECOMMENDED_DOOM_LOOP_OPTION } from '../../pkg/node.mjs';
import { doomLoopHooks } from '../../pkg/claude-agent-sdk.mjs';

const SESSIONS = Number(process.env.SESSIONS ?? 20_000);
const BLOCK = 5_000;
const ROUNDS = 5;
const gc = globalThis.gc ?? (() => {});
const memory = () => {
  gc();
  const m = process.memoryUsage();
  return { external: (m.external + m.arrayBuffers) / 1e6, heap: m.heapUsed / 1e6, rss: m.rss / 1e6 };
};

async function serve(endEvent) {
  const dl = doomLoopHooks({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
  const [pre, post, batch, end] = ['PreToolUse', 'PostToolUse', 'PostToolBatch', 'SessionEnd'].map((event) => dl.hooks[event][0].hooks[0]);
  const before = memory();
  const perCall = [];
  let start = performance.now();
  for (let s = 1; s <= SESSIONS; s++) {
    const base = { session_id: `sess-${s}`, transcript_path: '', cwd: '/tmp' };
    for (let i = 1; i <= ROUNDS; i++) {
      const call = { tool_use_id: `t${s}-${i}`, tool_name: `mcp__srv__tool${i % 3}`, tool_input: { q: `query ${i}` } };
      await pre({ ...base, hook_event_name: 'PreToolUse', ...call });
      await post({ ...base, hook_event_name: 'PostToolUse', ...call, tool_response: [{ type: 'text', text: `result ${i}` }] });
      await batch({ ...base, hook_event_name: 'PostToolBatch', tool_calls: [call] });
    }
    if (endEvent) await end({ ...base, hook_event_name: 'SessionEnd', reason: 'other' });
    if (s % BLOCK === 0) {
      perCall.push(((performance.now() - start) / (BLOCK * ROUNDS * 3)) * 1000);
      start = performance.now();
    }
  }
  const after = memory();
  return { live: dl.liveSessions(), perCall, external: after.external - before.external, heap: after.heap - before.heap, rss: after.rss };
}

const fmt = (x) => x.toFixed(1);
for (const [label, endEvent] of [['each session ends (SessionEnd)', true], ['no end event (LRU bound only)', false]]) {
  const r = await serve(endEvent);
  console.log(
    `claude-agent-sdk hooks, ${SESSIONS} sessions × ${ROUNDS} rounds, ${label}: ` +
      `external+wasm ${r.external >= 0 ? '+' : ''}${fmt(r.external)} MB, heap ${r.heap >= 0 ? '+' : ''}${fmt(r.heap)} MB, rss ${fmt(r.rss)} MB, ` +
      `live detectors ${r.live}; µs per hook call per ${BLOCK} sessions: ${r.perCall.map(fmt).join(', ')}` +
      (globalThis.gc ? '' : ' (run with --expose-gc for memory after a gc)'),
  );
}
