// The docs cannot drift: every ```js / ```ts block of the given Markdown files
// is type-checked with tsc --strict (moduleResolution bundler, node16 and
// nodenext) and executed against the built package, as a user would paste it.
//
//   node tests/docs/check-docs.mjs [--pkg DIR] FILE.md|DIR…
//
// A DIR stands for every *.md below it (recursively), so pages added later
// are checked without being listed.
//
// - Blocks import `doom-loop-wasm` from a throwaway consumer folder
//   (target/docs-check/) whose node_modules/doom-loop-wasm links to pkg/
//   (or --pkg DIR); `@openrouter/agent`, `zod` and `@types/node` come from the
//   repository's dev dependencies. Each block is its own ES module.
// - ts blocks are transpiled (typescript's transpileModule) and run with Node;
//   js blocks run as they are. Requests to the OpenRouter API go to a local
//   scripted model that keeps calling `get_invoice` (alternating
//   "INV-2291" / "inv-2291 ") until told `tool_choice: "none"`.
// - A block that calls console.log and ends with a run of `//` comment lines
//   says what it prints: each such line must match the corresponding stdout
//   line (runs of spaces are one space; `…` stands for any text).
// - Every block says what it is in its info string (markdown.mjs, classify):
//   `js no-run` / `ts no-run` blocks are type-checked but not run (each is
//   named in the report); rust blocks are the doc tests' (cargo test;
//   tests/readme_examples.rs checks their page is included); python blocks
//   run against the built wheel in tests/python/test_docs.py (make
//   test-python: `python no-run` is shown only, `python needs=DIST` runs in
//   the venv holding that distribution); json blocks
//   must parse (jsonl: every line); toml blocks are doomloop config files,
//   read by the package's own CLI (`node PKG/cli.mjs hook config`, the
//   parser the hook runs) from a scratch project: a block it rejects
//   fails with its error line (`toml other` is another program's file,
//   shown only); sh, console, text and the other
//   illustrations are shown, not run. A bare fence or an unknown language
//   is a failure: nothing is skipped silently.
//
// Ends with `N passed, M failed` (one per checked block).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { classify, codeBlocks, expectedOutput, outputMatches } from './markdown.mjs';
import { functionCall, startScriptedServer, text } from '../e2e/scripted-server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const MODES = [
  { resolution: 'bundler', module: 'esnext' },
  { resolution: 'node16', module: 'node16' },
  { resolution: 'nodenext', module: 'nodenext' },
];
const RUN_TIMEOUT_MS = 60_000;

function parseArgs(argv) {
  const files = [];
  let pkg = join(root, 'pkg');
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--pkg') pkg = resolve(argv[++i]);
    else files.push(...markdownFiles(resolve(argv[i])));
  }
  if (files.length === 0) throw new Error('usage: check-docs.mjs [--pkg DIR] FILE.md…');
  if (!existsSync(join(pkg, 'package.json'))) throw new Error(`no built package in ${pkg}: run \`make build\` first`);
  return { files, pkg };
}

/** A Markdown file as it is; a folder as every *.md below it, sorted. */
function markdownFiles(path) {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true })
    .map((name) => join(path, String(name)))
    .filter((file) => file.endsWith('.md') && !file.includes('node_modules') && statSync(file).isFile())
    .sort();
}

/** The throwaway consumer: a module package with doom-loop-wasm linked to the built package. */
function consumer(pkg) {
  const dir = join(root, 'target/docs-check');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  mkdirSync(join(dir, 'blocks'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'docs-check', private: true, type: 'module' }));
  symlinkSync(pkg, join(dir, 'node_modules/doom-loop-wasm'), 'dir');
  return dir;
}

function collect(files, dir) {
  const blocks = [];
  const others = [];
  for (const file of files) {
    for (const block of codeBlocks(readFileSync(file, 'utf8'))) {
      const { kind, run, problem } = classify(block);
      const label = `${relative(root, file)}:${block.line - 1}`;
      if (kind !== 'js' && kind !== 'ts') {
        const problems = problem ? [`${label}: ${problem}`] : kind === 'toml' ? checkConfig(block, file, dir) : checkData(kind, block, label);
        others.push({ ...block, kind, file, label, problems });
        continue;
      }
      const name = `${relative(root, file).replace(/\W/g, '_')}_L${block.line}`;
      const source = join(dir, 'blocks', `${name}.${kind === 'ts' ? 'mts' : 'mjs'}`);
      // `export {}` keeps every block a module of its own, even without imports.
      writeFileSync(source, `${block.code}\nexport {};\n`);
      blocks.push({ ...block, kind, run, file, source, label, problems: [] });
    }
  }
  return { blocks, others };
}

/** A json block must parse; a jsonl block line by line. */
function checkData(kind, block, label) {
  const texts = kind === 'json' ? [[0, block.code]] : kind === 'jsonl' ? block.code.split('\n').map((l, i) => [i, l]).filter(([, l]) => l.trim()) : [];
  const problems = [];
  for (const [offset, text] of texts) {
    try {
      JSON.parse(text);
    } catch (error) {
      problems.push(`${relative(root, block.file)}:${block.line + offset}: not valid JSON: ${error.message}`);
    }
  }
  return problems;
}

/**
 * A toml block as a project's .doomloop.toml, through the package's CLI
 * (`hook config`: the hook's own parser and checks), in a scratch HOME so
 * no user file joins in.
 */
function checkConfig(block, file, dir) {
  const project = join(dir, 'toml', `${relative(root, file).replace(/\W/g, '_')}_L${block.line}`);
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, '.doomloop.toml'), `${block.code}\n`);
  const env = { PATH: process.env.PATH, HOME: project };
  const r = spawnSync(process.execPath, [join(dir, 'node_modules/doom-loop-wasm/cli.mjs'), 'hook', 'config', '--json', '--cwd', project], { env, encoding: 'utf8' });
  if (r.status === 0) {
    const read = JSON.parse(r.stdout).projectFile;
    return read === join(project, '.doomloop.toml') ? [] : [`${relative(root, file)}:${block.line}: the CLI did not read the block (it read ${read})`];
  }
  // The CLI names the scratch file and the line in the block: point at the page's line.
  const at = /\.doomloop\.toml:(\d+): (.*)/.exec(r.stderr);
  return [at ? `${relative(root, file)}:${block.line + Number(at[1]) - 1}: ${at[2]}` : `${relative(root, file)}:${block.line}: ${r.stderr.trim() || `exit ${r.status}`}`];
}

/** tsc --strict over every block, once per module resolution; problems are attached to their block. */
function typeCheck(blocks, dir) {
  for (const mode of MODES) {
    const config = join(dir, `tsconfig.${mode.resolution}.json`);
    writeFileSync(
      config,
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          allowJs: true,
          checkJs: true,
          skipLibCheck: true,
          target: 'es2022',
          lib: ['es2022', 'dom'],
          types: ['node'],
          typeRoots: [join(root, 'node_modules/@types')],
          module: mode.module,
          moduleResolution: mode.resolution,
        },
        files: blocks.map((block) => block.source),
      }),
    );
    const run = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', config, '--pretty', 'false'], {
      cwd: dir,
      encoding: 'utf8',
    });
    for (const line of `${run.stdout}${run.stderr}`.split('\n')) {
      const diagnostic = /^(.+?)\((\d+),(\d+)\): (error TS\d+: .*)$/.exec(line);
      if (!diagnostic) continue;
      const block = blocks.find((b) => resolve(dir, diagnostic[1]) === b.source);
      const where = block ? `${relative(root, block.file)}:${block.line + Number(diagnostic[2]) - 1}` : diagnostic[1];
      (block ?? blocks[0]).problems.push(`${where}: ${diagnostic[4]} [${mode.resolution}]`);
    }
    if (run.status !== 0 && !blocks.some((b) => b.problems.length > 0)) {
      blocks[0].problems.push(`tsc (${mode.resolution}) failed: ${run.stdout}${run.stderr}`);
    }
  }
}

function execute(block, dir, serverUrl) {
  const script =
    block.kind === 'ts'
      ? ts.transpileModule(readFileSync(block.source, 'utf8'), {
          compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
        }).outputText
      : readFileSync(block.source, 'utf8');
  const runnable = join(dir, 'blocks', `${basename(block.source).replace(/\.m[jt]s$/, '')}.run.mjs`);
  writeFileSync(runnable, script);
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', join(here, 'redirect-openrouter.mjs'), runnable], {
      cwd: dir,
      env: { ...process.env, DOCS_OPENROUTER_URL: serverUrl, OPENROUTER_API_KEY: 'docs-check-key' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) {
        const reason = signal ? `killed (${signal}) after ${RUN_TIMEOUT_MS} ms` : `exit code ${code}`;
        block.problems.push(`${block.label}: running it failed, ${reason}\n${stderr.trim()}`);
      } else {
        checkOutput(block, stdout);
      }
      done();
    });
  });
}

function checkOutput(block, stdout) {
  const expected = expectedOutput(block.code);
  if (expected === null) return;
  const actual = stdout.replace(/\n$/, '').split('\n');
  const mismatch =
    actual.length !== expected.length || expected.some((line, i) => !outputMatches(actual[i], line));
  if (mismatch) {
    block.problems.push(
      `${block.label}: the output shown is not what the block prints\n  shown:\n${expected.map((l) => `    ${l}`).join('\n')}\n  printed:\n${actual.map((l) => `    ${l}`).join('\n')}`,
    );
  }
}

/** A model that keeps calling get_invoice (alternating the id's spelling) until tools are refused. */
function scriptedModel(body, turn) {
  const tools = Array.isArray(body.tools) ? body.tools.map((t) => t.name) : [];
  if (body.tool_choice === 'none' || !tools.includes('get_invoice')) return text('I could not retrieve invoice INV-2291.');
  return functionCall('get_invoice', { invoice_id: turn % 2 === 0 ? 'INV-2291' : 'inv-2291 ' });
}

async function main() {
  const { files, pkg } = parseArgs(process.argv.slice(2));
  const dir = consumer(pkg);
  const { blocks, others } = collect(files, dir);
  if (blocks.length > 0) typeCheck(blocks, dir);
  const server = await startScriptedServer(scriptedModel);
  try {
    for (const block of blocks) if (block.run) await execute(block, dir, server.url);
  } finally {
    await server.close();
  }
  let failed = 0;
  for (const block of [...blocks, ...others]) {
    if (block.problems.length > 0) {
      failed++;
      console.log(`FAIL ${block.label} (${block.kind || 'no info string'})`);
      for (const problem of block.problems) console.log(`  ${problem.replaceAll('\n', '\n  ')}`);
    } else if (block.kind === 'js' || block.kind === 'ts') {
      const ran = block.run ? 'ran' : 'NOT RUN (`no-run` in its info string)';
      console.log(`ok   ${block.label} (${block.kind}: tsc --strict ${MODES.map((m) => m.resolution).join(', ')}; ${ran})`);
    } else if (block.kind === 'json' || block.kind === 'jsonl') {
      console.log(`ok   ${block.label} (${block.kind}: parses)`);
    } else if (block.kind === 'toml') {
      console.log(`ok   ${block.label} (toml: a valid doomloop config file)`);
    }
  }
  const shown = {};
  for (const block of others) if (block.problems.length === 0 && block.kind !== 'json' && block.kind !== 'jsonl' && block.kind !== 'toml') shown[block.lang] = (shown[block.lang] ?? 0) + 1;
  const rust = shown.rust ?? 0;
  delete shown.rust;
  const python = shown.python ?? 0;
  delete shown.python;
  const notRun = blocks.filter((b) => !b.run).length;
  console.log(
    `${files.length} files; rust (doc tests, run by cargo test): ${rust}; python (run by tests/python/test_docs.py): ${python}; shown, not run: ${Object.entries(shown).map(([lang, n]) => `${n} ${lang}`).join(', ') || 'none'}; js/ts type-checked only (no-run): ${notRun}`,
  );
  const checked = blocks.length + others.filter((b) => b.kind === 'json' || b.kind === 'jsonl' || b.kind === 'toml' || b.problems.length > 0).length;
  console.log(`${checked - failed} passed, ${failed} failed`);
  process.exitCode = failed === 0 ? 0 : 1;
}

await main();
