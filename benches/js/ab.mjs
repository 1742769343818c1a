// Before/after of the fingerprint path, in one process: this tree's pkg/
// against another build of the package (`node benches/js/ab.mjs DIR`, DIR
// a copy of an earlier pkg/), the two alternating, medians of ROUNDS
// rounds (default 9). The inputs span the sizes where the core's choices
// change (the host-hash threshold at 1 KiB, strings dense with escapes,
// deep nesting, the large shapes of benches/js/peers.mjs); each pair must
// agree on the fingerprint before it is timed. Then the same inputs through
// the session engine (what withDoomLoop and every adapter run): one call per
// response, its arguments distinct every time (a `nonce` key added), a
// fresh session every 64 responses, as a run that makes progress.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const require = createRequire(import.meta.url);
if (!process.argv[2]) {
  console.error('usage: node benches/js/ab.mjs BASELINE_PKG_DIR');
  process.exit(2);
}
const before = require(resolve(process.argv[2], 'node.cjs'));
const after = require('../../pkg/node.cjs');
const rounds = Number(process.env.ROUNDS) || 9;

let deep = { leaf: 'end', n: 1 };
for (let depth = 0; depth < 59; depth++) deep = { level: depth, child: deep, tags: ['a', 'b'] };
const source = (lines) => Array.from({ length: lines }, (_, i) => `    value_${i} = compute(${i}, "x") # line ${i}\n`).join('');
const cases = {
  '150 B object': { command: 'grep -rn TODO src/', cwd: '/home/user/project', timeout_ms: 30000, env: { LANG: 'C' }, flags: ['-i', '--color=never'] },
  '60 levels': deep,
  ...Object.fromEntries([500, 1000, 1100, 2000, 4000, 16000].map((n) => [`${n}-char string`, { path: 'a.py', content: 'x = "y"\n'.repeat(n / 8) }])),
  // Flat objects of a few keys: where the session's fixed cost per response shows.
  '16 keys': Object.fromEntries(Array.from({ length: 16 }, (_, k) => [`key${k}`, k % 2 ? `v${k}` : k])),
  '32 keys': Object.fromEntries(Array.from({ length: 32 }, (_, k) => [`key${k}`, k % 2 ? `v${k}` : k])),
  'todo list, 4 items': { todos: Array.from({ length: 4 }, (_, k) => ({ id: `${k}`, content: `task ${k}`, status: 'pending', priority: 'high' })) },
  'one 400-char string': { k: '1', pad: 'x'.repeat(400), n: 1 },
  'edit, 8 KB': { path: 'src/x.ts', old_string: 'const a = "b";\n'.repeat(100), new_string: 'export function f(x) {\n  return x + "y";\n}\n'.repeat(180) },
  '1 MB string': { path: 'src/big_module.py', content: source(16000).slice(0, 1 << 20) },
  '20k rows': { rows: Array.from({ length: 20000 }, (_, i) => ({ id: i, name: `row-${i}-naïve`, price: i * 0.75 + 0.01, active: i % 3 === 0 })) },
};

function time(fn, iterations) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn();
  return Number(process.hrtime.bigint() - start) / iterations / 1000;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

// ONLY=recommended or ONLY=restore times that section alone.
const only = process.env.ONLY;
console.log(`node ${process.version}; before = ${process.argv[2]}, after = pkg/; medians of ${rounds} alternating rounds`);
for (const [name, value] of Object.entries(only ? {} : cases)) {
  const run = (pkg) => () => pkg.fingerprintToolCallSync('edit', value);
  if (run(before)() !== run(after)()) throw new Error(`the two builds disagree on ${name}`);
  const iterations = Math.max(5, Math.floor(2e6 / JSON.stringify(value).length));
  time(run(before), iterations);
  time(run(after), iterations);
  const a = [];
  const b = [];
  for (let r = 0; r < rounds; r++) {
    a.push(time(run(before), iterations));
    b.push(time(run(after), iterations));
  }
  console.log(`${name.padEnd(18)} before ${median(a).toFixed(2).padStart(10)} µs  after ${median(b).toFixed(2).padStart(10)} µs  ${(median(a) / median(b)).toFixed(2)}×`);
}

const SESSION_RUN = 64;
function sessionRunner(pkg, value) {
  let session;
  let i = 0;
  return () => {
    if (i % SESSION_RUN === 0) {
      session?.free();
      session = new pkg.DoomLoopSession({});
    }
    i++;
    const { decisions } = session.onResponse({ calls: [{ id: `c${i}`, toolName: 'edit', args: { nonce: i % SESSION_RUN, ...value } }] });
    return decisions[0].fingerprint;
  };
}
console.log('session onResponse, one call with distinct arguments per response:');
for (const [name, value] of Object.entries(only ? {} : cases)) {
  if (sessionRunner(before, value)() !== sessionRunner(after, value)()) throw new Error(`the two builds' sessions disagree on ${name}`);
  const iterations = Math.max(5, Math.floor(5e5 / JSON.stringify(value).length));
  const runBefore = sessionRunner(before, value);
  const runAfter = sessionRunner(after, value);
  time(runBefore, iterations);
  time(runAfter, iterations);
  const a = [];
  const b = [];
  for (let r = 0; r < rounds; r++) {
    a.push(time(runBefore, iterations));
    b.push(time(runAfter, iterations));
  }
  console.log(`${name.padEnd(18)} before ${median(a).toFixed(2).padStart(10)} µs  after ${median(b).toFixed(2).padStart(10)} µs  ${(median(a) / median(b)).toFixed(2)}×`);
}

// The opt-in evidence (what RECOMMENDED_DOOM_LOOP_OPTION keeps per tool and
// fingerprint): a run of 3 distinct calls a round over 40 tools, every call
// answered, grown to `rounds` rounds; then what an adapter does with it each
// turn — a response with its results, persisting the state, resuming it.
function recommendedRun(pkg, length) {
  const session = new pkg.DoomLoopSession({ doomLoop: pkg.RECOMMENDED_DOOM_LOOP_OPTION });
  let round = 0;
  const step = () => {
    const calls = [0, 1, 2].map((i) => ({ id: `c${round}_${i}`, toolName: `tool${(round * 3 + i) % 40}`, args: { q: `query ${round} ${i}`, n: round } }));
    session.onResponse({ text: `thinking ${round}`, calls });
    for (const call of calls) session.onResult(call.id, { output: `result ${round} ${call.toolName}` });
    round++;
  };
  for (let r = 0; r < length; r++) step();
  return { session, step };
}
if (!only || only === 'recommended') console.log('RECOMMENDED_DOOM_LOOP_OPTION, 40 tools, 3 calls a round, every call answered:');
for (const length of !only || only === 'recommended' ? [50, 400] : []) {
  const runs = [before, after].map((pkg) => ({ pkg, ...recommendedRun(pkg, length) }));
  const [b, a] = runs.map(({ session }) => JSON.stringify(session.getState()).length);
  console.log(`after ${length} rounds: state ${b} B before, ${a} B after (${(b / a).toFixed(2)}×)`);
  // A round is timed on runs of its own (it grows them), before the state
  // is read and resumed (whose garbage would land on it).
  const ops = {
    'a round + results': null,
    getState: (r) => () => r.session.getState(),
    restore: (r) => {
      const state = r.session.getState();
      return () => new r.pkg.DoomLoopSession({ doomLoop: r.pkg.RECOMMENDED_DOOM_LOOP_OPTION, state }).free();
    },
  };
  for (const [name, make] of Object.entries(ops)) {
    const [fb, fa] = name === 'a round + results' ? [before, after].map((pkg) => recommendedRun(pkg, length).step) : runs.map(make);
    const iterations = name === 'a round + results' ? 200 : length > 100 ? 20 : 200;
    time(fb, iterations);
    time(fa, iterations);
    const xa = [];
    const xb = [];
    for (let r = 0; r < rounds; r++) {
      xa.push(time(fb, iterations));
      xb.push(time(fa, iterations));
    }
    console.log(`${`${name}, ${length} rounds`.padEnd(26)} before ${median(xa).toFixed(2).padStart(10)} µs  after ${median(xb).toFixed(2).padStart(10)} µs  ${(median(xa) / median(xb)).toFixed(2)}×`);
  }
}

// Restoring a persisted state (the reference's shape): a monitor built and
// handed the parsed blob, as a host resuming a run does.
if (!only || only === 'restore') {
  console.log('restore a persisted state:');
  const hex = (c) => c.repeat(64);
  const blobs = {
    '100k call counts': { tools: { t: { fingerprint: 'f0', streak: 2, callStreaks: Object.fromEntries(Array.from({ length: 100000 }, (_, i) => [`f${i}`, 2])) } } },
    '20 tools, 2 counts': { tools: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`tool${i}`, { fingerprint: hex('a'), streak: 2, callStreaks: { [hex('a')]: 2, [hex('b')]: 1 } }])) },
  };
  for (const [name, blob] of Object.entries(blobs)) {
    const state = JSON.parse(JSON.stringify(blob));
    const [fb, fa] = [before, after].map((pkg) => () => new pkg.DoomLoopMonitor(pkg.resolveDoomLoopOption(true)).restore(state));
    const iterations = name.startsWith('100k') ? 3 : 300;
    time(fb, iterations);
    time(fa, iterations);
    const xa = [];
    const xb = [];
    for (let r = 0; r < rounds; r++) {
      xa.push(time(fb, iterations));
      xb.push(time(fa, iterations));
    }
    console.log(`${name.padEnd(26)} before ${median(xa).toFixed(2).padStart(10)} µs  after ${median(xb).toFixed(2).padStart(10)} µs  ${(median(xa) / median(xb)).toFixed(2)}×`);
  }
}
