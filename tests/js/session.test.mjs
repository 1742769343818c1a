// DoomLoopSession: the session engine's JS face, from every entry — every
// rung, parallel duplicates, malformed and raw arguments, loop-key forms
// (function, field list, false), results (async loopOutputKey awaited, a
// second delivery ignored), capabilities, state round trip and the
// reference's shape, observe-only after an internal error.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import * as main from '../../pkg/node.mjs';
import * as replayEntry from '../../pkg/replay-node.mjs';
import { withWarnings } from './quiet.mjs';

const { DoomLoopSession, DoomLoopMonitor, RECOMMENDED_DOOM_LOOP_OPTION, resolveDoomLoopOption } = main;

const invoice = (id) => ({ id, toolName: 'get_invoice', args: { invoice_id: 'INV-2291' } });

/** A deep copy that keeps holes and undefined members (JSON would not). */
const clone = (value) => structuredClone(value);

test('exported from the main, inline, CommonJS and replay entries', async () => {
  const inline = await import('../../pkg/inline.mjs');
  const required = createRequire(import.meta.url)('../../pkg/node.cjs');
  for (const entry of [main, inline, required, replayEntry]) {
    assert.equal(typeof entry.DoomLoopSession, 'function');
    const session = new entry.DoomLoopSession();
    const { decisions } = session.onResponse({ calls: [invoice('c1')] });
    assert.equal(decisions[0].action, 'run');
    session.free();
  }
});

test('a session from the replay entry detects: it writes its calls into the module that reads them', () => {
  const warnings = [];
  const warn = console.warn;
  console.warn = (...args) => warnings.push(args.join(' '));
  try {
    const session = new replayEntry.DoomLoopSession();
    const actions = [1, 2, 3].map((i) => session.onResponse({ calls: [invoice(`c${i}`)] }).decisions[0].action);
    assert.deepEqual(actions, ['run', 'run', 'refuse']);
    session.free();
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(warnings, [], 'no internal error turned detection off');
});

test('browser entries: a session made after the replay entry\'s init keeps detecting once the main entry initialises', () => {
  // One bundle, both entries: the replay entry initialised first made its
  // full module the core; the main entry's later init must not swap the
  // module the session writes its calls into.
  const pkg = new URL('../../pkg/', import.meta.url);
  const script = `
    const { readFileSync } = await import('node:fs');
    const pkg = ${JSON.stringify(pkg.href)};
    const main = await import(pkg + 'browser.mjs');
    const replay = await import(pkg + 'replay-browser.mjs');
    await replay.init(readFileSync(new URL('doom_loop_full_bg.wasm', pkg)));
    const warnings = [];
    console.warn = (...args) => warnings.push(args.join(' '));
    const call = (id) => ({ calls: [{ id, toolName: 'get_invoice', args: { invoice_id: 'INV-2291' } }] });
    const early = new replay.DoomLoopSession();
    const actions = [early.onResponse(call('c1')).decisions[0].action];
    await main.init(readFileSync(new URL('doom_loop_bg.wasm', pkg)));
    for (const id of ['c2', 'c3']) actions.push(early.onResponse(call(id)).decisions[0].action);
    const late = new main.DoomLoopSession();
    const lateActions = ['d1', 'd2', 'd3'].map((id) => late.onResponse(call(id)).decisions[0].action);
    console.log(JSON.stringify({ actions, lateActions, long: main.fingerprintToolCallSync('t', { a: 'x'.repeat(5000) }).length, warnings }));
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const out = JSON.parse(run.stdout);
  assert.deepEqual(out.warnings, [], 'no internal error turned detection off');
  assert.deepEqual(out.actions, ['run', 'run', 'refuse']);
  assert.deepEqual(out.lateActions, ['run', 'run', 'refuse']);
  assert.equal(out.long, 64);
});

test('the reference ladder: observe, block with the verdict text, stop halts', () => {
  const detected = [];
  const session = new DoomLoopSession({ onDetected: (v) => detected.push(v.action) });
  const rounds = [1, 2, 3, 4, 5, 6].map((i) => session.onResponse({ calls: [invoice(`c${i}`)] }));
  assert.deepEqual(rounds.map((r) => r.decisions[0].verdict?.action ?? null), [null, 'observe', 'block', 'block', 'block', 'stop']);
  assert.deepEqual(detected, ['observe', 'block', 'block', 'block', 'stop']);
  assert.equal(rounds[2].decisions[0].action, 'refuse');
  assert.equal(rounds[2].decisions[0].message, rounds[2].decisions[0].verdict.message);
  assert.equal(rounds[5].halt.verdict.action, 'stop');
  assert.equal(session.haltVerdict().action, 'stop');
  const sealed = session.onResponse({ calls: [invoice('c7')] });
  assert.equal(sealed.decisions[0].action, 'refuse');
  assert.match(sealed.decisions[0].message, /^Not executed: this run was stopped by doom-loop detection\./);
  assert.equal(session.decision('c7').action, 'refuse');
});

test('steer and escalate reach the next request, once', () => {
  const session = new DoomLoopSession({
    doomLoop: { ladder: { observe: 2, steer: 3, escalate: 4, block: 5, stop: 6 }, escalation: { model: 'big-model', maxEscalations: 1 } },
  });
  for (let i = 1; i <= 3; i++) session.onResponse({ calls: [invoice(`c${i}`)] });
  const steer = session.nextRequest();
  assert.equal(steer.model, null);
  assert.match(steer.guidance, /Doom loop suspected/);
  assert.deepEqual(session.nextRequest(), { guidance: null, model: null });
  session.onResponse({ calls: [invoice('c4')] });
  const escalate = session.nextRequest();
  assert.equal(escalate.model, 'big-model');
  assert.match(escalate.guidance, /stronger model/);
  assert.equal(session.getState().escalationsUsed, 1);
});

test('a parallel fan-out of identical calls counts once and shares the first decision', () => {
  const session = new DoomLoopSession();
  let last;
  for (let round = 1; round <= 3; round++) {
    last = session.onResponse({ calls: ['a', 'b', 'c'].map((x) => invoice(`${round}${x}`)) });
  }
  assert.deepEqual(last.decisions.map((d) => [d.action, d.duplicateInRound]), [['refuse', false], ['refuse', true], ['refuse', true]]);
  assert.equal(last.decisions[0].streak, 3);
});

test('raw argument text is parsed; text that is not JSON is a malformed call identified by it', () => {
  const session = new DoomLoopSession();
  const out = [1, 2, 3].map((i) =>
    session.onResponse({ calls: [{ id: `r${i}`, toolName: 'run', args: '{"cmd":"ls"}' }, { id: `m${i}`, toolName: 'run', args: '{oops' }] }),
  );
  assert.equal(out[2].decisions[0].action, 'refuse');
  assert.equal(out[2].decisions[1].malformed, true);
  assert.equal(out[2].decisions[1].action, 'refuse');
  assert.notEqual(out[0].decisions[0].fingerprint, out[0].decisions[1].fingerprint);
});

test('loop keys: a function (host-resolved), a field list and false (resolved in the core)', () => {
  const session = new DoomLoopSession({
    loopKeys: { get_invoice: ({ invoice_id }) => invoice_id.trim().toUpperCase(), shell: ['command'], now: false },
  });
  let last;
  for (let i = 1; i <= 3; i++) {
    last = session.onResponse({
      calls: [
        { id: `i${i}`, toolName: 'get_invoice', args: { invoice_id: i % 2 ? ' inv-1 ' : 'INV-1' } },
        { id: `s${i}`, toolName: 'shell', args: { command: 'ls', ts: i } },
        { id: `n${i}`, toolName: 'now', args: {} },
      ],
    });
  }
  assert.deepEqual(last.decisions.map((d) => d.action), ['refuse', 'refuse', 'run']);
  assert.equal(last.decisions[2].exempt, true);
  // The same identities as the monitor's fingerprints of the same key material.
  const monitor = new DoomLoopMonitor(resolveDoomLoopOption(true));
  assert.equal(last.decisions[0].fingerprint, monitor.recordToolCallSync('get_invoice', 'INV-1', 1).fingerprint);
  monitor.free();
});

test('results: outcome-aware streaks, an async loopOutputKey awaited, a second delivery ignored', async () => {
  const page = (session, i) => session.onResponse({ calls: [{ id: `p${i}`, toolName: 'scroll_down', args: {} }] }).decisions[0];
  const sync = new DoomLoopSession({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION, loopOutputKeys: { scroll_down: (r) => r.lines } });
  const asyncKeyed = new DoomLoopSession({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION, loopOutputKeys: { scroll_down: async (r) => r.lines } });
  for (let i = 1; i <= 8; i++) {
    assert.equal(page(sync, i).action, 'run');
    assert.equal(page(asyncKeyed, i).action, 'run', `async page ${i}`);
    sync.onResult(`p${i}`, { lines: `${i}00` });
    sync.onResult(`p${i}`, { lines: `${i}00` });
    const pending = asyncKeyed.onResult(`p${i}`, { lines: `${i}00` });
    assert.equal(typeof pending.then, 'function');
    await pending;
  }
  // Every page is new: observed at most, never refused.
  assert.ok(sync.verdicts().every((v) => v.action === 'observe'), JSON.stringify(sync.verdicts()));
  assert.deepEqual(asyncKeyed.verdicts(), sync.verdicts());
  // A thrown error is `{ error: message }` and a failure; an unknown id is ignored.
  const failing = new DoomLoopSession({ doomLoop: { failures: true } });
  for (let i = 1; i <= 3; i++) {
    failing.onResponse({ calls: [{ id: `d${i}`, toolName: 'deploy', args: { v: i } }] });
    failing.onResult(`d${i}`, undefined, { error: new Error('timeout') });
    assert.equal(failing.onResult('nope', {}), null);
  }
  assert.equal(failing.getState().beyond.failures.deploy, 3);
});

test('a result is read only when a configured detector reads outcomes', () => {
  // A getter counts the reads: the defaults (and failure streaks, which
  // need only failed-or-not) never touch a result, however large.
  let reads = 0;
  const result = { get content() { reads += 1; return 'x'.repeat(100_000); } };
  for (const doomLoop of [true, { failures: true }]) {
    const session = new DoomLoopSession({ doomLoop });
    session.onResponse({ calls: [{ id: 'r1', toolName: 'read_file', args: { path: 'a.txt' } }] });
    const { value, warnings } = withWarnings(() => session.onResult('r1', result));
    assert.equal(value, null);
    assert.deepEqual(warnings, []);
    assert.equal(reads, 0, JSON.stringify(doomLoop));
  }
  // The progress ledger reads it: the same result for changing arguments.
  const ledger = new DoomLoopSession({ doomLoop: { ledger: true } });
  for (let i = 1; i <= 4; i++) {
    ledger.onResponse({ calls: [{ id: `l${i}`, toolName: 'read_file', args: { path: `a${i}.txt` } }] });
    ledger.onResult(`l${i}`, result);
  }
  assert.ok(reads >= 4, `${reads} reads`);
  assert.ok(ledger.verdicts().length > 0, 'the ledger saw the repeated result');
  // The monitor's recordToolResultSync the same way.
  reads = 0;
  for (const [option, read] of [[true, false], [{ failures: true }, false], [{ ledger: true }, true]]) {
    const monitor = new DoomLoopMonitor(resolveDoomLoopOption(option));
    const record = monitor.recordToolCallSync('read_file', { path: 'a.txt' }, 1);
    const before = reads;
    monitor.recordToolResultSync('read_file', record.fingerprint, result, false, 1);
    assert.equal(reads > before, read, JSON.stringify(option));
    monitor.free();
  }
});

test('a capability the host lacks skips its rung with one warning', () => {
  const { value: session, warnings } = withWarnings(() => new DoomLoopSession({ capabilities: { refuse: false } }));
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /cannot refuse a tool call: the ladder rung "block" \(3\) is skipped/);
  const third = [1, 2, 3].map((i) => session.onResponse({ calls: [invoice(`c${i}`)] }))[2];
  assert.equal(third.decisions[0].action, 'run');
  assert.equal(third.decisions[0].verdict.action, 'observe');
});

test('state: the reference shape, resumed by a session and by the reference monitor', () => {
  const first = new DoomLoopSession();
  for (let i = 1; i <= 4; i++) first.onResponse({ calls: [invoice(`c${i}`)] });
  const state = JSON.parse(JSON.stringify(first.getState()));
  assert.deepEqual(Object.keys(state), ['tools', 'session']);
  assert.equal(state.tools.get_invoice.streak, 4);
  const resumed = new DoomLoopSession({ state });
  const fifth = resumed.onResponse({ calls: [invoice('c5')] });
  assert.equal(fifth.decisions[0].streak, 5);
  assert.equal(fifth.round, 5);
  const monitor = new DoomLoopMonitor(resolveDoomLoopOption(true), state);
  assert.equal(monitor.recordToolCallSync('get_invoice', { invoice_id: 'INV-2291' }, 99).streak, 5);
  monitor.free();
  // A corrupt blob: the reference's warning, a fresh session.
  const { value: corrupt, warnings } = withWarnings(() => new DoomLoopSession({ state: 'garbage' }));
  assert.equal(warnings.length, 1);
  assert.equal(corrupt.onResponse({ calls: [invoice('x')] }).decisions[0].action, 'run');
});

test('detection off: every call runs; an internal error turns the session observe-only with one warning', () => {
  const off = new DoomLoopSession({ doomLoop: false });
  assert.equal(off.active, false);
  assert.equal(off.onResponse({ calls: [invoice('a')] }).decisions[0].action, 'run');
  assert.deepEqual(off.getState(), { tools: {} });

  const session = new DoomLoopSession();
  const hostile = { id: 'h', get toolName() { throw new Error('boom'); }, args: {} };
  const { value, warnings } = withWarnings(() => [session.onResponse({ calls: [hostile] }), session.onResponse({ calls: [hostile] })]);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /detection is off for the rest of this run/);
  assert.equal(value[0].decisions[0].action, 'run');
  assert.equal(session.active, false);
  assert.throws(() => new DoomLoopSession({ doomLoop: { escalation: null } }), TypeError);
});

// ---- issue 20 item 6 ----

test('regression: recordToolResultSync takes the same round keys as recordToolCallSync (outcomes_nonnumber_rounds.mjs)', () => {
  const config = resolveDoomLoopOption(RECOMMENDED_DOOM_LOOP_OPTION);
  const actions = (roundOf) => {
    const monitor = new DoomLoopMonitor(config);
    const out = [];
    for (let i = 1; i <= 6; i++) {
      const round = roundOf(i);
      const record = monitor.recordToolCallSync('scroll_down', {}, round);
      out.push(record.verdict?.action ?? 'ok');
      monitor.recordToolResultSync('scroll_down', record.fingerprint, `lines ${i * 100 - 99}-${i * 100}`, false, round);
    }
    monitor.free();
    return out.join(' ');
  };
  assert.equal(actions((i) => `turn-${i}`), actions((i) => i));
  assert.equal(actions((i) => ({ turn: i })), actions((i) => i));
});

/** A small deterministic PRNG (mulberry32). */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('regression: replay and the live session agree on random scripts with in-round duplicates (replay_duplicate_in_round_outcomes.mjs)', () => {
  const options = [RECOMMENDED_DOOM_LOOP_OPTION, { outcomes: true, failures: true, ledger: true }, true];
  let compared = 0;
  for (let seed = 1; seed <= 300; seed++) {
    const random = prng(seed);
    const pick = (n) => Math.floor(random() * n);
    const rounds = Array.from({ length: 8 }, () => ({
      calls: Array.from({ length: 1 + pick(3) }, () => ({
        toolName: ['p', 'q'][pick(2)],
        args: { x: pick(2) },
        result: `r${pick(3)}`,
        // The rounds format marks a failed call with `error: true`.
        error: pick(4) === 0,
      })),
    }));
    const doomLoop = options[seed % options.length];
    const timeline = replayEntry.replayTranscript({ doomLoop, rounds });
    // Live: the session an adapter runs — a round's calls, then the results of those that ran.
    const session = new DoomLoopSession({ doomLoop });
    const live = [];
    for (const [r, round] of rounds.entries()) {
      const calls = round.calls.map((call, c) => ({ id: `r${r}c${c}`, toolName: call.toolName, args: call.args }));
      const { decisions, halt } = session.onResponse({ calls });
      const results = decisions.map((decision, c) =>
        decision.action === 'run' ? session.onResult(decision.id, round.calls[c].result, { failed: round.calls[c].error }) : null,
      );
      live.push(decisions.map((decision, c) => ({ decision, result: results[c] })));
      if (halt !== null || session.haltVerdict() !== null) break;
    }
    assert.equal(timeline.rounds.length, live.length, `seed ${seed}: halting round`);
    timeline.rounds.forEach((round, r) => {
      round.calls.forEach((call, c) => {
        const { decision, result } = live[r][c];
        const stronger = result && (!decision.verdict || ['observe', 'steer', 'escalate', 'block', 'stop'].indexOf(result.action) > ['observe', 'steer', 'escalate', 'block', 'stop'].indexOf(decision.verdict.action)) ? result : decision.verdict;
        assert.equal(call.streak, decision.streak, `seed ${seed} r${r + 1}c${c + 1}: streak`);
        assert.equal(call.duplicateInRound, decision.duplicateInRound, `seed ${seed} r${r + 1}c${c + 1}: duplicate`);
        assert.deepEqual(call.verdict, stronger, `seed ${seed} r${r + 1}c${c + 1}: verdict`);
        compared++;
      });
    });
    assert.deepEqual(timeline.stopVerdict, session.haltVerdict(), `seed ${seed}: stop verdict`);
    session.free();
  }
  assert.ok(compared > 1000, `${compared} calls compared`);
});

test('regression: restore() of a value that is not a state starts the run over (the session fuzz target)', () => {
  // It used to keep the detector's streaks while the session's rounds
  // started over, so a repeated call counted as an in-round duplicate.
  for (const blob of [null, [], 'text', 7]) {
    const live = new DoomLoopSession();
    live.onResponse({ calls: [invoice('a')] });
    const { warnings } = withWarnings(() => live.restore(blob));
    assert.equal(warnings.length, 1, `one warning for ${JSON.stringify(blob)}`);
    const fresh = withWarnings(() => new DoomLoopSession({ state: blob })).value;
    assert.deepEqual(live.getState(), fresh.getState());
    for (let round = 1; round <= 3; round++) {
      const [decision] = live.onResponse({ calls: [invoice(`r${round}`)] }).decisions;
      assert.deepEqual(decision, fresh.onResponse({ calls: [invoice(`r${round}`)] }).decisions[0]);
      assert.equal(decision.duplicateInRound, false);
      assert.equal(decision.streak, round);
    }
    live.free();
    fresh.free();
  }
});

test('regression: a pending escalation survives getState() and a resume (the session fuzz target)', () => {
  // A run paused between the escalate verdict and its next request (an
  // approval, a serverless step): the guidance persisted, the escalation did
  // not, so the resumed request said "runs on a stronger model" and did not.
  const doomLoop = { ladder: { observe: 2, steer: 3, escalate: 4, block: 5, stop: 6 }, escalation: { model: 'big', maxEscalations: 1 } };
  const live = new DoomLoopSession({ doomLoop });
  for (let i = 1; i <= 4; i++) live.onResponse({ calls: [invoice(`c${i}`)] });
  const resumed = new DoomLoopSession({ doomLoop, state: JSON.parse(JSON.stringify(live.getState())) });
  const request = live.nextRequest();
  assert.equal(request.model, 'big');
  assert.deepEqual(resumed.nextRequest(), request);
  assert.deepEqual(resumed.getState(), live.getState());
  assert.equal(resumed.nextRequest().model, null, 'taken once');
  live.free();
  resumed.free();
});

test('arguments are fingerprinted from their text as the core reads a response, and decide exactly as the tree decides them', () => {
  // Without a loopKey, a call's identity is taken straight from its
  // arguments' lowered text (wasm/src/session.rs, FastRead); an identity
  // loopKey function makes the core take the same arguments as a tree. The
  // two sessions must agree on everything, light arguments and heavy,
  // exotic values and names with lone surrogates included.
  let chain = { leaf: 'end' };
  for (let depth = 0; depth < 30; depth++) chain = { level: depth, child: chain, tags: ['a', 'b'] };
  const heavy = [
    Object.fromEntries(Array.from({ length: 40 }, (_, k) => [`key${k}`, k % 2 ? `v\n"${k}"` : k * 0.1])),
    chain,
    { path: 'src/a.ts', content: 'const a = "b";\n'.repeat(200) },
    { text: 'x'.repeat(2000), lone: '\ud800 lone', nested: { z: [1, 2, { y: null }], a: true } },
    { list: Array.from({ length: 25 }, (_, k) => k) },
    { command: 'ls -la', cwd: '/tmp' },
    {},
    [1, , undefined, -0, 1e21, 0.1 + 0.2, 5e-7, 'é\u2028😀'],
    { b: undefined, a: [undefined], é: { '10': 1, 2: 2, '': null } },
    'a bare string',
    42,
    { big: 12345678901234567890, tiny: -1.5e-300 },
  ];
  const calls = (round, name) =>
    heavy.map((args, k) => ({ id: `${name}${round}-${k}\udc00`, toolName: k === 4 ? 'bad\ud800name' : `tool${k % 3}`, args: clone(args) }));
  const loopKeys = Object.fromEntries(['tool0', 'tool1', 'tool2', 'bad\ud800name'].map((name) => [name, (args) => args]));
  const fast = new DoomLoopSession({});
  const tree = new DoomLoopSession({ loopKeys });
  for (let round = 1; round <= 7; round++) {
    const a = fast.onResponse({ calls: calls(round, 'c') });
    const b = tree.onResponse({ calls: calls(round, 'c') });
    assert.deepEqual(a, b, `round ${round}`);
    if (round === 1) {
      for (const [k, decision] of a.decisions.entries()) {
        const name = calls(1, 'c')[k].toolName;
        if (name.isWellFormed()) assert.equal(decision.fingerprint, main.fingerprintToolCallSync(name, heavy[k]), `call ${k}`);
      }
    }
  }
  assert.ok(fast.haltVerdict() !== null, 'the loop was stopped');
  assert.deepEqual(fast.getState(), tree.getState());
  // Would-halt asks lower the same calls (a call object is lowered once).
  const next = new DoomLoopSession({});
  const round = calls(1, 'w');
  assert.equal(next.wouldHalt(round), false);
  assert.deepEqual(next.onResponse({ calls: round }).decisions.map((d) => d.streak), heavy.map(() => 1));
});

test('regression: a response the core cannot read tree-free (a malformed call beside the rest) decides as one it can', () => {
  // One malformed call sends the whole response down the tree path; the
  // other calls' decisions must be the ones the fast read gives them.
  const args = [{ command: 'ls' }, { path: 'a.ts', content: 'x'.repeat(4096) }, [1, 2, { z: 'é' }]];
  const calls = (round, extra) => [
    ...args.map((a, k) => ({ id: `r${round}-${k}`, toolName: `t${k}`, args: clone(a) })),
    // Different each round: it never loops itself.
    ...(extra ? [{ id: `r${round}-bad`, toolName: 'broken', args: `{not json ${round}` }] : []),
  ];
  const fast = new DoomLoopSession({});
  const tree = new DoomLoopSession({});
  for (let round = 1; round <= 6; round++) {
    const a = fast.onResponse({ calls: calls(round, false) });
    const b = tree.onResponse({ calls: calls(round, true) });
    assert.deepEqual(a.decisions, b.decisions.slice(0, args.length), `round ${round}`);
    assert.equal(b.decisions[args.length].malformed, true);
    assert.deepEqual(a.halt, b.halt);
    if (round === 1) {
      for (const [k, decision] of a.decisions.entries()) {
        assert.equal(decision.fingerprint, main.fingerprintToolCallSync(`t${k}`, args[k]));
      }
    }
  }
  assert.ok(fast.haltVerdict() !== null, 'the loop was stopped');
  // One call seen alone takes the same read.
  const single = new DoomLoopSession({});
  assert.equal(single.onCall({ id: 'x', toolName: 't1', args: clone(args[1]) }).fingerprint, main.fingerprintToolCallSync('t1', args[1]));
});
