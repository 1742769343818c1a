// `make bench`: what the gateway adds to a request, beside the same request
// sent straight to the same local upstream, in one run (medians of
// alternating rounds): at 10, 100 and 1,000 rounds of history, the whole
// request through `doomloop proxy` (Node's HTTP server, the decision in wasm,
// the relay), and the decision alone (`gatewayDecide`) — warm (the same
// conversation one round shorter was decided just before, as an agent's
// previous request is: the gateway goes on from its cached prefix) and cold
// (a conversation it has not seen: the whole history replayed). Each round is
// a distinct call with its result, so the conversation is forwarded (no
// refusal), as most requests are. Beside them, the floor of any gateway: a
// bare relay (Node's HTTP server reading the body, `fetch` to the same
// upstream, the answer streamed back — no decision), whose added latency
// the scoreboard anchors the gateway's on; and two bounds of what the gateway
// adds: its own relay alone (the same request to a path it does not guard:
// no body read, no decision) and what V8 takes to `JSON.parse` the body (the
// decision reads it in wasm).
//
// Usage: node benches/js/gateway.mjs [--json FILE]
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { startProxy } from '../../pkg/proxy.mjs';
import { gatewayDecide } from '../../pkg/replay-node.mjs';

const require = createRequire(import.meta.url);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function body(rounds, conversation = 0) {
  const messages = [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: `Fix the failing test (${conversation}).` }];
  for (let i = 0; i < rounds; i++) {
    // The conversation's number in its calls: the engine reads calls, not
    // the user's words, so two conversations differ only where their calls do.
    const args = JSON.stringify({ command: `grep -rn "symbol_${i}" src/`, cwd: `/home/user/project-${conversation}` });
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
const bareRelay = createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const answer = await fetch(`${upstreamUrl}${req.url}`, { method: req.method, headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
  res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
  for await (const chunk of answer.body) res.write(chunk);
  res.end();
});
await new Promise((resolve) => bareRelay.listen(0, '127.0.0.1', resolve));
const relayUrl = `http://127.0.0.1:${bareRelay.address().port}`;

async function post(base, text, path = '/v1/chat/completions') {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
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
/**
 * Time of `n` requests of `rounds` rounds, each a new conversation whose `rounds - 1` prefix was
 * sent just before (untimed) when `warm`; `prepare` turns the body's text into what `send` takes
 * (untimed).
 */
async function sequence(send, rounds, n, warm, prepare = (text) => text) {
  let total = 0n;
  for (let i = 0; i < n; i++) {
    conversation++;
    if (warm) await send(prepare(body(rounds - 1, conversation)));
    const text = prepare(body(rounds, conversation));
    const start = process.hrtime.bigint();
    await send(text);
    total += process.hrtime.bigint() - start;
  }
  return Number(total) / n / 1e6;
}
// The body as the proxy hands it over: bytes (encoding the text is not the decision's).
const decideBytes = async (bytes) => gatewayDecide('chat', bytes, undefined, undefined);
const encode = (text) => encoder.encode(text);
// Memory per cached conversation, measured first (the memory only grows, and
// the 1,000-round requests below leave it grown far past what the cache
// holds): the full module's wasm memory after a cache of its own (the
// reference's option) is filled with 256 conversations of 100 rounds,
// against before — the cache's high-water mark, one request's working
// memory included.
const wasmMemory = () => require('../../pkg/doom_loop_full_node.cjs').ioMemory().buffer.byteLength;
const before = wasmMemory();
for (let i = 0; i < 256; i++) {
  conversation++;
  gatewayDecide('chat', encoder.encode(body(100, conversation)), 'true', undefined);
}
const memory = { conversations: 256, rounds: 100, perConversationKB: (wasmMemory() - before) / 256 / 1024 };
const memoryLine = `memory per cached conversation of 100 rounds: ${memory.perConversationKB.toFixed(1)} KB (the module's memory over 256 conversations)`;
console.log(`node ${process.version}; ms per request, medians of alternating rounds\n`);
for (const rounds of [10, 100, 1000]) {
  const n = rounds >= 1000 ? 6 : 30;
  const samples = { direct: [], relay: [], warm: [], cold: [], unguarded: [], decideWarm: [], decideCold: [], jsonParse: [] };
  for (let r = 0; r < 7; r++) {
    samples.direct.push(await sequence((text) => post(upstreamUrl, text), rounds, n, false));
    samples.relay.push(await sequence((text) => post(relayUrl, text), rounds, n, false));
    samples.warm.push(await sequence((text) => post(proxy.url, text), rounds, n, true));
    samples.cold.push(await sequence((text) => post(proxy.url, text), rounds, n, false));
    samples.unguarded.push(await sequence((text) => post(proxy.url, text, '/v1/unguarded'), rounds, n, false));
    samples.decideWarm.push(await sequence(decideBytes, rounds, n, true, encode));
    samples.decideCold.push(await sequence(decideBytes, rounds, n, false, encode));
    samples.jsonParse.push(await sequence(async (text) => JSON.parse(text), rounds, n, false));
  }
  const m = Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, median(xs)]));
  const row = { rounds, bytes: encoder.encode(body(rounds)).length, directMs: m.direct, relayAddedMs: m.relay - m.direct, warmMs: m.warm, coldMs: m.cold, addedWarmMs: m.warm - m.direct, addedColdMs: m.cold - m.direct, unguardedAddedMs: m.unguarded - m.direct, jsonParseMs: m.jsonParse, decideWarmMs: m.decideWarm, decideColdMs: m.decideCold };
  rows.push(row);
  console.log(
    `${String(rounds).padStart(5)} rounds (${(row.bytes / 1024).toFixed(0)} KB): direct ${m.direct.toFixed(2)} ms; a bare relay +${row.relayAddedMs.toFixed(2)} ms; through the gateway +${row.addedWarmMs.toFixed(2)} ms warm, ` +
      `+${row.addedColdMs.toFixed(2)} ms cold, +${row.unguardedAddedMs.toFixed(2)} ms on a path it does not guard; the decision alone ${m.decideWarm.toFixed(2)} ms warm, ${m.decideCold.toFixed(2)} ms cold (JSON.parse of the body ${m.jsonParse.toFixed(2)} ms)`,
  );
}
// Time to the first byte of a streamed answer (100 rounds, warm), direct and
// through the gateway: the upstream sends its first event at once and the
// rest 20 ms later; the gateway relays each chunk as it arrives.
const streamer = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"a"}}]}\n\n');
    setTimeout(() => res.end('data: [DONE]\n\n'), 20);
  });
});
await new Promise((resolve) => streamer.listen(0, '127.0.0.1', resolve));
const streamUrl = `http://127.0.0.1:${streamer.address().port}`;
const streamProxy = await startProxy({ upstream: streamUrl, port: 0, log: () => {} });
async function firstByte(base, text) {
  const start = process.hrtime.bigint();
  const res = await fetch(`${base}/v1/chat/completions`, { method: 'POST', body: text });
  const reader = res.body.getReader();
  await reader.read();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  while (!(await reader.read()).done);
  return ms;
}
const ttfb = { direct: [], gateway: [] };
for (let i = 0; i < 15; i++) {
  conversation++;
  await firstByte(streamProxy.url, body(99, conversation));
  ttfb.direct.push(await firstByte(streamUrl, body(100, conversation)));
  ttfb.gateway.push(await firstByte(streamProxy.url, body(100, conversation)));
}
const stream = { directMs: median(ttfb.direct), gatewayMs: median(ttfb.gateway) };
console.log(`\ntime to the first byte of a stream, 100 rounds warm: direct ${stream.directMs.toFixed(2)} ms, through the gateway ${stream.gatewayMs.toFixed(2)} ms (+${(stream.gatewayMs - stream.directMs).toFixed(2)} ms)`);
await streamProxy.close();
console.log(memoryLine);
streamer.closeAllConnections();
streamer.close();

await proxy.close();
bareRelay.closeAllConnections();
bareRelay.close();
upstream.closeAllConnections();
upstream.close();
const at = process.argv.indexOf('--json');
if (at > 0) writeFileSync(process.argv[at + 1], `${JSON.stringify({ node: process.version, rows, stream, memory }, null, 1)}\n`);
