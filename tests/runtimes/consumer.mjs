// The throwaway consumer project every runner loads the package from, so
// that `doom-loop-wasm` is resolved by bare name through its exports map
// exactly as for a user, from the file set `npm pack` would publish:
//
//   tests/runtimes/.consumer/            (self-ignoring: .gitignore = *)
//     package.json                       depends on doom-loop-wasm
//     node_modules/doom-loop-wasm/       pkg/ packed with `npm pack`, unpacked
//     app.mjs / app.cjs                  `import` / `require('doom-loop-wasm')`
//     worker.mjs                         the Worker (bundled for workerd)
//     browser-main.mjs, index.html       the page (plain Chromium and Vite)
//
// `node tests/runtimes/consumer.mjs` (re)creates it from pkg/; runners only
// import the paths from here.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const HERE = fileURLToPath(new URL('./', import.meta.url));
export const CONSUMER = join(HERE, '.consumer');
export const PACKAGE_DIR = join(CONSUMER, 'node_modules', 'doom-loop-wasm');
const PKG = join(ROOT, 'pkg');

/** Resolves `exports["."]` of a package.json for a set of conditions (Node's algorithm, subset). */
export function resolveExport(packageJson, conditions, subpath = '.') {
  const walk = (target) => {
    if (typeof target === 'string') return target;
    if (Array.isArray(target)) return target.map(walk).find((t) => t !== undefined);
    if (target && typeof target === 'object') {
      for (const [key, value] of Object.entries(target)) {
        if (key === 'default' || conditions.includes(key)) {
          const hit = walk(value);
          if (hit !== undefined) return hit;
        }
      }
    }
    return undefined;
  };
  const exportsField = packageJson.exports;
  const entry = typeof exportsField === 'string' || Object.keys(exportsField).every((k) => !k.startsWith('.'))
    ? (subpath === '.' ? exportsField : undefined)
    : exportsField[subpath];
  return walk(entry);
}

const files = {
  '.gitignore': '*\n',
  'package.json': `${JSON.stringify(
    { name: 'doom-loop-wasm-consumer', private: true, type: 'module', dependencies: { 'doom-loop-wasm': '*' } },
    null,
    2,
  )}\n`,
  // Node ESM, Bun, Deno.
  'app.mjs': [
    "import * as api from 'doom-loop-wasm';",
    "import * as replay from 'doom-loop-wasm/replay';",
    'export { api, replay };',
    "export const resolved = import.meta.resolve('doom-loop-wasm');",
    '',
  ].join('\n'),
  // Node require().
  'app.cjs': [
    "'use strict';",
    "exports.api = require('doom-loop-wasm');",
    "exports.replay = require('doom-loop-wasm/replay');",
    "exports.resolved = require.resolve('doom-loop-wasm');",
    '',
  ].join('\n'),
  // Cloudflare Worker; the test data arrives as the text binding DATA.
  'worker.mjs': [
    "import * as api from 'doom-loop-wasm';",
    "import * as replay from 'doom-loop-wasm/replay';",
    "import { runSuite } from '../suite.mjs';",
    'export default {',
    '  async fetch(request, env) {',
    '    const extra = [',
    "      ['running in workerd', () => navigator.userAgent === 'Cloudflare-Workers'],",
    "      ['compiling wasm from bytes is forbidden here (so the CompiledWasm import was used)', () => {",
    '        try { new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])); return false; }',
    '        catch (e) { return /disallowed/i.test(e.message); }',
    '      }],',
    '    ];',
    "    const summary = await runSuite(api, JSON.parse(env.DATA), { runtime: 'workerd', extra, replay });",
    '    return Response.json(summary);',
    '  },',
    '};',
    '',
  ].join('\n'),
  // Chromium page (served as is with an import map, or built by Vite).
  'browser-main.mjs': [
    "import * as api from 'doom-loop-wasm';",
    "import * as replay from 'doom-loop-wasm/replay';",
    "import { runSuite } from '../suite.mjs';",
    '',
    "const runtime = new URLSearchParams(location.search).get('runtime') ?? 'chromium';",
    'const loads = globalThis.__wasmLoads;',
    'const extra = [',
    "  ['the .wasm was instantiated once, via instantiateStreaming', () => {",
    "    if (!loads) throw new Error('no instantiation counter installed');",
    '    if (loads.streaming !== 1 || loads.instantiate !== 0) throw new Error(JSON.stringify(loads));',
    '  }],',
    ']; ',
    'async function main() {',
    "  const response = await fetch(new URL('data.json', document.baseURI));",
    '  const data = await response.json();',
    '  return runSuite(api, data, { runtime, browser: true, extra, replay });',
    '}',
    'main().then(',
    '  (summary) => { globalThis.__doomLoopResult = summary; },',
    '  (error) => {',
    '    globalThis.__doomLoopResult = { runtime, passed: 0, failed: 1, sections: {},',
    '      failures: [`page crashed: ${error?.stack ?? error}`] };',
    '  },',
    ');',
    '',
  ].join('\n'),
  'index.html': [
    '<!doctype html>',
    '<meta charset="utf-8">',
    '<link rel="icon" href="data:,">',
    '<title>doom-loop-wasm (Vite build)</title>',
    '<script type="module" src="./browser-main.mjs"></script>',
    '',
  ].join('\n'),
};

export function setupConsumer() {
  if (!existsSync(join(PKG, 'package.json'))) {
    throw new Error('pkg/ is not built: run `bash scripts/build-pkg.sh` first');
  }
  // Warn when a hand-written source is newer than the package.
  const built = statSync(join(PKG, 'package.json')).mtimeMs;
  const newer = [];
  const scan = (dir) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) scan(p);
      else if (statSync(p).mtimeMs > built) newer.push(p.slice(ROOT.length));
    }
  };
  scan(join(ROOT, 'js'));
  if (newer.length) console.error(`WARNING: pkg/ is older than ${newer.join(', ')}; rebuild with scripts/build-pkg.sh`);

  rmSync(CONSUMER, { recursive: true, force: true });
  mkdirSync(PACKAGE_DIR, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(CONSUMER, name), text);
  // Exactly the published file set: `npm pack` (no registry access, no scripts).
  const out = execFileSync(
    'npm',
    ['pack', PKG, '--json', '--ignore-scripts', '--pack-destination', CONSUMER, '--loglevel=error'],
    { cwd: CONSUMER, encoding: 'utf8' },
  );
  const [{ filename, files: packed }] = JSON.parse(out);
  execFileSync('tar', ['-xzf', join(CONSUMER, filename), '-C', PACKAGE_DIR, '--strip-components=1']);
  const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8'));
  return { filename, files: packed.map((f) => f.path).sort(), manifest };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { filename, files: packed, manifest } = setupConsumer();
  // Every file the exports map (and main/module/browser/types) points at must be in the tarball.
  const targets = new Set();
  const collect = (t) => {
    if (typeof t === 'string') targets.add(t.replace(/^\.\//, ''));
    else if (t && typeof t === 'object') Object.values(t).forEach(collect);
  };
  collect(manifest.exports);
  for (const f of ['main', 'module', 'browser', 'types']) collect(manifest[f]);
  const missing = [...targets].filter((t) => !packed.includes(t));
  console.log(`consumer: ${filename} (${packed.length} files) unpacked into ${PACKAGE_DIR.slice(ROOT.length)}`);
  if (missing.length) {
    console.error(`consumer: the tarball lacks files the package.json points at: ${missing.join(', ')}`);
    process.exit(1);
  }
}
