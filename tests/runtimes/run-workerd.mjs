// Runner for Cloudflare workerd via miniflare 4 (run with node).
//
// The consumer's worker.mjs imports `doom-loop-wasm` by bare name. It is
// bundled the way wrangler does it (esbuild, conditions workerd/worker/
// browser, so the exports map picks workerd.mjs) with the .wasm import left
// external, then run by miniflare with module rules (ESModule for .mjs/.js,
// CompiledWasm for .wasm: compiling wasm from bytes is forbidden in
// workerd). The test data goes in as the text binding DATA.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { CONSUMER, PACKAGE_DIR } from './consumer.mjs';
import { loadDataText } from './data.mjs';
import { addRunnerChecks, crashed, report } from './suite.mjs';

const runtime = 'workerd';
const COMPATIBILITY_DATE = '2026-04-26'; // the bundled workerd's date; must stay <= 2026-05-03
const dist = join(CONSUMER, 'worker-dist');

let summary;
let mf;
try {
  rmSync(dist, { recursive: true, force: true });
  mkdirSync(dist, { recursive: true });
  const wasmFiles = new Set();
  const result = await build({
    entryPoints: [join(CONSUMER, 'worker.mjs')],
    outfile: join(dist, 'worker.mjs'),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    metafile: true,
    logLevel: 'error',
    plugins: [
      {
        name: 'wasm-module',
        setup(b) {
          b.onResolve({ filter: /\.wasm$/ }, (args) => {
            const file = resolve(args.resolveDir, args.path);
            wasmFiles.add(file);
            return { path: `./${basename(file)}`, external: true };
          });
        },
      },
    ],
  });
  for (const file of wasmFiles) copyFileSync(file, join(dist, basename(file)));
  const inputs = Object.keys(result.metafile.inputs).map((p) => resolve(p));
  const entry = inputs.find((p) => p.startsWith(PACKAGE_DIR));
  const checks = [
    [
      `the bundle took the workerd entry (${entry && relative(CONSUMER, entry)})`,
      inputs.includes(join(PACKAGE_DIR, 'workerd.mjs')) && !inputs.includes(join(PACKAGE_DIR, 'browser.mjs')),
    ],
    // The main entry's detector module and ./replay's full module.
    [
      `each .wasm stayed a separate CompiledWasm module (${[...wasmFiles].map((f) => basename(f))})`,
      [...wasmFiles].map((f) => basename(f)).sort().join(',') === 'doom_loop_bg.wasm,doom_loop_full_bg.wasm',
    ],
  ];

  mf = new Miniflare({
    modules: true,
    scriptPath: join(dist, 'worker.mjs'),
    modulesRoot: dist,
    modulesRules: [
      { type: 'ESModule', include: ['**/*.mjs', '**/*.js'] },
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
    ],
    compatibilityDate: COMPATIBILITY_DATE,
    bindings: { DATA: loadDataText() },
    host: '127.0.0.1',
  });
  const response = await mf.dispatchFetch('http://localhost/');
  const text = await response.text();
  if (response.status !== 200) throw new Error(`worker answered ${response.status}: ${text.slice(0, 2000)}`);
  summary = addRunnerChecks(JSON.parse(text), checks);
} catch (error) {
  summary = crashed(runtime, error);
} finally {
  await mf?.dispose();
}
console.log(report(summary));
process.exitCode = summary.failed === 0 && summary.passed > 0 ? 0 : 1;
