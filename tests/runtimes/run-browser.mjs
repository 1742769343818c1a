// Runner for headless Debian Chromium via playwright-core (run with node).
//   node tests/runtimes/run-browser.mjs chromium   plain <script type="module">,
//        `doom-loop-wasm` mapped by an import map to the target the package's
//        exports map gives for the browser conditions
//   node tests/runtimes/run-browser.mjs vite       `vite build --base ./` of the
//        same page (Vite resolves the exports map), served from a sub-path
// Files are served by a tiny node:http server on 127.0.0.1 (port 0), closed
// at the end together with the browser.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { chromium } from 'playwright-core';
import { contentType } from '../../scripts/content-types.mjs';
import { CONSUMER, PACKAGE_DIR, ROOT, resolveExport } from './consumer.mjs';
import { loadDataText } from './data.mjs';
import { addRunnerChecks, crashed, report } from './suite.mjs';

const runtime = process.argv[2] ?? 'chromium';
if (!['chromium', 'vite'].includes(runtime)) throw new Error(`unknown mode ${runtime} (chromium | vite)`);
const PAGE_TIMEOUT_MS = 90_000;
const BROWSER_CONDITIONS = ['browser', 'import', 'module', 'default'];

async function viteBuild() {
  const { build } = await import('vite');
  const outDir = join(CONSUMER, 'vite-dist');
  rmSync(outDir, { recursive: true, force: true });
  await build({
    configFile: false,
    root: CONSUMER,
    base: './',
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true, rollupOptions: { input: join(CONSUMER, 'index.html') } },
  });
  const assets = readdirSync(join(outDir, 'assets'));
  return { outDir, wasm: assets.filter((f) => f.endsWith('.wasm')) };
}

/** Static files from `mounts` ([url prefix, directory]) plus the generated routes. */
function startServer(mounts, routes) {
  const server = createServer(async (req, res) => {
    try {
      const { pathname } = new URL(req.url, 'http://127.0.0.1');
      if (routes[pathname]) {
        const [type, body] = routes[pathname];
        res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
        return res.end(body);
      }
      for (const [prefix, dir] of mounts) {
        if (!pathname.startsWith(prefix)) continue;
        const file = resolve(dir, decodeURIComponent(pathname.slice(prefix.length)));
        if (!file.startsWith(dir + sep) || !contentType(file)) break;
        if (!(await stat(file).catch(() => null))?.isFile()) break;
        res.writeHead(200, { 'content-type': contentType(file), 'cache-control': 'no-store' });
        return res.end(await readFile(file));
      }
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    } catch (error) {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(error));
    }
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok(server));
  });
}

// Counts how the page instantiates wasm (installed before any page script).
function countWasmLoads() {
  const loads = { streaming: 0, instantiate: 0 };
  globalThis.__wasmLoads = loads;
  const { instantiateStreaming, instantiate } = WebAssembly;
  WebAssembly.instantiateStreaming = function (...args) {
    loads.streaming++;
    return instantiateStreaming.apply(this, args);
  };
  WebAssembly.instantiate = function (...args) {
    loads.instantiate++;
    return instantiate.apply(this, args);
  };
}

let summary;
let server;
let browser;
const problems = [];
try {
  const data = ['application/json; charset=utf-8', loadDataText()];
  let url;
  const checks = [];
  if (runtime === 'vite') {
    const { outDir, wasm } = await viteBuild();
    // The page imports the main entry and ./replay: the detector module and
    // the full module, each emitted once.
    const kinds = wasm.map((f) => f.replace(/-[\w-]{8}\.wasm$/, '')).sort().join(',');
    checks.push([`Vite emitted the two .wasm modules as assets (${wasm.join(', ')})`, kinds === 'doom_loop_bg,doom_loop_full_bg']);
    server = await startServer([['/app/', outDir]], { '/app/data.json': data });
    url = `http://127.0.0.1:${server.address().port}/app/index.html?runtime=vite`;
  } else {
    const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8'));
    const target = resolveExport(manifest, BROWSER_CONDITIONS);
    checks.push([`the exports map gives browsers ./browser.mjs (got ${target})`, target === './browser.mjs']);
    const base = `/${join('tests', 'runtimes', '.consumer', 'node_modules', 'doom-loop-wasm')}/`;
    const replayTarget = resolveExport(manifest, BROWSER_CONDITIONS, './replay');
    checks.push([`the exports map gives browsers ./replay-browser.mjs for ./replay (got ${replayTarget})`, replayTarget === './replay-browser.mjs']);
    const importMap = {
      imports: {
        'doom-loop-wasm': new URL(target, `http://x${base}`).pathname,
        'doom-loop-wasm/replay': new URL(replayTarget, `http://x${base}`).pathname,
      },
    };
    const html = [
      '<!doctype html>',
      '<meta charset="utf-8">',
      '<link rel="icon" href="data:,">',
      '<title>doom-loop-wasm (Chromium)</title>',
      `<script type="importmap">${JSON.stringify(importMap)}</script>`,
      '<script type="module" src="/tests/runtimes/.consumer/browser-main.mjs"></script>',
      '',
    ].join('\n');
    const tests = join(ROOT, 'tests');
    server = await startServer(
      [
        ['/tests/runtimes/', join(tests, 'runtimes')],
        ['/tests/js/', join(tests, 'js')],
        // tests/js/corpus.mjs re-exports the package's runner (js/conformance.mjs).
        ['/js/', join(ROOT, 'js')],
      ],
      { '/index.html': ['text/html; charset=utf-8', html], '/data.json': data },
    );
    url = `http://127.0.0.1:${server.address().port}/index.html?runtime=chromium`;
  }

  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run',
    ],
    timeout: 30_000,
  });
  const page = await browser.newPage();
  page.setDefaultTimeout(PAGE_TIMEOUT_MS);
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console.error: ${msg.text()}`);
  });
  page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()} ${req.failure()?.errorText}`));
  page.on('response', (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()} for ${res.url()}`);
  });
  await page.addInitScript(countWasmLoads);
  await page.goto(url);
  await page.waitForFunction(() => globalThis.__doomLoopResult !== undefined, null, { timeout: PAGE_TIMEOUT_MS });
  summary = await page.evaluate(() => globalThis.__doomLoopResult);
  addRunnerChecks(summary, checks);
} catch (error) {
  summary = crashed(runtime, error);
} finally {
  await browser?.close().catch(() => {});
  await new Promise((ok) => (server ? server.close(ok) : ok()));
}
addRunnerChecks(summary, problems.map((p) => [p, false]), 'page');
console.log(report(summary));
process.exitCode = summary.failed === 0 && summary.passed > 0 ? 0 : 1;
