// What the plugins' launcher (plugins/launcher/doomloop-hook, run as
// `sh doomloop-hook AGENT` at every hook event) adds over running
// `doomloop hook AGENT` directly, for each way it finds the binary: from
// $DOOMLOOP_BIN, in npm's global layout (PREFIX/bin/doomloop linking into
// lib/node_modules, the platform package beside it), behind a link
// elsewhere (resolved with readlink -f), in ~/.cargo/bin after looking
// everywhere else; and with nothing installed (the call allowed). The fake
// layouts hold links to target/release/doomloop in a temp dir; each row
// has its own state directory and HOME. `/bin/true` is the baseline process.
//
//   node benches/launcher.mjs [ITERATIONS]     (default 200; needs target/release/doomloop)
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
const executable = (path) => writeFileSync(path, '#!/bin/sh\n', { mode: 0o755 });
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const doomloop = process.env.DOOMLOOP_BIN || join(root, 'target/release/doomloop');
const launcher = join(root, 'plugins/launcher/doomloop-hook');
const n = Number(process.argv[2] || 200);
const base = mkdtempSync(join(tmpdir(), 'doomloop-launcher-bench-'));
const host = `${process.platform}-${process.arch}`;
const systemPath = '/usr/bin:/bin';

const link = (target, path) => {
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path);
};
/** A row's world: its own HOME and state directory, and `layout(home)` → extra PATH entries. */
function world(name, layout = () => []) {
  const home = join(base, name, 'home');
  mkdirSync(home, { recursive: true });
  const path = [...layout(home, join(base, name)), systemPath].join(':');
  return { HOME: home, PATH: path, DOOMLOOP_STATE_DIR: join(base, name, 'state') };
}
const npmGlobal = (home, dir) => {
  const prefix = join(dir, 'prefix');
  executable(join(dir, 'cli.cjs'));
  link(join(dir, 'cli.cjs'), join(prefix, 'lib/node_modules/doom-loop-wasm/cli.cjs'));
  link('../lib/node_modules/doom-loop-wasm/cli.cjs', join(prefix, 'bin/doomloop'));
  link(doomloop, join(prefix, `lib/node_modules/doom-loop-wasm-${host}/bin/doomloop`));
  return [join(prefix, 'bin')];
};
const elsewhere = (home, dir) => {
  const nm = join(dir, 'custom/node_modules');
  executable(join(dir, 'cli.cjs'));
  link(join(dir, 'cli.cjs'), join(nm, 'doom-loop-wasm/cli.cjs'));
  link(doomloop, join(nm, `doom-loop-wasm-${host}/bin/doomloop`));
  link(join(nm, 'doom-loop-wasm/cli.cjs'), join(dir, 'links/doomloop'));
  return [join(dir, 'links')];
};
const cargo = (home) => {
  link(doomloop, join(home, '.cargo/bin/doomloop'));
  return [];
};

const event = JSON.stringify({
  session_id: 'bench', transcript_path: '/nonexistent', cwd: '/tmp', hook_event_name: 'PreToolUse',
  tool_name: 'Bash', tool_input: { command: 'cat notes.txt', description: 'read it' }, tool_use_id: 'toolu_1',
});
const eventFile = join(base, 'event.json');
writeFileSync(eventFile, event);

const rows = [
  ['/bin/true (baseline process)', '/bin/true', [], world('true')],
  ['doomloop hook claude-code (direct)', doomloop, ['hook', 'claude-code'], world('direct')],
  ['launcher, $DOOMLOOP_BIN', '/bin/sh', [launcher, 'claude-code'], { ...world('env'), DOOMLOOP_BIN: doomloop }],
  ['launcher, npm global layout', '/bin/sh', [launcher, 'claude-code'], world('npm', npmGlobal)],
  ['launcher, link resolved (readlink -f)', '/bin/sh', [launcher, 'claude-code'], world('link', elsewhere)],
  ['launcher, ~/.cargo/bin (searched last)', '/bin/sh', [launcher, 'claude-code'], world('cargo', cargo)],
  ['launcher, nothing installed (allows)', '/bin/sh', [launcher, 'claude-code'], world('none')],
];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
function wall(cmd, args, env) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    const r = spawnSync(cmd, args, { input: event, env, stdio: ['pipe', 'ignore', 'pipe'] });
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.status} ${r.stderr}`);
  }
  return median(times);
}
// CPU time (user + sys of the children, from bash's `times`): what a busy
// machine's scheduling delay does not inflate, unlike the wall time.
function cpu(cmd, args, env) {
  const line = [cmd, ...args].map((a) => `'${a}'`).join(' ');
  const r = spawnSync('/bin/bash', ['-c', `for i in $(seq ${n}); do ${line} < '${eventFile}' > /dev/null 2>&1; done; times`], { env, encoding: 'utf8' });
  const [, children] = r.stdout.trim().split('\n');
  const secs = children.split(/\s+/).map((t) => { const m = /(\d+)m([\d.]+)s/.exec(t); return m ? Number(m[1]) * 60 + Number(m[2]) : 0; });
  return ((secs[0] + secs[1]) * 1000) / n;
}

const measured = rows.map(([name, cmd, args, env]) => ({ name, wall: wall(cmd, args, env), cpu: cpu(cmd, args, env) }));
const direct = measured[1];
console.log(`plugin launcher, median wall of ${n} (spawnSync, PreToolUse on stdin) and mean CPU (user+sys)`);
for (const [i, row] of measured.entries()) {
  const over = i >= 2 ? `   (+${(row.wall - direct.wall).toFixed(2)} ms wall, +${(row.cpu - direct.cpu).toFixed(2)} ms CPU over direct)` : '';
  console.log(`  ${row.name.padEnd(40)} ${row.wall.toFixed(2)} ms   CPU ${row.cpu.toFixed(2)} ms${over}`);
}
