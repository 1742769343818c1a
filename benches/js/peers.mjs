// `make bench`, fingerprints against what a user would write instead:
// every row is measured in one process, alternating rounds after a
// warm-up, medians, and printed as the package's speed-up over each peer:
//
//   canonicalize+node:crypto   npm `canonicalize` (RFC 8785) + createHash('sha256')
//   canonicalize+noble         npm `canonicalize` + @noble/hashes sha256 (pure JS, every runtime)
//   reference                  the reference's own path: canonicalize + crypto.subtle.digest
//                              (async; REF_MODULE=… uses the transpiled reference module itself)
//   floor                      JSON.stringify + createHash: no canonicalization at all — the
//                              package's time as a multiple of it (lower is better)
//   strict floor               JSON.stringify + ONE one-shot SHA-256 of its text (crypto.hash
//                              where the runtime has it): the least any fingerprint of the
//                              value's JSON could cost here; the scoreboard's anchor
//
// Each fingerprint row says which way the package took: small plain data
// is written in JS and hashed by node:crypto (js/lower.js), the rest goes
// through wasm.
//
// Beside each row, what stands in the way of a target the row misses, timed
// in the same race (benches/js/targets.mjs weighs it against the time the
// target allows): for a fingerprint, the package's lowering alone (the
// native JSON.stringify plus the read-only check that parity needs, as
// node.cjs installs it) and the cheapest SHA-256 of the canonical text the
// runtime has (the one-shot crypto.hash, else createHash) — work no
// fingerprint by this design can skip; for a record, the same two for its
// arguments, parse included (both sides of that race parse them).
//
// Shapes: a 150 B argument object, 1.4 MB of many small objects (20,000
// rows × 4 fields), one 1 MB string argument (an edit carrying a file),
// and 60 levels of nesting; then recordToolCall repeated (a loop: a
// verdict every call) and distinct, and the session engine's onResponse
// (what the adapters run). `--json FILE` also writes the rows.
import * as nodeCrypto from 'node:crypto';
import { types } from 'node:util';
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { resolve as resolvePath } from 'node:path';
import { createRequire } from 'node:module';
import canonicalize from 'canonicalize';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import * as pkg from '../../pkg/node.mjs';
// The shim's lowering on its own, with the Proxy test node.cjs installs.
import { lowerKeyMaterialForIo, canonicalPlainText, setProxyCheck } from '../../pkg/lower.js';

setProxyCheck(types.isProxy);
const { createHash } = nodeCrypto;

const encoder = new TextEncoder();
const nodeHex = (text) => createHash('sha256').update(text).digest('hex');
const peers = {
  'canonicalize+node:crypto': (tool, value) => nodeHex(`${tool}\n${canonicalize(value)}`),
  'canonicalize+noble': (tool, value) => bytesToHex(nobleSha256(encoder.encode(`${tool}\n${canonicalize(value)}`))),
};
async function subtleHex(text) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
  return bytesToHex(digest);
}
const reference = process.env.REF_MODULE ? await import(pathToFileURL(resolvePath(process.env.REF_MODULE)).href) : null;
const referenceFingerprint = reference
  ? (tool, value) => reference.fingerprintToolCall(tool, value)
  : (tool, value) => subtleHex(`${tool}\n${canonicalize(value)}`);
const floor = (tool, value) => nodeHex(`${tool}\n${JSON.stringify(value)}`);
/** The cheapest SHA-256 (hex) this runtime offers: the one-shot `crypto.hash` (Node ≥ 20.12), else `createHash`. */
const cheapestHex = typeof nodeCrypto.hash === 'function' ? (text) => nodeCrypto.hash('sha256', text, 'hex') : nodeHex;
const strictFloor = (tool, value) => cheapestHex(`${tool}\n${JSON.stringify(value)}`);

const shapes = {
  '150 B object': {
    command: 'grep -rn TODO src/',
    cwd: '/home/user/project',
    timeout_ms: 30000,
    env: { LANG: 'C' },
    flags: ['-i', '--color=never'],
  },
  '1.4 MB, 20k rows × 4 fields': {
    rows: Array.from({ length: 20000 }, (_, i) => ({ id: i, name: `row-${i}-naïve`, price: i * 0.75 + 0.01, active: i % 3 === 0 })),
  },
  '1 MB string argument': {
    path: 'src/big_module.py',
    content: Array.from({ length: 16000 }, (_, i) => `    value_${i} = compute(${i}, "x") # line ${i}\n`).join('').slice(0, 1 << 20),
  },
  '60 levels of nesting': (() => {
    let value = { leaf: 'end', n: 1 };
    for (let depth = 0; depth < 59; depth++) value = { level: depth, child: value, tags: ['a', 'b'] };
    return value;
  })(),
};

async function time(fn, iterations) {
  globalThis.gc?.();
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) {
    const result = fn(i);
    if (result instanceof Promise) await result;
  }
  return Number(process.hrtime.bigint() - start) / iterations;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(2)} µs`);

/** Medians of `rounds` alternating rounds of every contender (warmed up first). */
async function race(contenders, iterations, rounds) {
  const names = Object.keys(contenders);
  for (const name of names) await time(contenders[name], Math.max(1, Math.ceil(iterations / 2)));
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) for (const name of names) samples[name].push(await time(contenders[name], iterations));
  return Object.fromEntries(names.map((n) => [n, median(samples[n])]));
}

const rows = [];
console.log(`node ${process.version}; package vs peers, median of alternating rounds (×: peer time ÷ package time)\n`);
for (const [shape, value] of Object.entries(shapes)) {
  // Same answers first: a race of different work would mean nothing.
  const ours = pkg.fingerprintToolCallSync('edit', value);
  for (const [name, peer] of Object.entries(peers)) {
    if (peer('edit', value) !== ours) throw new Error(`${name} disagrees with the package on ${shape}`);
  }
  if ((await referenceFingerprint('edit', value)) !== ours) throw new Error(`the reference disagrees on ${shape}`);
  const size = JSON.stringify(value).length;
  const canonicalText = `edit\n${canonicalize(value)}`;
  if (cheapestHex(canonicalText) !== ours) throw new Error(`the bound's hash is not the fingerprint's on ${shape}`);
  const iterations = size > 1e5 ? 6 : 3000;
  const t = await race(
    {
      package: () => pkg.fingerprintToolCallSync('edit', value),
      ...Object.fromEntries(Object.entries(peers).map(([n, f]) => [n, () => f('edit', value)])),
      reference: () => referenceFingerprint('edit', value),
      floor: () => floor('edit', value),
      strictFloor: () => strictFloor('edit', value),
      stringify: () => JSON.stringify(value),
      lowering: () => lowerKeyMaterialForIo(value),
      hash: () => cheapestHex(canonicalText),
    },
    iterations,
    size > 1e5 ? 5 : 9,
  );
  const row = {
    operation: `fingerprint, ${shape}`,
    // Small plain data is canonicalized in JS and hashed by node:crypto,
    // never entering wasm (js/lower.js): no JSON.stringify on that path.
    path: canonicalPlainText(value) !== undefined ? 'js' : 'core',
    package: t.package,
    vsNodeCrypto: t['canonicalize+node:crypto'] / t.package,
    vsNoble: t['canonicalize+noble'] / t.package,
    vsReference: t.reference / t.package,
    floorMultiple: t.package / t.floor,
    strictFloorMultiple: t.package / t.strictFloor,
    // Every contender's time (ns), for the scoreboard's bounds.
    times: t,
  };
  rows.push(row);
  console.log(
    `${row.operation.padEnd(44)} ${fmt(t.package).padStart(10)}  ` +
      `${row.vsNodeCrypto.toFixed(2)}× canonicalize+node:crypto  ${row.vsNoble.toFixed(2)}× canonicalize+noble  ` +
      `${row.vsReference.toFixed(1)}× reference  ${row.strictFloorMultiple.toFixed(2)}× the strict floor  (${row.path === 'js' ? 'written in JS' : 'through wasm'})`,
  );
}

// recordToolCall: the reference's monitor when REF_MODULE is given, else its
// algorithm's cost per call (a fingerprint through WebCrypto + a Map).
// Fresh argument objects per call, as an agent SDK parses them (and the
// same parse for both contenders): a reused object would measure the
// reference's per-object WeakMap memo, which the SDK never hits.
const small = shapes['150 B object'];
const smallText = JSON.stringify(small);
const variedText = Array.from({ length: 64 }, (_, i) => JSON.stringify({ ...small, cwd: `/home/user/project-${i}` }));
function referenceMonitor() {
  if (reference) {
    const warn = console.warn;
    console.warn = () => {};
    const monitor = new reference.DoomLoopMonitor(reference.resolveDoomLoopOption(true));
    console.warn = warn;
    return (tool, value, round) => monitor.recordToolCall(tool, value, round);
  }
  const streaks = new Map();
  return async (tool, value) => {
    const fp = await referenceFingerprint(tool, value);
    const prev = streaks.get(tool);
    streaks.set(tool, { fp, streak: prev?.fp === fp ? prev.streak + 1 : 1 });
  };
}
// The canonical text of each, for the hash a record cannot skip.
const smallCanonical = `bash\n${canonicalize(small)}`;
const variedCanonical = variedText.map((text) => `bash\n${canonicalize(JSON.parse(text))}`);
for (const [label, argsOf, canonicalOf] of [
  ['repeated (a loop)', () => JSON.parse(smallText), () => smallCanonical],
  ['distinct calls', (i) => JSON.parse(variedText[i % 64]), (i) => variedCanonical[i % 64]],
]) {
  const ref = referenceMonitor();
  const monitor = new pkg.DoomLoopMonitor(pkg.resolveDoomLoopOption(true));
  const t = await race(
    {
      package: (i) => monitor.recordToolCallSync('bash', argsOf(i), i),
      reference: (i) => ref('bash', argsOf(i), i),
      lowering: (i) => lowerKeyMaterialForIo(argsOf(i)),
      hash: (i) => cheapestHex(canonicalOf(i)),
    },
    3000,
    9,
  );
  const row = { operation: `recordToolCall, ${label}`, package: t.package, vsReference: t.reference / t.package, times: t };
  rows.push(row);
  console.log(`${row.operation.padEnd(44)} ${fmt(t.package).padStart(10)}  ${row.vsReference.toFixed(1)}× reference`);
}
// What every adapter runs: DoomLoopSession.onResponse with one call of the
// same distinct arguments (a fresh session every 64 responses, as a run
// that makes progress), beside the reference's record of that call, and as
// a multiple of the package's own bare fingerprint of it. Beside it, what
// the session cannot skip that a bare fingerprint of small arguments no
// longer does (it never enters wasm): one round trip into wasm carrying the
// response as the shim writes it — its text encoded into wasm memory, one
// call in and back, a one-decision compact answer read out (core.js).
const glue = createRequire(import.meta.url)('../../pkg/doom_loop_node.cjs');
const wasmMemory = glue.ioMemory();
const decoder = new TextDecoder();
let ioBytes = new Uint8Array(0);
let ioData;
function roundTrip(text) {
  // The address holds while the buffer does not grow: the session's own
  // calls already grew it past this text.
  const address = glue.ioBuffer(text.length + 96);
  if (ioBytes.buffer !== wasmMemory.buffer || ioBytes.byteOffset !== address) {
    ioBytes = new Uint8Array(wasmMemory.buffer, address, text.length + 96);
    ioData = new DataView(wasmMemory.buffer, address, text.length + 96);
  }
  encoder.encodeInto(text, ioBytes);
  return {
    round: ioData.getFloat64(0, true),
    decisions: [{ id: 'c', toolName: 'bash', action: ioBytes[16] & 1 ? 'refuse' : 'run', fingerprint: decoder.decode(ioBytes.subarray(24, 88)), streak: ioData.getFloat64(8, true) }],
  };
}
{
  const ref = referenceMonitor();
  let session;
  const onResponse = (i) => {
    if (i % 64 === 0) {
      session?.free();
      session = new pkg.DoomLoopSession({});
    }
    return session.onResponse({ calls: [{ id: `c${i}`, toolName: 'bash', args: JSON.parse(variedText[i % 64]) }] });
  };
  // The response as the shim writes it: a call whose small plain arguments
  // it fingerprinted itself (js/session.js).
  const responseText = (i) =>
    `{"text":null,"calls":[{"id":"c${i}","toolName":"bash","malformed":false,"key":{"fingerprint":"${'0'.repeat(64)}"},"args":null}]}`;
  const t = await race(
    {
      package: onResponse,
      reference: (i) => ref('bash', JSON.parse(variedText[i % 64]), i),
      fingerprint: (i) => pkg.fingerprintToolCallSync('bash', JSON.parse(variedText[i % 64])),
      crossing: (i) => roundTrip(responseText(i)),
    },
    3000,
    9,
  );
  const row = {
    operation: 'session onResponse, one 150 B call',
    package: t.package,
    vsReference: t.reference / t.package,
    fingerprintMultiple: t.package / t.fingerprint,
    times: t,
  };
  rows.push(row);
  console.log(
    `${row.operation.padEnd(44)} ${fmt(t.package).padStart(10)}  ${row.vsReference.toFixed(1)}× reference's record  ` +
      `${row.fingerprintMultiple.toFixed(2)}× the package's fingerprint (${fmt(t.fingerprint)}); one wasm round trip with the response ${fmt(t.crossing)}`,
  );
}
console.log(`\nreference: ${reference ? 'the reference module (REF_MODULE)' : 'its algorithm (canonicalize + crypto.subtle.digest)'}`);

const at = process.argv.indexOf('--json');
if (at > 0 && process.argv[at + 1]) {
  writeFileSync(process.argv[at + 1], `${JSON.stringify({ node: process.version, rows }, null, 1)}\n`);
}
