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
//    Node's ES module loader is on both sides). Every kind alternates so
//    load on the machine hits them alike; measured from outside (spawn to
//    exit), so it counts everything the load does and nothing of Node's
//    own start.
// 3. Where that time goes, for the record: compiling the .wasm alone
//    inside fresh processes, and the steps of the Node entry — the shim
//    (api.cjs), the glue (reading, compiling and instantiating the .wasm),
//    the entry's install, the first fingerprint (V8's baseline tiers).
//
// Usage: node benches/js/startup.mjs [--runs N] [--json FILE]   (N ≥ 30; default 40)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg, tmpdir } from 'node:os';
import { gzipSync } from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const arg = (name) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const runs = Math.max(30, Number(arg('--runs') ?? 40));
const pkg = (file) => fileURLToPath(new URL(`../../pkg/${file}`, import.meta.url));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** The module's gzipped size on 2026-12-06 with effect-aware streaks (136,283 B) plus 2 %: growth past it needs a measured reason. */
const SIZE_GUARD = 139_000;
/** A load may cost at most this multiple of reading and compiling the .wasm alone. */
const LOAD_RATIO_GOAL = 1.5;
const verdict = (met) => (met ? 'met' : 'not met');
const load = [loadavg()[0]];

const wasm = readFileSync(pkg('doom_loop_bg.wasm'));
const gzipped = gzipSync(wasm, { level: 9 }).length;
console.log(
  `detector module (doom_loop_bg.wasm): ${wasm.length} B raw, ${gzipped} B gzipped; guard ≤ ${SIZE_GUARD} B gzipped: ${verdict(gzipped <= SIZE_GUARD)}`,
);

/** Wall time of one fresh `node [--input-type=module] -e source`, in ms. */
function processMs(source, esm = true) {
  const start = process.hrtime.bigint();
  const run = spawnSync(process.execPath, [...(esm ? ['--input-type=module'] : []), '-e', source], { encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (run.status !== 0) throw new Error(`probe failed: ${run.stderr}`);
  return ms;
}
const wasmPath = JSON.stringify(pkg('doom_loop_bg.wasm'));
const fingerprintCall = `fingerprintToolCallSync('bash', { command: 'grep -rn TODO src/', cwd: '/home/user/project' })`;
const emptyDir = mkdtempSync(join(tmpdir(), 'doomloop-startup-'));
const emptyModule = join(emptyDir, 'empty.mjs');
writeFileSync(emptyModule, '');
/** Each kind of fresh process: its source, and whether it runs as an ES module. */
const KINDS = {
  bareCjs: ['', false],
  requireAndFingerprint: [`require(${JSON.stringify(pkg('node.cjs'))}).${fingerprintCall};`, false],
  compileOnlyCjs: [`new WebAssembly.Module(require('node:fs').readFileSync(${wasmPath}));`, false],
  bareEsm: ['', true],
  importAndFingerprint: [`const m = await import(${JSON.stringify(pkg('node.mjs'))});\nm.${fingerprintCall};`, true],
  compileOnlyEsm: [
    `await import(${JSON.stringify(emptyModule)});\nconst { readFileSync } = await import('node:fs');\nnew WebAssembly.Module(readFileSync(${wasmPath}));`,
    true,
  ],
  importEmpty: [`await import(${JSON.stringify(emptyModule)});`, true],
};
for (const [source, esm] of Object.values(KINDS)) processMs(source, esm); // the OS's file cache, for every kind
const samples = Object.fromEntries(Object.keys(KINDS).map((k) => [k, []]));
for (let i = 0; i < runs; i++) for (const [kind, [source, esm]] of Object.entries(KINDS)) samples[kind].push(processMs(source, esm));
rmSync(emptyDir, { recursive: true, force: true });
const m = Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, median(xs)]));
const loads = {
  require: { ms: m.requireAndFingerprint - m.bareCjs, compileOnlyMs: m.compileOnlyCjs - m.bareCjs },
  import: { ms: m.importAndFingerprint - m.bareEsm, compileOnlyMs: m.compileOnlyEsm - m.bareEsm },
};
for (const [way, l] of Object.entries(loads)) {
  // A compile-only process no slower than a bare one is the machine's
  // noise, not a measurement: no ratio then (the scoreboard says "not
  // measured", never "met").
  l.ratio = l.compileOnlyMs > 0 && l.ms > 0 ? l.ms / l.compileOnlyMs : null;
  const judged = l.ratio === null ? 'not measured (the difference is within this run\'s noise)' : `${l.ratio.toFixed(2)}×`;
  console.log(
    `${way} + first fingerprint (Node ${process.version}): ${l.ms.toFixed(2)} ms over a bare process, ` +
      `${judged} reading + compiling the .wasm alone (${l.compileOnlyMs.toFixed(2)} ms; medians of ${runs}); ` +
      `goal ≤ ${LOAD_RATIO_GOAL}×: ${l.ratio === null ? 'not measured' : verdict(l.ratio <= LOAD_RATIO_GOAL)}`,
  );
}
const cold = loads.import.ms;
const emptyImport = m.importEmpty - m.bareEsm;

const compileMs = [];
for (let i = 0; i < 15; i++) {
  const run = spawnSync(
    process.execPath,
    ['-e', `const b = require('node:fs').readFileSync(${JSON.stringify(pkg('doom_loop_bg.wasm'))}); const t = performance.now(); new WebAssembly.Module(b); console.log(performance.now() - t);`],
    { encoding: 'utf8' },
  );
  compileMs.push(Number(run.stdout));
}
console.log(`  of which Node's ES module loader (a fresh process importing one empty .mjs file, same difference): ${emptyImport.toFixed(2)} ms`);
console.log(`  of which compiling the detector module (new WebAssembly.Module): median ${median(compileMs).toFixed(2)} ms over 15 fresh processes`);

// The Node entry's steps as node.cjs runs them, timed inside the process.
const stepsSource = `const t = [performance.now()];
require(${JSON.stringify(pkg('api.cjs'))}); t.push(performance.now());
require(${JSON.stringify(pkg('doom_loop_node.cjs'))}); t.push(performance.now());
const m = require(${JSON.stringify(pkg('node.cjs'))}); t.push(performance.now());
m.fingerprintToolCallSync('bash', { command: 'grep -rn TODO src/', cwd: '/home/user/project' }); t.push(performance.now());
console.log(JSON.stringify(t.slice(1).map((x, i) => x - t[i])));`;
const STEPS = ['shim (api.cjs)', 'glue: read + compile + instantiate the .wasm', 'entry install', 'first fingerprint'];
const stepMs = STEPS.map(() => []);
for (let i = 0; i < 15; i++) {
  const run = spawnSync(process.execPath, ['-e', stepsSource], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`steps probe failed: ${run.stderr}`);
  JSON.parse(run.stdout).forEach((ms, step) => stepMs[step].push(ms));
}
console.log(`  the Node entry's steps inside the process (medians of 15): ${STEPS.map((name, i) => `${name} ${median(stepMs[i]).toFixed(2)} ms`).join(', ')}`);
load.push(loadavg()[0]);
console.log(`  load average ${load.map((l) => l.toFixed(1)).join(' → ')} on ${(await import('node:os')).availableParallelism()} cores (a loaded machine inflates every time here)`);

const jsonOut = arg('--json');
if (jsonOut) {
  writeFileSync(
    jsonOut,
    `${JSON.stringify({ node: process.version, raw: wasm.length, gzip: gzipped, sizeGuard: SIZE_GUARD, loadRatioGoal: LOAD_RATIO_GOAL, loads, coldMs: Number(cold.toFixed(2)), bareMs: m.bareEsm, importMs: m.importAndFingerprint, emptyImportMs: Number(emptyImport.toFixed(2)), compileMs: median(compileMs), stepsMs: Object.fromEntries(STEPS.map((name, i) => [name, Number(median(stepMs[i]).toFixed(2))])), runs, loadAverage: load }, null, 2)}\n`,
  );
}
