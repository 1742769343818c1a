// `make bench`: what the gateway adds to a request, beside the same request
// sent straight to the same local upstream, in one run (medians of
// alternating rounds): at 10, 100 and 1,000 rounds of history, the whole
// request through `doomloop proxy` (Node's HTTP server, the decision in wasm,
// the relay), and the decision alone (`gatewayDecide`) — warm (the same
// conversation one round shorter was decided just before, as an agent's
// previous request is: the gateway goes on from its cached prefix) and cold
// (a conversation it has not seen: the whole history replayed). Each round is
// a distinct call with its result, so the conversation is forwarded (no
// refusal), as most requests are.
//
// Usage: node benches/js/gateway.mjs [--json FILE]
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
import { startProxy } from '../../pkg/proxy.mjs';
import { gatewayDecide } from '../../pkg/replay-node.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function body(rounds, conversation = 0) {
  const messages = [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: `Fix the failing test (${conversation}).` }];
  for (let i = 0; i < rounds; i++) {
    const args = JSON.stringify({ command: `grep -rn "symbol_${i}" src/`, cwd: '/home/user/project' });
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'bash', arguments: args } }] });
    messages.push({ role: 'tool', tool_call_id: `call_${i}`, content: `src/mod_${i}.rs:${i}: fn symbol_${i}() {}` });
  }
  return JSON.stringify({ model: 'gpt-test', messages });
}

const answer = JSON.stringify({ id: 'x', object: 'chat.completion', created: 0, model: 'gpt-test', choices: [{ index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }] });
const upstream = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(answer);
  });
});
await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
const upstreamUrl = `http://127.0.0.1:${upstream.address().port}`;
const proxy = await startProxy({ upstream: upstreamUrl, port: 0, log: () => {} });

async function post(base, text) {
  const res = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
  await res.arrayBuffer();
}

async function timed(fn, n) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn();
  return Number(process.hrtime.bigint() - start) / n / 1e6;
}

const rows = [];
const encoder = new TextEncoder();
let conversation = 0;
/** Time of `n` requests of `rounds` rounds, each a new conversation whose `rounds - 1` prefix was sent just before (untimed) when `warm`. */
async function sequence(send, rounds, n, warm) {
  let total = 0n;
  for (let i = 0; i < n; i++) {
    conversation++;
    if (warm) await send(body(rounds - 1, conversation));
    const text = body(rounds, conversation);
    const start = process.hrtime.bigint();
    await send(text);
    total += process.hrtime.bigint() - start;
  }
  return Number(total) / n / 1e6;
}
const decideText = async (text) => gatewayDecide('chat', encoder.encode(text), undefined, undefined);
console.log(`node ${process.version}; ms per request, medians of alternating rounds\n`);
for (const rounds of [10, 100, 1000]) {
  const n = rounds >= 1000 ? 6 : 30;
  const samples = { direct: [], warm: [], cold: [], decideWarm: [], decideCold: [] };
  for (let r = 0; r < 7; r++) {
    samples.direct.push(await sequence((text) => post(upstreamUrl, text), rounds, n, false));
    samples.warm.push(await sequence((text) => post(proxy.url, text), rounds, n, true));
    samples.cold.push(await sequence((text) => post(proxy.url, text), rounds, n, false));
    samples.decideWarm.push(await sequence(decideText, rounds, n, true));
    samples.decideCold.push(await sequence(decideText, rounds, n, false));
  }
  const m = Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, median(xs)]));
  const row = { rounds, bytes: encoder.encode(body(rounds)).length, directMs: m.direct, warmMs: m.warm, coldMs: m.cold, addedWarmMs: m.warm - m.direct, addedColdMs: m.cold - m.direct, decideWarmMs: m.decideWarm, decideColdMs: m.decideCold };
  rows.push(row);
  console.log(
    `${String(rounds).padStart(5)} rounds (${(row.bytes / 1024).toFixed(0)} KB): direct ${m.direct.toFixed(2)} ms; through the gateway +${row.addedWarmMs.toFixed(2)} ms warm, ` +
      `+${row.addedColdMs.toFixed(2)} ms cold; the decision alone ${m.decideWarm.toFixed(2)} ms warm, ${m.decideCold.toFixed(2)} ms cold`,
  );
}
await proxy.close();
upstream.closeAllConnections();
upstream.close();
const at = process.argv.indexOf('--json');
if (at > 0) writeFileSync(process.argv[at + 1], `${JSON.stringify({ node: process.version, rows }, null, 1)}\n`);
