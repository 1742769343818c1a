// Runner for the runtimes that read files themselves: Node ESM, Node CJS
// (`--cjs`), Bun and Deno. The package is resolved by bare name from the
// consumer project (tests/runtimes/.consumer, see consumer.mjs).
//   node tests/runtimes/run-local.mjs [--cjs]
//   (cd tests/runtimes/.consumer && bun run ../run-local.mjs)
//   (cd tests/runtimes/.consumer && deno run --allow-read --node-modules-dir=manual ../run-local.mjs)
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { loadData } from './data.mjs';
import { crashed, runSuite, report } from './suite.mjs';

const cjs = process.argv.includes('--cjs');
const runtime = globalThis.Deno ? 'deno' : globalThis.Bun ? 'bun' : cjs ? 'node-cjs' : 'node-esm';
const consumer = new URL('./.consumer/', import.meta.url);
const expectedEntry = cjs ? 'node.cjs' : 'node.mjs';

let summary;
try {
  let api;
  let replay;
  let resolved;
  const extra = [];
  if (cjs) {
    const require = createRequire(new URL('package.json', consumer));
    ({ api, replay, resolved } = require('./app.cjs'));
    extra.push([
      'the CommonJS glue (doom_loop_node.cjs) is what require() loaded',
      () => {
        const loaded = Object.keys(require.cache).map((p) => p.split(/[\\/]/).pop());
        for (const f of ['node.cjs', 'api.cjs', 'doom_loop_node.cjs']) {
          if (!loaded.includes(f)) throw new Error(`${f} not in require.cache: ${loaded.join(', ')}`);
        }
      },
    ]);
  } else {
    ({ api, replay, resolved } = await import(new URL('app.mjs', consumer).href));
  }
  resolved = resolved.startsWith('file:') ? fileURLToPath(resolved) : resolved;
  extra.push([
    `doom-loop-wasm resolves to ${expectedEntry} inside node_modules`,
    () => {
      const parts = resolved.split(/[\\/]/);
      if (parts.at(-1) !== expectedEntry || parts.at(-2) !== 'doom-loop-wasm' || parts.at(-3) !== 'node_modules') {
        throw new Error(`resolved ${resolved}`);
      }
    },
  ]);
  summary = await runSuite(api, loadData(), { runtime, extra, replay });
} catch (error) {
  summary = crashed(runtime, error);
}
console.log(report(summary));
process.exitCode = summary.failed === 0 && summary.passed > 0 ? 0 : 1;
