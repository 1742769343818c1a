// The two CLIs behave, and behave alike: the native `doomloop`
// (target/release/doomloop) and the package's `npx doomloop` (pkg/cli.mjs)
// give the same output, messages and exit statuses (docs/cli.md:
// 0 ok, 1 a finding, 2 a usage/input/output error, 141 stdout closed).
// Each finding of ../shared/repros/cli.sh has a named test below.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, writeFileSync, mkdtempSync, mkdirSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const native = join(root, 'target/release/doomloop');
const npx = join(root, 'pkg/cli.mjs');
const CLIS = { native: [native], npm: [process.execPath, npx] };
const dir = mkdtempSync(join(tmpdir(), 'doomloop-cli-'));

function one(cli, args, input, cwd) {
  const [cmd, ...pre] = CLIS[cli];
  const r = spawnSync(cmd, [...pre, ...args], { encoding: 'utf8', input: input ?? '', maxBuffer: 1 << 28, cwd });
  // A CLI that refuses before reading stdin may exit before the input is
  // written: EPIPE on our side, with the child's status and output intact.
  const refusedEarly = r.error?.code === 'EPIPE' && r.status !== null;
  assert.ok(r.error === undefined || refusedEarly, `${cli} CLI did not run: ${r.error}`);
  return r;
}

/** Both CLIs on the same argv (and stdin); returns [native, npm]. */
function run(args, input, cwd) {
  return [one('native', args, input, cwd), one('npm', args, input, cwd)];
}

/** Both CLIs through bash (pipes, redirections, raw bytes in argv). */
function shell(script) {
  return Object.entries(CLIS).map(([name, cli]) => {
    const r = spawnSync('bash', ['-c', script, 'doomloop', ...cli], { encoding: 'utf8', cwd: dir, maxBuffer: 1 << 28 });
    return { name, ...r };
  });
}

function file(name, text) {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const noPanic = (r) => assert.doesNotMatch(r.stderr, /panicked|RUST_BACKTRACE|stack backtrace|\n\s+at .*\.m?js:\d+/);

const LOOP = JSON.stringify({
  rounds: Array.from({ length: 6 }, () => ({ calls: [{ toolName: 'poll', args: { id: 1 } }] })),
});

test('replay of the bundled billing agent: same timeline, stopped at round 6', () => {
  const [a, b] = run(['replay']);
  assert.equal(a.status, 0);
  assert.equal(b.status, 0);
  assert.equal(b.stdout, a.stdout);
  assert.match(a.stdout, /stopped: doom_loop at round 6 of 8/);
  const [ja, jb] = run(['replay', join(root, 'cli/examples/billing-agent.json'), '--json']);
  assert.deepEqual(JSON.parse(jb.stdout), JSON.parse(ja.stdout));
});

test('fingerprint and canonicalize agree, lone surrogates included', () => {
  for (const [tool, json] of [
    ['bash', '{"cwd":"/tmp","command":"ls -la"}'],
    ['list_tasks', '{}'],
    ['t\u00e9', '{"b":[1e21,-0,5e-324],"a":"\\ud800","__proto__":{"x":1}}'],
  ]) {
    const [a, b] = run(['fingerprint', tool, json]);
    assert.equal(a.status, 0, a.stderr);
    assert.equal(b.stdout, a.stdout);
    const [ca, cb] = run(['canonicalize', json]);
    assert.equal(cb.stdout, ca.stdout);
  }
  const [a] = run(['fingerprint', 'bash', '{"cwd":"/tmp","command":"ls -la"}']);
  assert.equal(a.stdout.trim(), 'c3430466c9a1a7c11c8e23328fcf3057189c44d86839527ac6e61bb4574410d4');
});

test('negative numbers are JSON arguments, not flags', () => {
  for (const r of run(['canonicalize', '-1.5e3'])) assert.equal(r.stdout, '-1500\n', r.stderr);
  const [a, b] = run(['fingerprint', 't', '-0']);
  assert.equal(a.status, 0, a.stderr);
  assert.equal(b.stdout, a.stdout);
});

test('bad transcripts get a clear message and exit 2 from both', () => {
  const notJson = file('bad.json', '{"rounds": [');
  const noRounds = file('shape.json', '{"nope": 1}');
  for (const path of [notJson, noRounds]) {
    const [a, b] = run(['replay', path]);
    assert.equal(a.status, 2);
    assert.equal(b.status, 2);
    assert.match(a.stderr, /^doomloop: /);
    assert.equal(b.stderr, a.stderr);
  }
  const [, shape] = run(['replay', noRounds]);
  assert.match(shape.stderr, /unrecognised trace shape .*; accepted: the rounds format/);
});

test('--version prints the same version from both, each naming the build that answered', () => {
  const [a, b] = run(['--version']);
  assert.equal(a.status, 0);
  assert.match(a.stdout, /^doomloop \d+\.\d+\.\d+ \(native [\w-]+\)\n$/);
  assert.equal(b.stdout, a.stdout.replace(/\(native [\w-]+\)/, '(wasm)'));
  assert.equal(run(['-V'])[1].stdout, b.stdout);
  const pkg = JSON.parse(readFileSync(join(root, 'pkg/package.json'), 'utf8'));
  assert.equal(b.stdout, `doomloop ${pkg.version} (wasm)\n`);
});

test('--help on every subcommand: the same text from both, on stdout, exit 0', () => {
  for (const args of [
    ['--help'],
    ['-h'],
    ['help'],
    ...['conformance', 'fingerprint', 'canonicalize', 'replay', 'eval', 'hook'].flatMap((c) => [
      [c, '--help'],
      [c, '-h'],
      ['help', c],
    ]),
    ...['claude-code', 'gemini-cli', 'install'].flatMap((c) => [
      ['hook', c, '--help'],
      ['help', 'hook', c],
    ]),
  ]) {
    const [a, b] = run(args);
    assert.equal(a.status, 0, `${args}: ${a.stderr}`);
    assert.equal(b.status, 0, `${args}: ${b.stderr}`);
    assert.match(a.stdout, /^Usage: doomloop/m, String(args));
    assert.equal(b.stdout, a.stdout, String(args));
    assert.equal(a.stderr, '');
    assert.equal(b.stderr, '');
  }
  // No subcommand at all: the help, on stderr, as a usage error.
  for (const r of run([])) {
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^Usage: doomloop <COMMAND>/m);
  }
});

test('an unknown subcommand or flag is an error naming it, exit 2', () => {
  for (const [args, first] of [
    [['frobnicate'], "error: unrecognized subcommand 'frobnicate'"],
    [['--frob'], "error: unexpected argument '--frob' found"],
    [['replay', '--frob'], "error: unexpected argument '--frob' found"],
    [['replay', '-x'], "error: unexpected argument '-x' found"],
    [['conformance', '--zz', 'x'], "error: unexpected argument '--zz' found"],
    [['fingerprint', 't', '{}', 'extra'], "error: unexpected argument 'extra' found"],
    [['replay', '--fail-on', 'maybe'], "error: invalid value 'maybe' for '--fail-on <RUNG>'"],
    [['replay', '--option'], "error: a value is required for '--option <JSON>' but none was supplied"],
    [['replay', '--option', 'true', '--recommended'], "error: the argument '--option <JSON>' cannot be used with '--recommended'"],
    [['replay', '--recommended', '--option', 'true'], "error: the argument '--recommended' cannot be used with '--option <JSON>'"],
    [['replay', '--json', '--json'], "error: the argument '--json' cannot be used multiple times"],
    [['replay', '--json=3'], "error: unexpected value '3' for '--json' found; no more were expected"],
    [['replay', '--help=1'], "error: unexpected value '1' for '--help' found; no more were expected"],
    [['eval'], 'error: the following required arguments were not provided:'],
    [['eval', 'x', '--fail-on', 'never'], "error: invalid value 'never' for '--fail-on <RUNG>'"],
    // clap's "a similar argument exists" tip: one clap, so the same tip.
    [['eval', 'x', '--compar'], "error: unexpected argument '--compar' found"],
    [['hook', 'install', 'claude-code', '--projet'], "error: unexpected argument '--projet' found"],
    [['conformance'], 'error: the following required arguments were not provided:'],
    [['help', 'frobnicate'], "error: unrecognized subcommand 'frobnicate'"],
  ]) {
    const [a, b] = run(args);
    for (const r of [a, b]) {
      assert.equal(r.status, 2, `${args}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr.split('\n')[0], first, String(args));
      noPanic(r);
    }
    assert.equal(b.stderr, a.stderr, String(args));
  }
});

test('stdin: `-` wherever a file is read; canonicalize and fingerprint read stdin when JSON is absent', () => {
  const billing = readFileSync(join(root, 'cli/examples/billing-agent.json'), 'utf8');
  const [fromFile] = run(['replay', join(root, 'cli/examples/billing-agent.json')]);
  for (const r of run(['replay', '-'], billing)) {
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, fromFile.stdout);
  }
  for (const args of [['canonicalize'], ['canonicalize', '-']]) {
    for (const r of run(args, '{"b":1,"a":[true]}\n')) assert.equal(r.stdout, '{"a":[true],"b":1}\n', r.stderr);
  }
  const [byArg] = run(['fingerprint', 'bash', '{"command":"ls"}']);
  for (const args of [['fingerprint', 'bash'], ['fingerprint', 'bash', '-']]) {
    for (const r of run(args, '{"command":"ls"}')) assert.equal(r.stdout, byArg.stdout, r.stderr);
  }
  const corpus = readFileSync(join(root, 'vectors/reference/fingerprints.json'), 'utf8');
  const [a, b] = run(['conformance', '-'], corpus);
  assert.equal(a.status, 0, a.stderr);
  assert.equal(b.status, 0, b.stderr);
  assert.match(a.stdout, /^<stdin>: \d+ passed, 0 failed$/m);
  assert.equal(a.stdout.split('\n').at(-2), b.stdout.split('\n').at(-2));
  // The CLI refuses before reading stdin (which may then fail to be written: see one()).
  for (const r of run(['conformance', '-', '-'], '{}')) {
    assert.equal(r.status, 2);
    assert.match(r.stderr, /can be read only once/);
  }
});

test('input errors name the source: missing file, a folder, not UTF-8, empty stdin', () => {
  const latin1 = file('latin1.json', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]));
  for (const [args, message] of [
    [['replay', join(dir, 'missing.json')], `doomloop: ${join(dir, 'missing.json')}: No such file or directory (os error 2)\n`],
    [['replay', dir], `doomloop: ${dir}: Is a directory (os error 21)\n`],
    [['replay', latin1], `doomloop: ${latin1}: not UTF-8 text (byte 6)\n`],
    [['conformance', latin1], `doomloop: ${latin1}: not UTF-8 text (byte 6)\n`],
    [['canonicalize'], 'doomloop: input is not valid JSON: '],
  ]) {
    const [a, b] = run(args);
    for (const r of [a, b]) {
      assert.equal(r.status, 2, `${args}: ${r.stderr}`);
      assert.ok(r.stderr.startsWith(message), `${args}: ${r.stderr}`);
    }
    assert.equal(b.stderr, a.stderr);
  }
});

test('regression (cli.sh): a non-UTF-8 argument is a usage error, not a panic', () => {
  for (const script of [`"$@" fingerprint $'\\xff' '{}'`, `"$@" canonicalize $'"\\xff"'`, `"$@" $'\\xff'`]) {
    const [a, b] = shell(script);
    for (const r of [a, b]) {
      assert.equal(r.status, 2, `${r.name} ${script}: ${r.stderr}`);
      assert.match(r.stderr, /^error: (invalid UTF-8 was detected in one or more arguments|unrecognized subcommand)/);
      noPanic(r);
    }
  }
});

// 100,000 rounds: far more output than a pipe buffer holds.
const LONG = JSON.stringify({
  rounds: Array.from({ length: 100_000 }, (_, i) => ({ calls: [{ toolName: 't', args: { i } }] })),
});

test('regression (cli.sh): stdout closed early (| head -1) ends quietly with 141', () => {
  file('long.json', LONG);
  for (const r of shell('"$@" replay long.json | head -1; echo "status ${PIPESTATUS[0]}"')) {
    const [line, status] = r.stdout.split('\n');
    assert.match(line, /^round {3}1 {2}t /, r.name);
    assert.equal(status, 'status 141', `${r.name}: ${r.stderr}`);
    assert.equal(r.stderr, '', r.name);
  }
  for (const r of shell('"$@" --help | head -1; echo "status ${PIPESTATUS[0]}"')) {
    assert.match(r.stdout, /status (0|141)/, r.name);
    assert.equal(r.stderr, '', r.name);
  }
});

test('regression (cli.sh): a full stdout (> /dev/full) is a clear error, exit 2', () => {
  for (const args of ['replay', 'canonicalize 1', '--help', 'conformance ' + join(root, 'vectors/reference/config.json')]) {
    for (const r of shell(`"$@" ${args} > /dev/full`)) {
      assert.equal(r.status, 2, `${r.name} ${args}: ${r.stderr}`);
      assert.match(r.stderr, /^doomloop: cannot write output: .*(No space left on device|ENOSPC)/i, `${r.name} ${args}`);
      noPanic(r);
    }
  }
});

test('regression (cli.sh): conformance on an empty folder fails (exit 1) and says why', () => {
  const empty = join(dir, 'empty');
  mkdirSync(empty, { recursive: true });
  writeFileSync(join(dir, 'nocases.json'), '{"cases":[]}');
  for (const args of [[empty], [join(dir, 'nocases.json')]]) {
    const [a, b] = run(['conformance', ...args]);
    for (const r of [a, b]) {
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stdout, /^0 passed, 0 failed$/m);
      assert.match(r.stderr, /^doomloop: no conformance cases found in /);
    }
    assert.equal(b.stderr, a.stderr);
  }
});

test('conformance: a corpus passes in both; a failing case exits 1; a shapeless file exits 2', () => {
  const corpus = join(root, 'vectors/reference/loop-keys.json');
  const [a, b] = run(['conformance', corpus]);
  assert.equal(a.status, 0, a.stdout);
  assert.equal(b.status, 0, b.stdout);
  assert.equal(b.stdout.split('\n').at(-2), a.stdout.split('\n').at(-2));
  const doc = JSON.parse(readFileSync(join(root, 'vectors/reference/fingerprints.json'), 'utf8'));
  const tampered = doc.cases.find((c) => 'fingerprint' in c);
  tampered.fingerprint = '0'.repeat(64);
  const bad = file('tampered.json', JSON.stringify({ ...doc, cases: [tampered] }));
  for (const r of run(['conformance', bad])) {
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stdout, /^FAIL /m);
    assert.match(r.stdout, /^0 passed, 1 failed$/m);
    assert.match(r.stderr, /^doomloop: 1 conformance case\(s\) failed$/m);
  }
  const shapeless = file('shapeless.json', '{"vectors":[]}');
  const [sa, sb] = run(['conformance', shapeless]);
  assert.equal(sa.status, 2);
  assert.equal(sb.status, 2);
  assert.equal(sb.stderr, sa.stderr);
  assert.match(sa.stderr, /neither `cases` nor `traces`/);
});

test('regression (cli.sh): a 100,000-deep file is rejected by both with the same message', () => {
  const deep = file('deep.json', `${'['.repeat(100_000)}${']'.repeat(100_000)}`);
  const [a, b] = run(['replay', deep]);
  for (const r of [a, b]) {
    assert.equal(r.status, 2);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, `doomloop: ${deep}: not valid JSON: JSON nested deeper than 512 levels\n`);
  }
  const [ca, cb] = run(['canonicalize'], `${'['.repeat(600)}${']'.repeat(600)}`);
  assert.equal(ca.status, 2);
  assert.equal(cb.stderr, ca.stderr);
});

test('regression (cli.sh): replay warnings go to stderr, never stdout', () => {
  const path = file(
    'warn.json',
    JSON.stringify({ loopKeys: { t: ['missing'] }, rounds: [{ calls: [{ toolName: 't', args: { a: 1 } }] }] }),
  );
  const [a, b] = run(['replay', path]);
  for (const r of [a, b]) {
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /^warning: \[DoomLoop\] "t": /);
    assert.doesNotMatch(r.stdout, /warning/);
  }
  assert.equal(b.stdout, a.stdout);
  assert.equal(b.stderr, a.stderr);
  const [ja, jb] = run(['replay', path, '--json']);
  assert.equal(JSON.parse(ja.stdout).warnings.length, 1);
  assert.deepEqual(JSON.parse(jb.stdout), JSON.parse(ja.stdout));
});

test('replay --fail-on: exit 1 once the replay reaches the rung, 0 below it', () => {
  const loop = file('loop.json', LOOP);
  for (const [args, status, message] of [
    [['replay', loop, '--fail-on', 'block'], 1, 'doomloop: --fail-on block: block at round 3 ("poll")\n'],
    [['replay', loop, '--fail-on', 'stop'], 1, 'doomloop: --fail-on stop: stop at round 6 ("poll")\n'],
    [['replay', loop, '--fail-on=stop', '--option', '{"ladder":{"stop":false}}'], 0, /^warning: \[DoomLoop\] ladder has block enabled with stop disabled/],
    [['replay', loop, '--option', '{"ladder":{"block":false,"stop":false}}', '--fail-on', 'block'], 0, ''],
    [['replay', loop], 0, ''],
  ]) {
    const [a, b] = run(args);
    for (const r of [a, b]) {
      assert.equal(r.status, status, `${args}: ${r.stderr}`);
      if (message instanceof RegExp) assert.match(r.stderr, message, String(args));
      else assert.equal(r.stderr, message, String(args));
    }
    assert.equal(b.stdout, a.stdout);
    assert.equal(b.stderr, a.stderr);
  }
  const [a, b] = run(['replay', loop, '--option', '{']);
  assert.equal(a.status, 2);
  assert.match(a.stderr, /^doomloop: --option is not valid JSON: /);
  assert.equal(b.stderr, a.stderr);
});

const fixtures = join(root, 'trace/tests/fixtures');

test('replay reads every trace format the importers accept: gzip on stdin, --recommended', () => {
  const gemini = join(fixtures, 'gemini.json');
  const [plain] = run(['replay', gemini]);
  assert.equal(plain.status, 0, plain.stderr);
  const gz = spawnSync('gzip', ['-c', gemini]).stdout;
  const [a, b] = run(['replay', '-'], gz);
  assert.equal(a.status, 0, a.stderr);
  assert.equal(a.stdout, plain.stdout);
  assert.equal(b.stdout, a.stdout);
  const [ra, rb] = run(['replay', join(fixtures, 'openai-chat.json'), '--recommended', '--json']);
  assert.equal(ra.status, 0, ra.stderr);
  assert.deepEqual(JSON.parse(rb.stdout), JSON.parse(ra.stdout));
  assert.match(ra.stdout, /"outcomes"/);
  const [ma, mb] = run(['replay', join(fixtures, 'runs.jsonl')]);
  assert.equal(ma.status, 2);
  assert.match(ma.stderr, /holds 3 runs, not one/);
  assert.equal(mb.stderr, ma.stderr);
});

test('eval: the same report from both, tables and --json, defaults vs recommended', () => {
  for (const args of [[fixtures], [fixtures, '--compare'], [fixtures, '--json', '--option', '{"ladder":{"block":2}}', '--recommended']]) {
    const [a, b] = run(['eval', ...args]);
    assert.equal(a.status, 0, `${args}: ${a.stderr}`);
    assert.equal(b.stdout, a.stdout, String(args));
    assert.equal(b.stderr, a.stderr, String(args));
  }
  const [c] = run(['eval', fixtures, '--compare', '--json']);
  const report = JSON.parse(c.stdout);
  assert.deepEqual(report.options.map((o) => o.label), ['defaults', 'recommended']);
  assert.ok(report.options[0].total.runs > 5);
  const [t] = run(['eval', fixtures, '--compare']);
  assert.match(t.stdout, /^option defaults: true$/m);
  assert.match(t.stdout, /^option recommended: \{"outcomes":true/m);
});

test('eval: stdin and gzip, a bad run counted with a warning on stderr, no runs is a failure', () => {
  const runs = readFileSync(join(fixtures, 'runs.jsonl'));
  const gz = spawnSync('gzip', ['-c'], { input: runs }).stdout;
  const [plain] = run(['eval', '-'], runs);
  const [a, b] = run(['eval', '-'], gz);
  assert.equal(a.status, 0, a.stderr);
  assert.equal(a.stdout, plain.stdout);
  assert.equal(b.stdout, a.stdout);
  const mixed = join(dir, 'mixed');
  mkdirSync(mixed, { recursive: true });
  writeFileSync(join(mixed, 'good.json'), LOOP);
  writeFileSync(join(mixed, 'bad.json'), '{"rounds": [');
  writeFileSync(join(mixed, 'notes.txt'), 'not a trace');
  const [ma, mb] = run(['eval', mixed]);
  assert.equal(ma.status, 0, ma.stderr);
  assert.equal(ma.stderr, 'warning: 1 of 2 run(s) could not be read or replayed (listed in the report)\n');
  assert.match(ma.stdout, /1 run\(s\) failed:\n {2}.*bad\.json: not valid JSON/);
  assert.equal(mb.stdout, ma.stdout);
  assert.equal(mb.stderr, ma.stderr);
  const empty = join(dir, 'no-traces');
  mkdirSync(empty, { recursive: true });
  for (const r of run(['eval', empty])) {
    assert.equal(r.status, 1);
    assert.equal(r.stderr, 'doomloop: no runs evaluated (0 read)\n');
  }
  for (const r of run(['eval', join(dir, 'missing-folder')])) {
    assert.equal(r.status, 2);
    assert.match(r.stderr, /missing-folder: No such file or directory \(os error 2\)/);
  }
});

test('eval --fail-on: exit 1 when any run reaches the rung under any option', () => {
  const loops = join(dir, 'loops');
  mkdirSync(loops, { recursive: true });
  writeFileSync(join(loops, 'loop.json'), LOOP);
  for (const [args, status, message] of [
    [['--fail-on', 'block'], 1, 'doomloop: --fail-on block: block or stop in 1 run(s) under defaults\n'],
    [['--fail-on', 'stop'], 1, 'doomloop: --fail-on stop: stop in 1 run(s) under defaults\n'],
    [['--fail-on', 'block', '--option', '{"ladder":{"block":false,"stop":false}}'], 0, ''],
    [[], 0, ''],
  ]) {
    const [a, b] = run(['eval', loops, ...args]);
    for (const r of [a, b]) {
      assert.equal(r.status, status, `${args}: ${r.stderr}`);
      assert.equal(r.stderr, message, String(args));
    }
    assert.equal(b.stdout, a.stdout);
  }
});

test('eval: no progress line when stderr is not a terminal', () => {
  const many = file('many.jsonl', Array.from({ length: 300 }, () => LOOP).join('\n'));
  for (const r of run(['eval', many])) {
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
  }
});

const shared = join(root, '../shared/trajectories');
test('eval over the shared trajectories: both CLIs print the same report', { skip: !existsSync(shared) && `${shared} absent` }, () => {
  const [a, b] = run(['eval', shared, '--compare', '--json']);
  assert.equal(a.status, 0, a.stderr);
  assert.equal(b.stdout, a.stdout);
  const report = JSON.parse(a.stdout);
  assert.equal(report.options[0].total.runs, 961);
  assert.equal(report.failures.length, 0);
});

test('argv parity: random argument lists get the same status, stdout and stderr from both', () => {
  // A fixed-seed walk over the vocabulary both parsers must agree on.
  const words = [
    'replay', 'eval', 'conformance', 'fingerprint', 'canonicalize', 'help', '--json', '--option', 'true', '{"x":',
    '--recommended', '--compare', '--fail-on', 'block', 'stop', 'never', 'missing.json', '-', '--help', '-h', '--frob',
    '-q', '-1', '--json=1', '--', '--fail-on=stop', '--option=false', 'extra', '-V', '--version', '-hq', '--=',
    'cli/examples/billing-agent.json', 'hook', 'claude-code', 'gemini-cli', '--state-dir', '--projet',
  ];
  let seed = 0x2545f491;
  const next = (n) => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  let compared = 0;
  for (let i = 0; i < 80; i++) {
    const argv = Array.from({ length: 1 + next(5) }, () => words[next(words.length)]);
    const [a, b] = run(argv, '', root);
    compared++;
    assert.equal(b.status, a.status, `${JSON.stringify(argv)}: ${a.stderr} | ${b.stderr}`);
    // `--version` names the build that answered; all else is the same.
    const build = (text) => text.replace(/^(doomloop [\d.]+) \((?:native [\w-]+|wasm)\)$/m, '$1 (build)');
    assert.equal(build(b.stdout), build(a.stdout), JSON.stringify(argv));
    assert.equal(b.stderr, a.stderr, JSON.stringify(argv));
    noPanic(a);
    noPanic(b);
  }
  assert.equal(compared, 80);
});

test('a hook line clap rejects allows the call from both CLIs, for every agent', () => {
  // Exit 2 reads as "block" (Copilot CLI denies the call on any non-zero exit).
  for (const agent of ['claude-code', 'gemini-cli', 'codex', 'copilot']) {
    const [a, b] = run(['hook', agent, '--bogus'], '{}');
    assert.equal(a.status, 0, `${agent}: ${a.stderr}`);
    assert.equal(b.status, 0, `${agent}: ${b.stderr}`);
    assert.equal(b.stderr, a.stderr);
    assert.match(a.stderr, /^doomloop hook: error: unexpected argument '--bogus' found; allowing the call\n$/);
  }
});

test('the wasm CLI allows a hook event when its module cannot load: one line, exit 0', () => {
  const copy = join(dir, 'broken-pkg');
  cpSync(join(root, 'pkg'), copy, { recursive: true });
  writeFileSync(join(copy, 'doom_loop_full_bg.wasm'), 'not wasm');
  const event = JSON.stringify({ session_id: 's', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' } });
  const r = spawnSync(process.execPath, [join(copy, 'cli.mjs'), 'hook', 'claude-code', '--state-dir', join(dir, 'broken-state')], {
    encoding: 'utf8', input: event, env: { ...process.env, DOOMLOOP_WASM: '1' },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^doomloop hook: .*; allowing the call\n$/);
  // Any other command still fails as a broken install should.
  const other = spawnSync(process.execPath, [join(copy, 'cli.mjs'), 'canonicalize', '{}'], { encoding: 'utf8', env: { ...process.env, DOOMLOOP_WASM: '1' } });
  assert.equal(other.status, 2, other.stderr);
});
