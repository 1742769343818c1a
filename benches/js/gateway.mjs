// `make bench`: what the gateway adds to a request, beside the same request
// sent straight to the same local upstream, in one run (medians of
// alternating rounds): at 10, 100 and 1,000 rounds of history, the whole
// request through `doomloop proxy` (Node's HTTP server, the decision in wasm,
// the relay), and the decision alone (`gatewayDecide`). Each round is a
// distinct call with its result, so the conversation is forwarded (no
// refusal), as most requests are. There is no cache of earlier prefixes: each
// request replays its whole conversation, so the decision grows with it.
//
// Usage: node benches/js/gateway.mjs [--json FILE]
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
import { startProxy } from '../../pkg/proxy.mjs';
import { gatewayDecide } from '../../pkg/replay-node.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function body(rounds) {
  const messages = [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: 'Fix the failing test.' }];
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
console.log(`node ${process.version}; ms per request, medians of alternating rounds\n`);
for (const rounds of [10, 100, 1000]) {
  const text = body(rounds);
  const bytes = encoder.encode(text);
  const n = rounds >= 1000 ? 10 : 40;
  const direct = [];
  const through = [];
  const decision = [];
  for (let r = 0; r < 7; r++) {
    direct.push(await timed(() => post(upstreamUrl, text), n));
    through.push(await timed(() => post(proxy.url, text), n));
    decision.push(await timed(async () => gatewayDecide('chat', bytes, undefined, undefined), n));
  }
  const row = { rounds, bytes: bytes.length, directMs: median(direct), gatewayMs: median(through), addedMs: median(through) - median(direct), decideMs: median(decision) };
  rows.push(row);
  console.log(
    `${String(rounds).padStart(5)} rounds (${(bytes.length / 1024).toFixed(0)} KB): direct ${row.directMs.toFixed(2)} ms, through the gateway ${row.gatewayMs.toFixed(2)} ms ` +
      `(+${row.addedMs.toFixed(2)} ms), of which the decision ${row.decideMs.toFixed(2)} ms`,
  );
}
await proxy.close();
upstream.closeAllConnections();
upstream.close();
const at = process.argv.indexOf('--json');
if (at > 0) writeFileSync(process.argv[at + 1], `${JSON.stringify({ node: process.version, rows }, null, 1)}\n`);
