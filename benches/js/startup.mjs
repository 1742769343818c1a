// `make bench`, issue 18's startup targets: what `import 'doom-loop-wasm'`
// costs an agent before its first tool call.
//
// 1. The detector module (pkg/doom_loop_bg.wasm, what the main entry
//    loads): bytes raw and gzipped (level 9) against ≤ 64 KiB gzipped.
// 2. A cold import + first fingerprint in a fresh Node process, as the
//    difference of medians against a process that imports nothing (the
//    same `node --input-type=module -e …` minus the import), the two kinds
//    alternating so load on the machine hits both alike: ≤ 5 ms.
//    Measured from outside (spawn to exit), so it counts everything the
//    import does — reading and compiling the .wasm, loading the shim — and
//    nothing of Node's own start.
//    Beside it, the part no package imported as an ES module avoids: a
//    fresh process importing one empty .mjs file, against the same bare
//    process (Node's ES module loader), alternating with the other two.
// 3. Where that time goes, for the record: compiling the .wasm alone
//    (`new WebAssembly.Module`, fresh processes), and the steps of the
//    Node entry timed inside fresh processes — the shim (api.cjs), the
//    glue (reading, compiling and instantiating the .wasm), the entry's
//    install, the first fingerprint (V8's baseline tiers) — medians.
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
const SIZE_TARGET = 64 * 1024;
const COLD_TARGET_MS = 5;
const verdict = (met) => (met ? 'met' : 'not met');
const load = [loadavg()[0]];

const wasm = readFileSync(pkg('doom_loop_bg.wasm'));
const gzipped = gzipSync(wasm, { level: 9 }).length;
console.log(
  `detector module (doom_loop_bg.wasm): ${wasm.length} B raw, ${gzipped} B gzipped; target ≤ ${SIZE_TARGET} B gzipped: ${verdict(gzipped <= SIZE_TARGET)}`,
);

/** Wall time of one fresh `node --input-type=module -e source`, in ms. */
function processMs(source) {
  const start = process.hrtime.bigint();
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', source], { encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (run.status !== 0) throw new Error(`probe failed: ${run.stderr}`);
  return ms;
}
const bare = '';
const importAndFingerprint = `const m = await import(${JSON.stringify(pkg('node.mjs'))});
m.fingerprintToolCallSync('bash', { command: 'grep -rn TODO src/', cwd: '/home/user/project' });`;
const emptyDir = mkdtempSync(join(tmpdir(), 'doomloop-startup-'));
const emptyModule = join(emptyDir, 'empty.mjs');
writeFileSync(emptyModule, '');
const importEmpty = `await import(${JSON.stringify(emptyModule)});`;
processMs(bare); // the OS's file cache, for every kind
processMs(importAndFingerprint);
processMs(importEmpty);
const bareMs = [];
const coldMs = [];
const emptyMs = [];
for (let i = 0; i < runs; i++) {
  bareMs.push(processMs(bare));
  coldMs.push(processMs(importAndFingerprint));
  emptyMs.push(processMs(importEmpty));
}
rmSync(emptyDir, { recursive: true, force: true });
const cold = median(coldMs) - median(bareMs);
const emptyImport = median(emptyMs) - median(bareMs);
console.log(
  `cold import + first fingerprint (Node ${process.version}): ${cold.toFixed(2)} ms ` +
    `(median of ${runs} fresh processes ${median(coldMs).toFixed(2)} ms − median of ${runs} bare processes ${median(bareMs).toFixed(2)} ms); ` +
    `target ≤ ${COLD_TARGET_MS} ms: ${verdict(cold <= COLD_TARGET_MS)}`,
);

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
    `${JSON.stringify({ node: process.version, raw: wasm.length, gzip: gzipped, sizeTarget: SIZE_TARGET, coldMs: Number(cold.toFixed(2)), coldTargetMs: COLD_TARGET_MS, bareMs: median(bareMs), importMs: median(coldMs), emptyImportMs: Number(emptyImport.toFixed(2)), compileMs: median(compileMs), stepsMs: Object.fromEntries(STEPS.map((name, i) => [name, Number(median(stepMs[i]).toFixed(2))])), runs, loadAverage: load }, null, 2)}\n`,
  );
}
