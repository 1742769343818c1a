// The bundler matrix of doom-loop-wasm (`make test-bundlers`): each setup
// bundles a tiny consumer of the packed package (pkg/ through `npm pack`,
// unpacked into tests/bundlers/.work/node_modules) and runs it — Node
// outputs with node, Bun outputs with bun, browser outputs in headless
// Debian Chromium (playwright-core) — and checks a fingerprint and a
// verdict against the unbundled package in plain Node and node:crypto.
//
// Each setup names the entry it is for (the one docs/install.md
// recommends); a setup fails when that entry does not work. With --all
// (or DOOM_LOOP_BUNDLERS_ALL=1) the main entry is also tried where the
// recommended one differs, and reported without failing, which is how the
// README's table was filled.
//
// Usage: node tests/bundlers/run.mjs [--all] [SETUP...]
// Prints `bundlers: N passed, M failed`.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { contentType } from '../../scripts/content-types.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WORK = fileURLToPath(new URL('./.work/', import.meta.url));
const PKG = join(ROOT, 'pkg');
const TIMEOUT_MS = 120_000;
const args = process.argv.slice(2);
const ALL = args.includes('--all') || process.env.DOOM_LOOP_BUNDLERS_ALL === '1';
const only = args.filter((a) => !a.startsWith('--'));

// ------------------------------------------------------------- the consumer

const CALL = { command: 'ls -la', cwd: '/tmp' };
const EXPECTED_FINGERPRINT = createHash('sha256').update(`bash\n${JSON.stringify(CALL)}`).digest('hex');

/** The consumer's module for `entry`: prints/returns `{fingerprint, action}`. */
function consumerSource(entry) {
  return `import * as dl from '${entry}';

export async function run() {
  await dl.init();
  const call = ${JSON.stringify(CALL)};
  const monitor = new dl.DoomLoopMonitor(dl.resolveDoomLoopOption(true));
  let action = null;
  for (let round = 1; round <= 3; round++) action = monitor.recordToolCallSync('bash', call, round).verdict?.action ?? action;
  return { fingerprint: dl.fingerprintToolCallSync('bash', call), action };
}
`;
}
const nodeMain = (app) => `import { run } from './${app}';\nrun().then((r) => console.log(JSON.stringify(r)), (e) => { console.error(e); process.exit(1); });\n`;
const browserMain = (app) =>
  `import { run } from './${app}';\nrun().then((r) => { globalThis.__result = r; }, (e) => { globalThis.__result = { error: String(e && e.stack || e) }; });\n`;
const PAGE = (script) =>
  `<!doctype html>\n<meta charset="utf-8">\n<link rel="icon" href="data:,">\n<title>consumer</title>\n<script type="module" src="${script}"></script>\n`;

function setupWork() {
  if (!existsSync(join(PKG, 'package.json'))) throw new Error('pkg/ is not built: run `make build` first');
  rmSync(WORK, { recursive: true, force: true });
  const dir = join(WORK, 'node_modules', 'doom-loop-wasm');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(WORK, '.gitignore'), '*\n');
  writeFileSync(join(WORK, 'package.json'), `${JSON.stringify({ name: 'bundler-consumer', private: true, type: 'module' }, null, 2)}\n`);
  const out = execFileSync('npm', ['pack', PKG, '--json', '--ignore-scripts', '--pack-destination', WORK, '--loglevel=error'], {
    cwd: WORK,
    encoding: 'utf8',
  });
  const [{ filename }] = JSON.parse(out);
  execFileSync('tar', ['-xzf', join(WORK, filename), '-C', dir, '--strip-components=1']);
}

/** A fresh project directory for one setup, with the consumer sources for `entry`. */
function project(name, entry) {
  const dir = join(WORK, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'app.mjs'), consumerSource(entry));
  writeFileSync(join(dir, 'node-main.mjs'), nodeMain('app.mjs'));
  writeFileSync(join(dir, 'browser-main.mjs'), browserMain('app.mjs'));
  writeFileSync(join(dir, 'index.html'), PAGE('./browser-main.mjs'));
  return dir;
}

// ----------------------------------------------------------------- running

function runProcess(command, argv, cwd) {
  return new Promise((ok, fail) => {
    const child = spawn(command, argv, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) return fail(new Error(`${command} exited with ${code}: ${stderr.trim().split('\n').slice(-6).join('\n')}`));
      try {
        ok(JSON.parse(stdout.trim().split('\n').at(-1)));
      } catch {
        fail(new Error(`no JSON result from ${command}: ${stdout}${stderr}`));
      }
    });
  });
}

function serve(dir) {
  const server = createServer(async (req, res) => {
    const { pathname } = new URL(req.url, 'http://127.0.0.1');
    const file = resolve(dir, `.${decodeURIComponent(pathname === '/' ? '/index.html' : pathname)}`);
    if (file.startsWith(dir + sep) && contentType(file) && (await stat(file).catch(() => null))?.isFile()) {
      res.writeHead(200, { 'content-type': contentType(file) });
      return res.end(await readFile(file));
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

let browser;
async function inChromium(url) {
  if (!browser) {
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run'],
    });
  }
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    await page.goto(url);
    await page.waitForFunction(() => globalThis.__result !== undefined, null, { timeout: 60_000 }).catch(() => {
      throw new Error(`no result from the page${errors.length ? `: ${errors.join('; ')}` : ''}`);
    });
    const result = await page.evaluate(() => globalThis.__result);
    if (result.error) throw new Error(result.error);
    return result;
  } finally {
    await page.close();
  }
}
async function servedInChromium(dir, path = '/index.html') {
  const server = await serve(dir);
  try {
    return await inChromium(`http://127.0.0.1:${server.address().port}${path}`);
  } finally {
    server.close();
  }
}

// ------------------------------------------------------------------ setups

const esbuild = () => import('esbuild');
async function esbuildNode(dir, format) {
  const outfile = join(dir, `dist/out.${format === 'esm' ? 'mjs' : 'cjs'}`);
  await (await esbuild()).build({
    entryPoints: [join(dir, 'node-main.mjs')],
    bundle: true,
    platform: 'node',
    format,
    outfile,
    logLevel: 'error',
    // A CommonJS bundle has no import.meta; the inline entry never reads it.
    logOverride: { 'empty-import-meta': 'silent' },
  });
  return runProcess(process.execPath, [outfile], dir);
}
async function esbuildBrowser(dir) {
  await (await esbuild()).build({
    entryPoints: [join(dir, 'browser-main.mjs')],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    outfile: join(dir, 'browser-main.js'),
    logLevel: 'error',
  });
  writeFileSync(join(dir, 'index.html'), PAGE('./browser-main.js'));
  return servedInChromium(dir);
}
async function viteBuild(dir, vitePackage) {
  const { build } = await import(vitePackage);
  const outDir = join(dir, 'dist');
  await build({ configFile: false, root: dir, base: './', logLevel: 'error', build: { outDir, emptyOutDir: true } });
  return servedInChromium(outDir);
}
async function viteDev(dir, vitePackage, config = {}) {
  const { createServer: createViteServer } = await import(vitePackage);
  const server = await createViteServer({
    configFile: false,
    root: dir,
    logLevel: 'error',
    cacheDir: join(dir, '.vite'),
    server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false, fs: { allow: [WORK] } },
    ...config,
  });
  await server.listen();
  try {
    const { port } = server.httpServer.address();
    return await inChromium(`http://127.0.0.1:${port}/index.html`);
  } finally {
    await server.close();
  }
}
async function webpackBuild(dir, target) {
  const webpack = (await import('webpack')).default;
  const outPath = join(dir, 'dist');
  const entry = join(dir, target === 'node' ? 'node-main.mjs' : 'browser-main.mjs');
  const stats = await new Promise((ok, fail) =>
    webpack(
      {
        mode: 'production',
        context: dir,
        entry,
        target: target === 'node' ? 'node20' : 'web',
        output: { path: outPath, filename: 'main.js', publicPath: 'auto', ...(target === 'node' ? { module: true, chunkFormat: 'module' } : {}) },
        experiments: target === 'node' ? { outputModule: true } : {},
        resolve: { modules: [join(WORK, 'node_modules'), 'node_modules'] },
        performance: { hints: false },
        infrastructureLogging: { level: 'error' },
      },
      (error, result) => (error ? fail(error) : ok(result)),
    ),
  );
  if (stats.hasErrors()) throw new Error(stats.toString({ all: false, errors: true }).slice(0, 2000));
  if (target === 'node') return runProcess(process.execPath, [join(outPath, 'main.js')], dir);
  writeFileSync(join(outPath, 'index.html'), PAGE('./main.js'));
  return servedInChromium(outPath);
}
const BUN = join(ROOT, '.tools', 'bin', 'bun');
async function bunBuild(dir, target) {
  const outdir = join(dir, 'dist');
  const entry = join(dir, target === 'browser' ? 'browser-main.mjs' : 'node-main.mjs');
  execFileSync(BUN, ['build', entry, '--target', target, '--outdir', outdir, '--entry-naming', 'main.[ext]', '--asset-naming', '[name].[ext]'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (target === 'bun') return runProcess(BUN, [join(outdir, 'main.js')], dir);
  if (target === 'node') return runProcess(process.execPath, [join(outdir, 'main.js')], dir);
  writeFileSync(join(outdir, 'index.html'), PAGE('./main.js'));
  return servedInChromium(outdir);
}

// Next.js (Turbopack, its default bundler, and webpack): `next build`, then `next start`
// on 127.0.0.1, the consumer run in a route handler (server) or a client
// component (in Chromium). Each project has the consumer as app.mjs and its
// own next.config.mjs; `next` and `react` come from the repository's dev
// dependencies, the package from WORK/node_modules.
const NEXT = join(ROOT, 'node_modules', 'next', 'dist', 'bin', 'next');
const LAYOUT = 'export default function RootLayout({ children }) {\n  return <html><body>{children}</body></html>;\n}\n';
const ROUTE = (adapter) => `import { run } from '../../../app.mjs';
${adapter ? "import { createDoomLoop } from 'doom-loop-wasm/ai-sdk';\n" : ''}
export const dynamic = 'force-dynamic';

export async function GET() {
  ${adapter ? "// The AI SDK adapter resolves the package as its own self-reference: it has to bundle too.\n  if (createDoomLoop({ doomLoop: true }).haltVerdict() !== null) throw new Error('a fresh guard halted');\n  " : ''}return Response.json(await run());
}
`;
const CLIENT_PAGE = `'use client';
import { useEffect } from 'react';
import { run } from '../app.mjs';

export default function Page() {
  useEffect(() => {
    run().then((r) => { globalThis.__result = r; }, (e) => { globalThis.__result = { error: String((e && e.stack) || e) }; });
  }, []);
  return <p>consumer</p>;
}
`;
function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}
/** `next build` then `next start` for `dir`; runs `use(base URL)` while it serves. */
async function nextApp(dir, { config = {}, files, webpack = false }, use) {
  writeFileSync(join(dir, 'next.config.mjs'), `export default ${JSON.stringify(config)};\n`);
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'next-consumer', private: true, type: 'module' }, null, 2)}\n`);
  for (const [file, text] of Object.entries({ 'app/layout.js': LAYOUT, ...files })) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };
  execFileSync(process.execPath, [NEXT, 'build', dir, ...(webpack ? ['--webpack'] : [])], { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'], timeout: TIMEOUT_MS });
  const port = await freePort();
  const server = spawn(process.execPath, [NEXT, 'start', dir, '-H', '127.0.0.1', '-p', String(port)], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  // What the server logs (a route's error goes there, not into its 500).
  let log = '';
  server.stdout.on('data', (d) => (log += d));
  server.stderr.on('data', (d) => (log += d));
  try {
    const base = `http://127.0.0.1:${port}`;
    for (let tries = 0; ; tries++) {
      const up = await fetch(`${base}/`).then(() => true, () => false);
      if (up) break;
      if (tries > 300 || server.exitCode !== null) throw new Error(`next start did not serve on ${base}: ${log.slice(-1000)}`);
      await new Promise((wait) => setTimeout(wait, 100));
    }
    return await use(base, () => log);
  } finally {
    server.kill('SIGKILL');
  }
}
async function nextRoute(dir, { config, adapter = false, webpack }) {
  return nextApp(dir, { config, webpack, files: { 'app/api/run/route.js': ROUTE(adapter), 'app/page.js': 'export default function Page() {\n  return <p>server</p>;\n}\n' } }, async (base, log) => {
    const response = await fetch(`${base}/api/run`);
    const text = await response.text();
    if (!response.ok) throw new Error(`GET /api/run: ${response.status} ${text.slice(0, 300)}\nserver log: ${log().slice(-2000)}`);
    return JSON.parse(text);
  });
}
const nextClient = (dir) => nextApp(dir, { files: { 'app/page.js': CLIENT_PAGE } }, (base) => inChromium(`${base}/`));

const MAIN = 'doom-loop-wasm';
const INLINE = 'doom-loop-wasm/inline';
// [name, recommended entry, run(dir), {failsWith}?]: with failsWith, the
// setup passes when it fails with an error matching it.
const SETUPS = [
  ['esbuild, platform node, ESM output', INLINE, (dir) => esbuildNode(dir, 'esm')],
  ['esbuild, platform node, CJS output', INLINE, (dir) => esbuildNode(dir, 'cjs')],
  ['esbuild, platform browser', INLINE, (dir) => esbuildBrowser(dir)],
  ['Vite 7 build', MAIN, (dir) => viteBuild(dir, 'vite7')],
  ['Vite 7 dev server', INLINE, (dir) => viteDev(dir, 'vite7')],
  ['Vite 7 dev server, optimizeDeps.exclude', MAIN, (dir) => viteDev(dir, 'vite7', { optimizeDeps: { exclude: [MAIN] } })],
  ['Vite 8 build', MAIN, (dir) => viteBuild(dir, 'vite')],
  ['Vite 8 dev server', MAIN, (dir) => viteDev(dir, 'vite')],
  ['Vite 8 dev server, optimizeDeps.exclude', MAIN, (dir) => viteDev(dir, 'vite', { optimizeDeps: { exclude: [MAIN] } })],
  ['webpack 5, target web', MAIN, (dir) => webpackBuild(dir, 'web')],
  // webpack takes the `module` condition's entry and emits the .wasm beside its output.
  ['webpack 5, target node', MAIN, (dir) => webpackBuild(dir, 'node')],
  ['Bun bundler, target bun', INLINE, (dir) => bunBuild(dir, 'bun')],
  ['Bun bundler, target node', INLINE, (dir) => bunBuild(dir, 'node')],
  ['Bun bundler, target browser', INLINE, (dir) => bunBuild(dir, 'browser')],
  // Turbopack (Next's default) takes the `module` condition's entry, whose .wasm it emits.
  ['Next.js 16, route handler, AI SDK adapter', MAIN, (dir) => nextRoute(dir, { adapter: true })],
  // A client component is rendered on the server too, where Turbopack points
  // the module's URL at the browser's copy: the entry loads on the first
  // call, which only the browser makes.
  ['Next.js 16, client component', MAIN, (dir) => nextClient(dir)],
  // Next's webpack build needs the package left to Node (docs/install.md) …
  ['Next.js 16 (webpack), route handler, serverExternalPackages, AI SDK adapter', MAIN, (dir) =>
    nextRoute(dir, { config: { serverExternalPackages: [MAIN] }, adapter: true, webpack: true })],
  // … or /inline; without either, the main entry's error names the fix.
  ['Next.js 16 (webpack), route handler, no configuration', INLINE, (dir) => nextRoute(dir, { webpack: true })],
  ['Next.js 16 (webpack), route handler, no configuration, the main entry', MAIN, (dir) => nextRoute(dir, { webpack: true }), {
    failsWith: /serverExternalPackages: \['doom-loop-wasm'\]/,
  }],
];

// ------------------------------------------------------------------- main

setupWork();
// The oracle: the unbundled package in plain Node.
const reference = await runProcess(process.execPath, [join(project('reference', MAIN), 'node-main.mjs')], WORK);
let passed = 0;
let failed = 0;
const table = [];
if (reference.fingerprint !== EXPECTED_FINGERPRINT || reference.action === null) {
  console.log(`reference run disagrees with node:crypto: ${JSON.stringify(reference)}`);
  failed++;
}
const slug = (s) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-');
try {
  let index = 0;
  for (const [name, entry, run, expected] of SETUPS) {
    index++;
    if (only.length && !only.some((o) => slug(name).includes(o))) continue;
    const entries = ALL && entry !== MAIN ? [entry, MAIN] : [entry];
    for (const tried of entries) {
      const started = Date.now();
      let outcome;
      try {
        const result = await run(project(`${index}-${slug(name)}-${tried === MAIN ? 'main' : 'inline'}`, tried));
        if (expected?.failsWith) outcome = `worked where it should fail with ${expected.failsWith}`;
        else outcome = result.fingerprint === reference.fingerprint && result.action === reference.action ? 'ok' : `wrong answer ${JSON.stringify(result)}`;
      } catch (error) {
        const message = String(error?.message ?? error);
        if (expected?.failsWith?.test(message)) outcome = 'ok';
        else outcome = `FAILED: ${message.split('\n').slice(0, 3).join(' | ').slice(0, 300)}`;
      }
      const counted = tried === entry;
      if (counted) outcome === 'ok' ? passed++ : failed++;
      table.push([name, tried, outcome, counted]);
      console.log(`${outcome === 'ok' ? 'ok  ' : counted ? 'FAIL' : 'info'} ${name} — ${tried}: ${outcome} [${((Date.now() - started) / 1000).toFixed(1)}s]`);
    }
  }
} finally {
  await browser?.close();
}
console.log(`bundlers: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
