// One `doomloop hook claude-code` invocation — process start, state load,
// the decision, state save — beside `true`, the baseline process, both
// started the same way (spawnSync, the event on stdin). The difference is
// what the hook adds to every tool call. The session's state is a realistic
// one: 40 earlier rounds over 20 distinct calls, then PreToolUse and
// PostToolBatch alternate (each PreToolUse starts a round, folding the last).
// Then `doomloop hook codex` the same way, whose round takes three events
// (PreModelRequest ends the last round, PreToolUse, PostToolUse).
//
// Last, one hook event by each install path (benches/hook-paths.mjs): the
// native binary of the npm platform package, the npm `doomloop` launcher
// running it, the wasm fallback, the `cargo install` build, beside
// `/bin/true` and `node -e 0`; with --json FILE those rows are written for
// the scoreboard (benches/js/targets.mjs).
//
//   node benches/hook.mjs [ITERATIONS] [--json FILE]   (default 300; needs target/release/doomloop and pkg/)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, statSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installPaths } from './hook-paths.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const doomloop = process.env.DOOMLOOP_BIN || join(root, 'target/release/doomloop');
const argv = process.argv.slice(2);
const jsonAt = argv.indexOf('--json');
const jsonFile = jsonAt >= 0 ? argv.splice(jsonAt, 2)[1] : null;
const n = Number(argv[0] || 300);
const dir = mkdtempSync(join(tmpdir(), 'doomloop-hook-bench-'));
const args = ['hook', 'claude-code', '--state-dir', dir];
const session = 'bench';
const pre = (i) => JSON.stringify({
  session_id: session, transcript_path: '/nonexistent', cwd: '/tmp', hook_event_name: 'PreToolUse',
  tool_name: 'Bash', tool_input: { command: `cat file-${i % 20}.txt`, description: 'read it' }, tool_use_id: `toolu_${i}`,
});
const batch = (i) => JSON.stringify({
  session_id: session, hook_event_name: 'PostToolBatch',
  tool_calls: [{ tool_name: 'Bash', tool_input: { command: `cat file-${i % 20}.txt` }, tool_use_id: `toolu_${i}`, tool_response: `contents of file ${i % 20}\n`.repeat(20) }],
});
const run = (cmd, argv, input) => {
  const t = process.hrtime.bigint();
  const r = spawnSync(cmd, argv, { input, stdio: ['pipe', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== 0 || (r.stderr && r.stderr.length)) throw new Error(`${cmd}: ${r.status} ${r.stderr}`);
  return ms;
};
const codexDir = mkdtempSync(join(tmpdir(), 'doomloop-hook-bench-codex-'));
const codexArgs = ['hook', 'codex', '--state-dir', codexDir];
const codexEvent = (name, i, extra = {}) => JSON.stringify({
  session_id: session, turn_id: 'turn-1', transcript_path: null, cwd: '/tmp', hook_event_name: name, model: 'm', ...extra,
  ...(name === 'PreModelRequest' ? {} : { tool_name: 'Bash', tool_input: { command: `cat file-${i % 20}.txt` }, tool_use_id: `call_${i}` }),
});
const codexModel = (i) => codexEvent('PreModelRequest', i);
const codexPre = (i) => codexEvent('PreToolUse', i, { permission_mode: 'bypassPermissions' });
const codexPost = (i) => codexEvent('PostToolUse', i, { permission_mode: 'bypassPermissions', tool_response: `contents of file ${i % 20}\n`.repeat(20) });
for (let i = 0; i < 40; i++) {
  run(doomloop, args, pre(i)); run(doomloop, args, batch(i));
  run(doomloop, codexArgs, codexModel(i)); run(doomloop, codexArgs, codexPre(i)); run(doomloop, codexArgs, codexPost(i));
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const hookPre = [], hookBatch = [], base = [], codex = { model: [], pre: [], post: [] };
for (let i = 40; i < 40 + n; i++) {
  base.push(run('true', [], pre(i)));
  hookPre.push(run(doomloop, args, pre(i)));
  hookBatch.push(run(doomloop, args, batch(i)));
  codex.model.push(run(doomloop, codexArgs, codexModel(i)));
  codex.pre.push(run(doomloop, codexArgs, codexPre(i)));
  codex.post.push(run(doomloop, codexArgs, codexPost(i)));
}
// CPU time (user + sys of the children, from bash's `times`): what a busy
// machine's scheduling delay does not inflate, unlike the wall time above.
const eventFile = join(dir, 'event.json');
writeFileSync(eventFile, pre(0));
const cpu = (cmd) => {
  const r = spawnSync('bash', ['-c', `for i in $(seq ${n}); do ${cmd} < ${eventFile} > /dev/null; done; times`], { encoding: 'utf8' });
  const [, children] = r.stdout.trim().split('\n');
  const secs = children.split(/\s+/).map((t) => { const m = /(\d+)m([\d.]+)s/.exec(t); return m ? Number(m[1]) * 60 + Number(m[2]) : 0; });
  return ((secs[0] + secs[1]) * 1000) / n;
};
const cpuTrue = cpu('/bin/true');
const cpuHook = cpu(`${doomloop} hook claude-code --state-dir ${dir}`);
const file = readdirSync(dir).find((f) => f.endsWith('.json') && f !== 'event.json');
const size = statSync(join(dir, file)).size;
const b = median(base);
const rows = [
  ['true (baseline process)', b],
  ['doomloop hook claude-code, PreToolUse', median(hookPre)],
  ['doomloop hook claude-code, PostToolBatch', median(hookBatch)],
  ['doomloop hook codex, PreModelRequest', median(codex.model)],
  ['doomloop hook codex, PreToolUse', median(codex.pre)],
  ['doomloop hook codex, PostToolUse', median(codex.post)],
];
console.log(`hook invocation, median of ${n} (spawnSync, event on stdin)`);
for (const [name, ms] of rows) console.log(`  ${name.padEnd(44)} ${ms.toFixed(2)} ms${ms === b ? '' : `   (+${(ms - b).toFixed(2)} ms)`}`);
console.log(`  CPU per invocation (user+sys): /bin/true ${cpuTrue.toFixed(2)} ms, doomloop hook ${cpuHook.toFixed(2)} ms   (+${(cpuHook - cpuTrue).toFixed(2)} ms)`);
const codexFile = readdirSync(codexDir).find((f) => f.endsWith('.json'));
console.log(`  state file after ${40 + n} rounds: ${size} bytes (claude-code), ${statSync(join(codexDir, codexFile)).size} bytes (codex)`);

await installPaths({ jsonFile });
