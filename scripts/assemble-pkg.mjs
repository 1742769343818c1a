// The post-process of the two wasm-pack builds (scripts/build-pkg.sh):
// writes pkg/ around their output — the per-runtime entries of the main
// entry (the lean detector module, doom_loop*) and of `./replay` (the full
// module, doom_loop_full*: detector + trace tooling), the inlined-module
// entry `./inline`, the hand-written shim from js/ and its CommonJS twins
// (the same source, `import`/`export` rewritten — so no logic is written
// twice), the types (.d.ts, and .d.cts for `require`), and package.json.
//
// Usage: node scripts/assemble-pkg.mjs OUT
//   OUT already holds the wasm-pack output, optimised: doom_loop.js,
//   doom_loop_bg.wasm, doom_loop_node.cjs, doom_loop_full.js,
//   doom_loop_full_bg.wasm, doom_loop_full_node.cjs.
import { readFileSync, writeFileSync, copyFileSync, existsSync } from 'node:fs';
import { join, dirname, posix } from 'node:path';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { platforms } from './platform-pkg.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = process.argv[2] ?? join(root, 'pkg');
const js = (name) => join(root, 'js', name);
const source = (file) => readFileSync(js(file), 'utf8');

// The `doomloop` bin: the launcher (cli.cjs; cli.mjs, its former name,
// imports it), the native binary's finder (native.cjs, also `./native`)
// the wasm CLI it falls back to and the gateway's server (proxy.mjs),
// which only Node runs.
for (const file of ['cli.cjs', 'cli.mjs', 'cli-wasm.cjs', 'native.cjs', 'native.d.cts', 'proxy.mjs', 'conformance.mjs', 'README.md']) {
  copyFileSync(js(file), join(out, file));
}
copyFileSync(join(root, 'cli', 'examples', 'billing-agent.json'), join(out, 'billing-agent.json'));
for (const file of ['LICENSE-MIT', 'LICENSE-APACHE', 'CHANGELOG.md']) copyFileSync(join(root, file), join(out, file));

/** A relative import of a shim file (the file's own directory or a parent). */
const SHIM_IMPORT = /^(?:import|export) [^;]*? from '(\.{1,2}\/[\w/-]+\.js)';/gm;

/** The shim files `file` imports (`./x.js`), transitively, dependencies first, then `file`. */
function closure(files, seen = new Set()) {
  const order = [];
  for (const file of files) {
    if (seen.has(file)) continue;
    seen.add(file);
    // Relative imports (`./x.js`, `../x.js` from js/adapters/), as paths under js/.
    const deps = [...source(file).matchAll(SHIM_IMPORT)].map((m) => posix.normalize(posix.join(posix.dirname(file), m[1])));
    order.push(...closure(deps, seen), file);
  }
  return order;
}

/** The names a shim file exports. */
function exportsOf(file) {
  const text = source(file);
  const names = [...text.matchAll(/^export (?:async function|function|class|const|let) (\w+)/gm)].map((m) => m[1]);
  // `export { a, b };` and re-exports `export { a, b } from './x.js';` (no renaming).
  for (const [, list] of text.matchAll(/^export \{([^}]*)\}(?: from '\.{1,2}\/[\w/-]+\.js')?;/gm)) {
    names.push(...list.split(',').map((n) => n.trim()).filter(Boolean));
  }
  return [...new Set(names)];
}

/** One CommonJS module from ESM shim files (in dependency order), then `tail`, exporting `names`. */
function commonJs(files, names, tail = '') {
  const bodies = files.map((file) => {
    const text = source(file);
    if (/^import (?![^;]* from '\.{1,2}\/[\w/-]+\.js';)/m.test(text) || /^export \{[^}]* as /m.test(text) || /^export \* /m.test(text)) {
      throw new Error(`js/${file}: the CommonJS derivation only handles imports of the shim's own files ('./x.js') and exports without renaming`);
    }
    return text
      .replace(/^import [^;]+;\n/gm, '')
      .replace(/^export \{[^}]*\}(?: from '\.{1,2}\/[\w/-]+\.js')?;\n/gm, '')
      .replace(/^export (async function|function|class|const|let) /gm, '$1 ');
  });
  return `'use strict';\n${bodies.join('\n')}\n${tail}module.exports = { ${names.join(', ')} };\n`;
}

/** The functions `file` exports: `[name, parameter list]` each; anything else it exports is refused. */
function exportedFunctions(file) {
  const functions = [...source(file).matchAll(/^export function (\w+)\(([^)]*)\)/gm)].map((m) => [m[1], m[2]]);
  const names = functions.map(([name]) => name);
  const others = exportsOf(file).filter((name) => !names.includes(name));
  if (others.length > 0) throw new Error(`js/${file}: a shim file loaded on first use may export only functions (${others.join(', ')})`);
  return functions;
}

/**
 * A stand-in in api.cjs for each function `file` exports, which requires
 * `cjs` (that file as CommonJS) on its first call and calls the real one:
 * same name, same `length`, the arguments passed on as given.
 */
function lazyStandIns(file, cjs) {
  const stubs = exportedFunctions(file).map(([name, params]) => {
    // The length a function of these parameters has (a default is never evaluated here).
    const length = new Function(`return function (${params}) {}`)().length;
    return `function ${name}(...args) {\n  return require('./${cjs}').${name}.apply(this, args);\n}\nObject.defineProperty(${name}, 'length', { value: ${length} });\n`;
  });
  return `// js/${file}, loaded on the first call of one of its functions (./${cjs}).\n${stubs.join('')}`;
}

/** `file` as a CommonJS module of its own, importing from api.cjs only names in `fromApi`. */
function lazyCommonJs(file, fromApi) {
  const text = source(file);
  const imported = [...text.matchAll(/^import \{([^}]*)\} from '\.{1,2}\/[\w/-]+\.js';/gm)].flatMap((m) => m[1].split(',').map((n) => n.trim()).filter(Boolean));
  const missing = imported.filter((name) => !fromApi.includes(name));
  if (missing.length > 0 || /^import (?!\{)/m.test(text)) throw new Error(`js/${file}: imports what api.cjs does not export (${missing.join(', ')})`);
  const names = exportedFunctions(file).map(([name]) => name);
  const body = text.replace(/^import [^;]+;\n/gm, '').replace(/^export (function) /gm, '$1 ');
  return `'use strict';\n// js/${file} as CommonJS, required by api.cjs on first use. Generated by scripts/assemble-pkg.mjs.\nconst { ${imported.join(', ')} } = require('./api.cjs');\n${body}\nmodule.exports = { ${names.join(', ')} };\n`;
}

// The ESM shim, as it is.
const detectorShim = closure(['api.js', 'session.js', 'adapters/openrouter.js']);
const toolingShim = closure(['replay.js']);
for (const file of new Set([...detectorShim, ...toolingShim])) {
  mkdirSync(dirname(join(out, file)), { recursive: true });
  copyFileSync(js(file), join(out, file));
}

// What each entry exports (every entry adds `init`); the CommonJS modules
// also hand their entry what it installs with, which the entry keeps.
const mainNames = [...new Set([...exportsOf('api.js'), ...exportsOf('session.js'), ...exportsOf('adapters/openrouter.js'), 'replayTranscript', 'init'])];
const replayNames = [...new Set([...exportsOf('replay.js'), 'init'])];
// The callModel adapter (a quarter of the shim's source, which V8 parses at
// require) is a CommonJS file of its own, required on the first call of
// one of its functions: api.cjs exports a stand-in for each.
const LAZY_ADAPTER = 'adapters/openrouter.js';
const eagerNames = [...exportsOf('api.js'), ...exportsOf('session.js')];
writeFileSync(
  join(out, 'api.cjs'),
  commonJs(
    detectorShim.filter((file) => file !== LAZY_ADAPTER),
    [...eagerNames, ...exportsOf(LAZY_ADAPTER), 'install', 'installOnFirstCall', 'assertReady'],
    lazyStandIns(LAZY_ADAPTER, 'openrouter.cjs'),
  ),
);
writeFileSync(join(out, 'openrouter.cjs'), lazyCommonJs(LAZY_ADAPTER, eagerNames));
writeFileSync(join(out, 'replay.cjs'), commonJs(toolingShim, [...exportsOf('replay.js'), 'installTooling']));

const entries = ['node.cjs', 'node-sha256.cjs', 'moved-wasm.cjs', 'node-bundler.mjs', 'browser.mjs', 'workerd.mjs', 'inline.mjs', 'replay-node.cjs', 'replay-browser.mjs', 'replay-workerd.mjs'];
const types = { main: 'index', replay: 'replay' };
/** Deno, loading a file by path, finds its types through this header. */
const selfTypes = (file, dts) => `// @ts-self-types="./${dts}"\n${file}`;
for (const entry of entries) {
  const dts = entry.startsWith('replay') ? types.replay : types.main;
  const text = source(`entries/${entry}`);
  writeFileSync(join(out, entry), entry.endsWith('.cjs') ? text : selfTypes(text, `${dts}.d.ts`));
}

// Node ESM, Bun and Deno load the CommonJS entry and re-export it: one
// wasm instance however the package is reached (import and require share
// it), and fewer modules to load at startup than the ESM shim.
function nodeEsm(cjs, names, dts) {
  return selfTypes(
    `// Node ≥ 20 (ESM), Bun and Deno: the CommonJS entry (${cjs}), which reads
// and compiles the .wasm synchronously, re-exported by name — so \`import\`
// and \`require\` share one instance, and \`init()\` never has to be awaited.
// Generated by scripts/assemble-pkg.mjs.
import { createRequire } from 'node:module';

const api = createRequire(import.meta.url)('./${cjs}');
export const { ${names.join(', ')} } = api;
`,
    dts,
  );
}
writeFileSync(join(out, 'node.mjs'), nodeEsm('node.cjs', mainNames, 'index.d.ts'));
writeFileSync(join(out, 'replay-node.mjs'), nodeEsm('replay-node.cjs', replayNames, 'replay.d.ts'));

// The inlined lean module for `./inline`.
const wasm = readFileSync(join(out, 'doom_loop_bg.wasm'));
writeFileSync(
  join(out, 'inline-wasm.mjs'),
  `// The lean detector module (doom_loop_bg.wasm), base64. Generated by scripts/assemble-pkg.mjs.\nexport default ${JSON.stringify(wasm.toString('base64'))};\n`,
);

// Types: one declaration file per entry, and its CommonJS twin (.d.cts)
// for `require`, so TypeScript's node16/nodenext resolution sees a CommonJS
// module where Node loads one. The declarations are plain
// `export declare …` statements, which read the same in either mode. A
// relative import between them (`./index.js` in the sources) is written as
// the declaration file of the same mode (`./index.d.ts`, `./index.d.cts`):
// TypeScript reads either, and Deno, which does not map `.js` to `.d.ts`,
// needs the file name.
const relativeTypeImport = /(from\s+['"]\.\/[\w-]+)(?:\.js|\.d\.ts)(['"])/g;
for (const dts of Object.values(types)) {
  if (!existsSync(js(`${dts}.d.ts`))) throw new Error(`js/${dts}.d.ts is missing`);
  const text = source(`${dts}.d.ts`);
  writeFileSync(join(out, `${dts}.d.ts`), text.replace(relativeTypeImport, '$1.d.ts$2'));
  writeFileSync(join(out, `${dts}.d.cts`), text.replace(relativeTypeImport, '$1.d.cts$2'));
}

// The framework adapters (js/adapters/<name>.js): ESM subpath entries
// (`./ai-sdk`, …; the `exports` of js/package.json name the same files),
// each importing the engine from the package's own main entry by name
// (`doom-loop-wasm`), so every runtime's entry — and its one wasm
// instance — is the one the adapter runs on. Their types import the
// frameworks' with `import type` only.
const adapterEntries = ['ai-sdk', 'cloudflare-agents', 'mastra', 'langchain', 'openai-agents', 'claude-agent-sdk', 'mcp'];
for (const name of adapterEntries) {
  const code = source(`adapters/${name}.js`).replace(/(from\s+'\.\/[\w-]+)\.js(')/g, '$1.mjs$2');
  writeFileSync(join(out, `${name}.mjs`), selfTypes(code, `${name}.d.ts`));
  const dts = source(`adapters/${name}.d.ts`)
    .replace(/(from\s+['"])\.\.\/index\.js(['"])/g, '$1./index.d.ts$2')
    .replace(relativeTypeImport, '$1.d.ts$2');
  writeFileSync(join(out, `${name}.d.ts`), dts);
}

// The gateway's fetch handler (js/gateway.js): an ESM subpath entry over the
// replay entry's module (`doom-loop-wasm/replay`, by name, like the adapters'
// main entry), where the gateway engine is.
writeFileSync(join(out, 'gateway.mjs'), selfTypes(source('gateway.js'), 'gateway.d.ts'));
writeFileSync(join(out, 'gateway.d.ts'), source('gateway.d.ts'));

const manifest = JSON.parse(readFileSync(join(root, 'js', 'package.json'), 'utf8'));
// The native platform packages (npm/<platform>/), each at exactly this
// version: npm installs the one whose os/cpu fit, the launcher runs it.
manifest.optionalDependencies = Object.fromEntries(Object.values(platforms()).map(({ name }) => [name, manifest.version]));
writeFileSync(join(out, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
