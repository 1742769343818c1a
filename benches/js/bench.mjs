// `make bench` (JS half): the package's synchronous API against a JS
// baseline of the reference's own algorithm — the npm `canonicalize`
// package (RFC 8785) + `crypto.subtle.digest('SHA-256')`, as
// `@openrouter/agent/doom-loop` computes fingerprints — measured in one
// process, alternating A/B rounds after a warm-up (V8 runs fresh wasm in its
// baseline tier first), reporting medians and the ratio baseline ÷ package.
// Also: .wasm size raw and gzipped, and the cold start of import + init.
// `--json FILE` also writes every number printed, for
// scripts/render-figures.mjs (the README's benchmark figure).
import { readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { loadavg } from 'node:os';
import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { resolve as resolvePath } from 'node:path';
import canonicalize from 'canonicalize';
import * as pkg from '../../pkg/node.mjs';

const encoder = new TextEncoder();
async function sha256Hex(text) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}
const baseline = {
  fingerprint: (tool, value) => sha256Hex(`${tool}\n${canonicalize(value)}`),
  monitor() {
    const streaks = new Map();
    return async (tool, value) => {
      const fp = await baseline.fingerprint(tool, value);
      const prev = streaks.get(tool);
      const streak = prev?.fp === fp ? prev.streak + 1 : 1;
      streaks.set(tool, { fp, streak });
      return streak;
    };
  },
  // The reference's text hot path: normalise, then fingerprint the whole response.
  text: async (text) => sha256Hex(canonicalize(text.replace(/\s+/g, ' ').trim())),
};

// The reference's streak bookkeeping (restore, declareRound,
// recordToolCall), transcribed for the baseline: a per-object fingerprint
// memo, a Map of tools, a Set per round, per-call counts in an object,
// sets compared member by member. Verdicts are left out (they are built
// only on repeats); the bookkeeping is the part that scales.
class ReferenceBookkeeping {
  tools = new Map();
  memo = new WeakMap();
  async fingerprintOnce(tool, value) {
    const hit = typeof value === 'object' && value !== null ? this.memo.get(value)?.get(tool) : undefined;
    if (hit !== undefined) return hit;
    const fp = await baseline.fingerprint(tool, value);
    if (typeof value === 'object' && value !== null) this.memo.set(value, new Map([[tool, fp]]));
    return fp;
  }
  async declareRound(round, calls) {
    const hashed = await Promise.all(calls.map(async (c) => ({ c, fp: await this.fingerprintOnce(c.toolName, c.keyMaterial) })));
    const sets = new Map();
    for (const { c, fp } of hashed) sets.set(c.toolName, (sets.get(c.toolName) ?? new Set()).add(fp));
    this.declared = { round, sets: new Map([...sets].map(([t, s]) => [t, [...s].sort()])) };
  }
  restore(state) {
    const tools = new Map();
    for (const [name, entry] of Object.entries(state.tools ?? {})) {
      const set = Array.isArray(entry.roundFingerprints) && entry.roundFingerprints.length > 1 ? [...entry.roundFingerprints].sort() : [entry.fingerprint];
      const counts = Object.create(null);
      for (const [fp, n] of Object.entries(entry.callStreaks ?? {})) if (typeof n === 'number' && Number.isFinite(n) && n >= 1) counts[fp] = Math.floor(n);
      const streak = Math.min(Math.max(Math.floor(entry.streak), 1), 1e6);
      tools.set(name, { fingerprint: entry.fingerprint, streak, roundFingerprints: set, callStreaks: Object.keys(counts).length > 0 ? counts : Object.fromEntries(set.map((f) => [f, streak])) });
    }
    this.tools = tools;
  }
  async recordToolCall(tool, value, round) {
    const fp = await this.fingerprintOnce(tool, value);
    const prev = this.tools.get(tool);
    const same = prev?.round !== undefined && prev.round === round;
    const declared = this.declared?.round === round ? this.declared.sets.get(tool) : undefined;
    const member = declared?.includes(fp) === true;
    const seen = same ? prev.seen : new Set();
    const duplicateInRound = seen.has(fp);
    const priorSet = same ? prev.priorSet : prev?.roundFingerprints ?? (prev ? [prev.fingerprint] : undefined);
    const priorStreak = same ? prev.priorStreak : prev?.streak ?? 0;
    const match = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);
    const score = (set) => (priorSet !== undefined && match(priorSet, set) ? priorStreak + 1 : 1);
    const priorCalls = same ? prev.priorCalls : prev?.callStreaks ?? {};
    const callStreak = (Object.hasOwn(priorCalls, fp) ? priorCalls[fp] : 0) + 1;
    const streak = score(member ? declared : [fp]);
    const roundSet = declared ?? [fp];
    const callStreaks = same ? prev.callStreaks : {};
    callStreaks[fp] = callStreak;
    this.tools.set(tool, { fingerprint: fp, round, seen: seen.add(fp), roundFingerprints: roundSet, streak: score(roundSet), priorSet, priorStreak, priorCalls, callStreaks });
    return { fingerprint: fp, streak: Math.max(streak, callStreak), duplicateInRound };
  }
}

const small = {
  command: 'grep -rn TODO src/',
  cwd: '/home/user/project',
  timeout_ms: 30000,
  env: { LANG: 'C' },
  flags: ['-i', '--color=never'],
};
function largeObject() {
  const items = [];
  for (let i = 0; items.length < 5200; i++) {
    items.push({
      id: i,
      name: `item-${i}-café-🎉`,
      price: i * 1.25 + 0.1,
      tags: ['alpha', 'beta', `t${i % 17}`],
      nested: { ok: i % 2 === 0, note: null, text: 'lorem ipsum dolor sit amet '.repeat(6) },
      zeta: 'z'.repeat(i % 30),
    });
  }
  return { items, meta: { count: items.length } };
}
const large = largeObject();
let text = '';
const words = ['the', 'invoice', 'request', 'timed', 'out', 'and', 'I', 'will', 'retry', 'now.'];
for (let i = 0; text.length < 4.8e6; i++) text += words[i % words.length] + (i % 13 === 0 ? '\n  ' : ' ');
text += 'I am stuck. '.repeat(40);

async function measure(fn, iterations) {
  // Each side starts from a clean heap, so neither pays for the other's
  // garbage (the baseline makes a promise per call). `make bench` passes
  // --expose-gc.
  globalThis.gc?.();
  const start = process.hrtime.bigint();
  // The baseline is async (WebCrypto); the package is measured through its
  // synchronous API, so only a returned promise is awaited.
  for (let i = 0; i < iterations; i++) {
    const result = fn(i);
    if (result instanceof Promise) await result;
  }
  return Number(process.hrtime.bigint() - start) / iterations;
}
const jsonOut = process.argv.includes('--json') ? process.argv[process.argv.indexOf('--json') + 1] : null;
const report = { node: process.version, date: new Date().toISOString().slice(0, 10), loadAverage: loadavg()[0], rows: [], modules: [], coldStartMs: {} };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(2)} µs`);

async function compare(name, base, ours, iterations, rounds = 7) {
  await measure(base, Math.ceil(iterations / 2));
  await measure(ours, Math.ceil(iterations / 2));
  const a = [];
  const b = [];
  for (let r = 0; r < rounds; r++) {
    a.push(await measure(base, iterations));
    b.push(await measure(ours, iterations));
  }
  const [ma, mb] = [median(a), median(b)];
  console.log(`${name.padEnd(34)} baseline ${fmt(ma).padStart(10)}   doom-loop-wasm ${fmt(mb).padStart(10)}   ${(ma / mb).toFixed(1).padStart(6)}×`);
  report.rows.push({ name, baselineNs: Math.round(ma), packageNs: Math.round(mb), ratio: Number((ma / mb).toFixed(2)) });
  return ma / mb;
}

// Same answers first: a benchmark of different work would mean nothing.
for (const value of [small, large]) {
  if ((await baseline.fingerprint('bash', value)) !== pkg.fingerprintToolCallSync('bash', value)) {
    throw new Error('baseline and package disagree');
  }
}

console.log(`node ${process.version}, ${new Date().toISOString().slice(0, 10)}; median of alternating rounds\n`);
await compare('fingerprint, 150 B object', () => baseline.fingerprint('bash', small), () => pkg.fingerprintToolCallSync('bash', small), 4000, 11);
console.log(`  (object JSON: ${JSON.stringify(small).length} B; large: ${JSON.stringify(large).length} B; text: ${text.length} chars)`);
await compare('fingerprint, 1.6 MB object', () => baseline.fingerprint('bash', large), () => pkg.fingerprintToolCallSync('bash', large), 8, 5);
// A doom loop: the same call every round, so from the second round on the
// package also builds and returns a verdict (the baseline only counts).
const baseRecord = baseline.monitor();
const monitor = new pkg.DoomLoopMonitor(pkg.resolveDoomLoopOption(true));
await compare('recordToolCall, repeated (verdicts)', (i) => baseRecord('bash', small), (i) => monitor.recordToolCallSync('bash', small, i), 4000, 11);
// A healthy run: the arguments change every round, no verdict.
const varied = Array.from({ length: 64 }, (_, i) => ({ ...small, cwd: `/home/user/project-${i}` }));
const baseVaried = baseline.monitor();
const variedMonitor = new pkg.DoomLoopMonitor(pkg.resolveDoomLoopOption(true));
await compare('recordToolCall, distinct calls', (i) => baseVaried('bash', varied[i % 64]), (i) => variedMonitor.recordToolCallSync('bash', varied[i % 64], i), 4000, 11);
const textMonitor = new pkg.DoomLoopMonitor(pkg.resolveDoomLoopOption(true));
await compare('recordAssistantText, 4.8 MB', () => baseline.text(text), () => textMonitor.recordAssistantTextSync(text), 4, 5);

// Issue 12: the paths a state blob or a wide round can make quadratic.
// Baseline: the reference module itself when REF_MODULE points at it
// (transpiled locally, never committed), else `referenceBookkeeping` below,
// a transcription of its Map / Set / object bookkeeping over the same
// WebCrypto fingerprints. Each iteration is a fresh monitor.
const reference = process.env.REF_MODULE
  ? await import(pathToFileURL(resolvePath(process.env.REF_MODULE)).href)
  : { DoomLoopMonitor: ReferenceBookkeeping, resolveDoomLoopOption: () => ({}) };
console.log(`\nstreak bookkeeping at scale; baseline: ${process.env.REF_MODULE ? 'the reference module (REF_MODULE)' : 'transcription of the reference algorithm'}`);
const N = 40000;
const blobCalls = {};
for (let i = 0; i < 100000; i++) blobCalls[`f${i}`] = 2;
const blobText = JSON.stringify({ tools: { t: { fingerprint: 'f0', streak: 2, callStreaks: blobCalls } } });
const quietly = (fn) => () => {
  const warn = console.warn;
  console.warn = () => {};
  try {
    return fn();
  } finally {
    console.warn = warn;
  }
};
const refConfig = quietly(() => reference.resolveDoomLoopOption(true))();
const pkgConfig = pkg.resolveDoomLoopOption(true);
await compare(
  `restore, ${(blobText.length / 1e6).toFixed(2)} MB blob (100k callStreaks)`,
  () => new reference.DoomLoopMonitor(refConfig).restore(JSON.parse(blobText)),
  () => new pkg.DoomLoopMonitor(pkgConfig).restore(JSON.parse(blobText)),
  1,
  3,
);
const roundArgs = Array.from({ length: N }, (_, i) => ({ i }));
await compare(
  `one round of ${N / 1000}k distinct calls`,
  async () => {
    const m = new reference.DoomLoopMonitor(refConfig);
    for (const args of roundArgs) await m.recordToolCall('t', args, 1);
  },
  () => {
    const m = new pkg.DoomLoopMonitor(pkgConfig);
    for (const args of roundArgs) m.recordToolCallSync('t', args, 1);
    m.free();
  },
  1,
  3,
);
// The reference's algorithm is quadratic in a declared round (membership
// and set comparison per call): 40k calls take it minutes, so 4k here.
const declaredArgs = roundArgs.slice(0, 4000);
const declared = declaredArgs.map((keyMaterial) => ({ toolName: 't', keyMaterial }));
await compare(
  `declared round of ${declaredArgs.length / 1000}k calls, then recorded`,
  async () => {
    const m = new reference.DoomLoopMonitor(refConfig);
    await m.declareRound(1, declared);
    for (const args of declaredArgs) await m.recordToolCall('t', args, 1);
  },
  () => {
    const m = new pkg.DoomLoopMonitor(pkgConfig);
    m.declareRoundSync(1, declared);
    for (const args of declaredArgs) m.recordToolCallSync('t', args, 1);
    m.free();
  },
  1,
  3,
);

// Module sizes: the detector module every agent loads (main entry) and the
// full module of `doom-loop-wasm/replay` (detector + trace tooling).
for (const [name, file] of [['detector module (main entry)', 'doom_loop_bg.wasm'], ['full module (./replay)', 'doom_loop_full_bg.wasm']]) {
  const wasm = readFileSync(new URL(`../../pkg/${file}`, import.meta.url));
  console.log(`${name.padEnd(30)} ${file}: ${wasm.length} bytes raw, ${gzipSync(wasm, { level: 9 }).length} bytes gzipped`);
  report.modules.push({ name, file, raw: wasm.length, gzip: gzipSync(wasm, { level: 9 }).length });
}

// Cold start: fresh processes time `before`…`after` (the ESM loader's own
// first-import cost — node:fs, node:module — is paid before timing, so this
// is the package's cost).
function coldStart(file, timed, runs = 9) {
  const entry = JSON.stringify(fileURLToPath(new URL(`../../pkg/${file}`, import.meta.url)));
  const probe = `await import('node:fs');await import('node:module');${timed(entry)}`;
  const times = [];
  for (let i = 0; i < runs; i++) times.push(Number(execFileSync(process.execPath, ['--input-type=module', '-e', probe], { encoding: 'utf8' })));
  return median(times).toFixed(2);
}
const importAndInit = (entry) => `const t=performance.now();const m=await import(${entry});await m.init();console.log(performance.now()-t)`;
const firstCall = (entry) =>
  `const m=await import(${entry});const t=performance.now();m.fingerprintToolCallSync('bash',${JSON.stringify(small)});console.log(performance.now()-t)`;
report.coldStartMs.main = Number(coldStart('node.mjs', importAndInit));
report.coldStartMs.replay = Number(coldStart('replay-node.mjs', importAndInit));
report.coldStartMs.firstCall = Number(coldStart('node.mjs', firstCall, 5));
console.log(`cold start, import + init (Node), main entry: median ${report.coldStartMs.main.toFixed(2)} ms over 9 fresh processes`);
console.log(`cold start, import + init (Node), ./replay:   median ${report.coldStartMs.replay.toFixed(2)} ms over 9 fresh processes`);
console.log(`first call after a cold start (small fingerprint, unoptimised tier): median ${report.coldStartMs.firstCall.toFixed(2)} ms`);
report.loadAverage = Number(((report.loadAverage + loadavg()[0]) / 2).toFixed(1)); // mean of start and end
if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify(report, null, 2)}\n`);
