// `make bench`: what loading the package costs an agent before its first
// tool call, beside what loading any WebAssembly module of the same size
// costs (the anchor the scoreboard judges against).
//
// 1. The detector module (pkg/doom_loop_bg.wasm, what the main entry
//    loads): bytes raw and gzipped (level 9) — a guard against growth.
// 2. A fresh Node process that loads the main entry and takes one
//    fingerprint, over a bare process, beside a fresh process that only
//    reads and compiles the same .wasm (`new WebAssembly.Module`), over the
//    same bare process — once through `require` (node.cjs) and once
//    through `import` (node.mjs; there both sides also import one .mjs, so
//    Node's ES module loader is on both sides). The entry loads the module
//    when a call first needs it, and a small plain value's fingerprint does
//    not: so also, beside the same anchor, what an agent's adapter pays
//    before its first decision — a fresh process that loads the entry,
//    makes a `DoomLoopSession` and runs one `onResponse` with one call,
//    which needs the module. Every process runs a file (as an agent does;
//    `node -e` loads node:crypto, which the package would otherwise load
//    itself), every kind alternates so load on the machine hits them alike,
//    and each is measured from outside (spawn to exit), so it counts
//    everything the load does and nothing of Node's own start.
// 3. Where that time goes, for the record, timed inside fresh processes:
//    reading and compiling the .wasm alone, and the Node entry's steps —
//    the shim (api.cjs), the entry (node.cjs), the first fingerprint (no
//    module: node:crypto hashes it); and, in a session's process, the first
//    session (the glue reads, compiles and instantiates the .wasm) and its
//    first response — each path's sum beside reading + compiling.
//
// Usage: node benches/js/startup.mjs [--runs N] [--json FILE] [--pkg DIR]
//   N ≥ 30 (default 40); DIR: the built package to measure (default pkg/).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadavg, tmpdir } from 'node:os';
import { gzipSync } from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const arg = (name) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const runs = Math.max(30, Number(arg('--runs') ?? 40));
const pkgDir = arg('--pkg') === undefined ? fileURLToPath(new URL('../../pkg/', import.meta.url)) : resolve(arg('--pkg'));
const pkg = (file) => join(pkgDir, file);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** The module's gzipped size on 2026-12-06 with effect-aware streaks (136,283 B) plus 2 %: growth past it needs a measured reason. */
const SIZE_GUARD = 139_000;
/** A load — to a first fingerprint, or to a session's first response — may cost at most this multiple of reading and compiling the .wasm alone. */
const LOAD_RATIO_GOAL = 1.5;
const verdict = (met) => (met ? 'met' : 'not met');
const load = [loadavg()[0]];

const wasm = readFileSync(pkg('doom_loop_bg.wasm'));
const gzipped = gzipSync(wasm, { level: 9 }).length;
console.log(
  `detector module (doom_loop_bg.wasm): ${wasm.length} B raw, ${gzipped} B gzipped; guard ≤ ${SIZE_GUARD} B gzipped: ${verdict(gzipped <= SIZE_GUARD)}`,
);

const dir = mkdtempSync(join(tmpdir(), 'doomloop-startup-'));
/** Wall time of one fresh `node FILE`, in ms. */
function processMs(file) {
  const start = process.hrtime.bigint();
  const run = spawnSync(process.execPath, [file], { encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (run.status !== 0) throw new Error(`probe ${file} failed: ${run.stderr}`);
  return ms;
}
const path = (file) => JSON.stringify(pkg(file));
const wasmPath = path('doom_loop_bg.wasm');
const ARGS = `{ command: 'grep -rn TODO src/', cwd: '/home/user/project' }`;
const fingerprintCall = `fingerprintToolCallSync('bash', ${ARGS})`;
const sessionCall = (m) => `new ${m}.DoomLoopSession().onResponse({ calls: [{ id: 'c1', toolName: 'bash', args: ${ARGS} }] });`;
const emptyModule = join(dir, 'empty.mjs');
writeFileSync(emptyModule, '');
const importEmpty = `await import(${JSON.stringify(emptyModule)});`;
/** Each kind of fresh process: its file name (.cjs or .mjs) and source. */
const KINDS = {
  bareCjs: ['bare.cjs', ''],
  requireAndFingerprint: ['require.cjs', `require(${path('node.cjs')}).${fingerprintCall};`],
  requireAndSession: ['require-session.cjs', `const m = require(${path('node.cjs')});\n${sessionCall('m')}`],
  compileOnlyCjs: ['compile.cjs', `new WebAssembly.Module(require('node:fs').readFileSync(${wasmPath}));`],
  bareEsm: ['bare.mjs', ''],
  importAndFingerprint: ['import.mjs', `const m = await import(${path('node.mjs')});\nm.${fingerprintCall};`],
  importAndSession: ['import-session.mjs', `const m = await import(${path('node.mjs')});\n${sessionCall('m')}`],
  compileOnlyEsm: ['compile.mjs', `${importEmpty}\nconst { readFileSync } = await import('node:fs');\nnew WebAssembly.Module(readFileSync(${wasmPath}));`],
  importEmpty: ['import-empty.mjs', importEmpty],
};
for (const [file, source] of Object.values(KINDS)) writeFileSync(join(dir, file), source);
for (const [file] of Object.values(KINDS)) processMs(join(dir, file)); // the OS's file cache, for every kind
const samples = Object.fromEntries(Object.keys(KINDS).map((k) => [k, []]));
for (let i = 0; i < runs; i++) for (const [kind, [file]] of Object.entries(KINDS)) samples[kind].push(processMs(join(dir, file)));
const m = Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, median(xs)]));
/** What each row costs over its bare process, beside reading + compiling the .wasm alone over the same. */
const rows = {
  require: [m.requireAndFingerprint, m.bareCjs, m.compileOnlyCjs],
  import: [m.importAndFingerprint, m.bareEsm, m.compileOnlyEsm],
  requireSession: [m.requireAndSession, m.bareCjs, m.compileOnlyCjs],
  importSession: [m.importAndSession, m.bareEsm, m.compileOnlyEsm],
};
const measured = ([ms, bare, compileOnly]) => {
  const l = { ms: ms - bare, compileOnlyMs: compileOnly - bare };
  // A compile-only process no slower than a bare one is the machine's
  // noise, not a measurement: no ratio then (the scoreboard says "not
  // measured", never "met").
  l.ratio = l.compileOnlyMs > 0 && l.ms > 0 ? l.ms / l.compileOnlyMs : null;
  return l;
};
const loads = { require: measured(rows.require), import: measured(rows.import) };
const sessions = { require: measured(rows.requireSession), import: measured(rows.importSession) };
const print = (what, l, goal) => {
  const judged = l.ratio === null ? 'not measured (the difference is within this run\'s noise)' : `${l.ratio.toFixed(2)}×`;
  console.log(
    `${what} (Node ${process.version}): ${l.ms.toFixed(2)} ms over a bare process, ` +
      `${judged} reading + compiling the .wasm alone (${l.compileOnlyMs.toFixed(2)} ms; medians of ${runs}); ` +
      `goal ≤ ${goal}×: ${l.ratio === null ? 'not measured' : verdict(l.ratio <= goal)}`,
  );
};
for (const [way, l] of Object.entries(loads)) print(`${way} + first fingerprint`, l, LOAD_RATIO_GOAL);
for (const [way, l] of Object.entries(sessions)) print(`${way} + a session's first response (one call)`, l, LOAD_RATIO_GOAL);
const cold = loads.import.ms;
const emptyImport = m.importEmpty - m.bareEsm;

// Where the time goes, timed inside fresh processes (`performance.now()`
// around each step: steadier than whole processes on a loaded machine, and
// blind only to Node's own start and exit), the three probes alternating.
const probes = {
  compile: [
    'compile-timed.cjs',
    `const t = [performance.now()];
const bytes = require('node:fs').readFileSync(${wasmPath}); t.push(performance.now());
new WebAssembly.Module(bytes); t.push(performance.now());`,
    ['reading the .wasm', 'compiling it (new WebAssembly.Module)'],
  ],
  fingerprint: [
    'steps.cjs',
    `const t = [performance.now()];
require(${path('api.cjs')}); t.push(performance.now());
const m = require(${path('node.cjs')}); t.push(performance.now());
m.${fingerprintCall}; t.push(performance.now());`,
    ['shim (api.cjs)', 'entry (node.cjs)', 'first fingerprint (no module)'],
  ],
  session: [
    'session-steps.cjs',
    `const t = [performance.now()];
const m = require(${path('node.cjs')}); t.push(performance.now());
const session = new m.DoomLoopSession(); t.push(performance.now());
session.onResponse({ calls: [{ id: 'c1', toolName: 'bash', args: ${ARGS} }] }); t.push(performance.now());`,
    ['shim + entry', 'first session (reads, compiles and instantiates the .wasm)', 'its first response'],
  ],
};
const stepMs = Object.fromEntries(Object.entries(probes).map(([k, [, , steps]]) => [k, steps.map(() => [])]));
for (const [file, source] of Object.values(probes)) {
  writeFileSync(join(dir, file), `${source}\nconsole.log(JSON.stringify(t.slice(1).map((x, i) => x - t[i])));\n`);
}
for (let i = 0; i < 15; i++) {
  for (const [probe, [file]] of Object.entries(probes)) {
    const run = spawnSync(process.execPath, [join(dir, file)], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`${file} failed: ${run.stderr}`);
    JSON.parse(run.stdout).forEach((ms, step) => stepMs[probe][step].push(ms));
  }
}
rmSync(dir, { recursive: true, force: true });
const steps = Object.fromEntries(
  Object.entries(probes).map(([probe, [, , names]]) => [probe, Object.fromEntries(names.map((name, i) => [name, Number(median(stepMs[probe][i]).toFixed(2))]))]),
);
const total = (probe) => Object.values(steps[probe]).reduce((a, b) => a + b, 0);
const show = (probe) => Object.entries(steps[probe]).map(([name, ms]) => `${name} ${ms.toFixed(2)} ms`).join(', ');
const compileMs = steps.compile['compiling it (new WebAssembly.Module)'];
console.log(`  of which Node's ES module loader (a fresh process importing one empty .mjs file, same difference): ${emptyImport.toFixed(2)} ms`);
console.log(`  inside fresh processes (medians of 15, alternating): ${show('compile')} — ${total('compile').toFixed(2)} ms`);
for (const [probe, what] of [
  ['fingerprint', 'to the first fingerprint'],
  ['session', "to a session's first response"],
]) {
  console.log(`    ${what}: ${show(probe)} — ${total(probe).toFixed(2)} ms, ${(total(probe) / total('compile')).toFixed(2)}× reading + compiling`);
}
load.push(loadavg()[0]);
console.log(`  load average ${load.map((l) => l.toFixed(1)).join(' → ')} on ${(await import('node:os')).availableParallelism()} cores (a loaded machine inflates every time here)`);

const jsonOut = arg('--json');
if (jsonOut) {
  writeFileSync(
    jsonOut,
    `${JSON.stringify({ node: process.version, raw: wasm.length, gzip: gzipped, sizeGuard: SIZE_GUARD, loadRatioGoal: LOAD_RATIO_GOAL, loads, sessions, coldMs: Number(cold.toFixed(2)), bareMs: m.bareEsm, importMs: m.importAndFingerprint, emptyImportMs: Number(emptyImport.toFixed(2)), compileMs, stepsMs: steps, runs, loadAverage: load }, null, 2)}\n`,
  );
}
