// Plain key material with long strings (RAW_STRING_MIN code units or more,
// js/lower.js) crosses into wasm raw: text with the bare word `raw` in
// each such string's place and the strings' UTF-8 beside it, escaped by
// the core (`write_json_str`) instead of `JSON.stringify`. Every answer
// must be the one the ordinary lowering gives — `canonicalize` + SHA-256
// of the UTF-8 bytes, as the reference computes — on both sides of the
// threshold, at any depth, for strings the buffer must grow for, and
// never for values that are not plain data (a getter must run exactly as
// the reference runs it).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { afterEach, test } from 'node:test';
import canonicalize from 'canonicalize';
import * as pkg from '../../pkg/node.mjs';
import { RAW_STRING_MIN as MIN } from '../../pkg/lower.js';

// The raw form is an optimisation with a fallback: were the core to refuse
// it (a layout mismatch between js/core.js and wasm/src/lib.rs), the
// answers would stay right and only a warning would tell. So every test
// here also asserts that nothing was said.
const warnings = [];
console.warn = (...args) => warnings.push(args.join(' '));
afterEach(() => assert.deepEqual(warnings.splice(0), [], 'the core refused the raw form'));

const sha = (text) => createHash('sha256').update(text).digest('hex');
const expected = (tool, value) => sha(`${tool}\n${canonicalize(value)}`);
const escapes = 'say "hi"\n\t\\ \u0001\u001f é€😀 \u2028';
/** `n` UTF-16 code units of `unit` repeated, never ending in half a surrogate pair. */
function long(n, unit = escapes) {
  const text = unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  return /[\ud800-\udbff]$/.test(text) ? `${text.slice(0, -1)}x` : text;
}

test('long strings anywhere in plain data fingerprint as their JSON literals would', () => {
  const shapes = {
    'top-level string': long(5000),
    'an edit': { file_path: 'src/a.ts', old_string: long(MIN), new_string: long(9000) },
    'nested in arrays and objects': { z: [long(2000), 1, 'short', { q: long(1100), n: null }], a: { b: [true, long(3000)] } },
    'unsorted keys around it': { zeta: 1, content: long(4000), alpha: [2, 3], mid: { y: long(1500), x: 0.5 } },
    'a long key (keys never cross raw)': { [long(3000)]: long(3000), k: 'v' },
    'the word raw as key and value': { raw: 'raw', rawr: ['raw', long(2000, 'raw ')] },
    'strings only': [long(1200), long(1300), long(1400), long(1500)],
  };
  for (const [name, value] of Object.entries(shapes)) {
    assert.equal(pkg.fingerprintToolCallSync('edit', value), expected('edit', value), name);
  }
});

test('lengths around the threshold, in ASCII, multi-byte and astral text', () => {
  for (const unit of ['x', 'é', '€', '😀', '"\n']) {
    for (const length of [MIN - 1, MIN, MIN + 1, 4 * MIN]) {
      const value = { content: long(length, unit) };
      assert.equal(pkg.fingerprintToolCallSync('write', value), expected('write', value), `${JSON.stringify(unit)}, ${length} units`);
    }
  }
});

test('strings that outgrow the I/O buffer, several in one call', () => {
  // Three-byte UTF-8 overflows the first, one-byte-per-unit reservation:
  // the writer must retry with room for all of it, after what it wrote.
  const value = { a: long(3 << 20, '€'), b: long(2 << 20, 'ascii '), c: [long(1 << 20, '😀')] };
  assert.equal(pkg.fingerprintToolCallSync('write', value), expected('write', value));
  const small = { command: 'ls' };
  assert.equal(pkg.fingerprintToolCallSync('bash', small), expected('bash', small), 'the next ordinary call');
});

test('a long string with a lone surrogate takes the ordinary form (UTF-8 cannot carry it)', () => {
  const value = { content: `${long(3000)}\ud800${long(10)}` };
  const ordinary = sha(`edit\n${pkg.canonicalizeKeyMaterial(value)}`);
  assert.equal(pkg.fingerprintToolCallSync('edit', value), ordinary);
  assert.match(pkg.canonicalizeKeyMaterial(value), /\\ud800/);
});

test('recordToolCall takes the raw form too: same fingerprints, same streaks, same verdicts', () => {
  const raw = new pkg.DoomLoopMonitor(pkg.resolveDoomLoopOption(true));
  const ordinary = new pkg.DoomLoopMonitor(pkg.resolveDoomLoopOption(true));
  const edit = () => ({ file_path: 'src/a.ts', new_string: long(20000) });
  for (let round = 1; round <= 5; round++) {
    const record = raw.recordToolCallSync('edit', edit(), round);
    // A short tool call with the same fingerprint path for reference: the
    // long string given as its canonical JSON, read through the string API.
    const twin = ordinary.recordToolCallSync('edit', JSON.parse(JSON.stringify(edit())), round);
    assert.equal(record.fingerprint, expected('edit', edit()), `round ${round}`);
    assert.deepEqual(record, twin, `round ${round}`);
  }
  assert.deepEqual(raw.getState(), ordinary.getState());
  assert.equal(raw.getState().tools.edit.streak, 5);
});

test('values that are not plain data are read as the reference reads them, long strings or not', () => {
  let reads = 0;
  const value = {
    path: 'a.ts',
    get content() {
      reads++;
      return long(5000);
    },
  };
  assert.equal(pkg.fingerprintToolCallSync('edit', value), expected('edit', { path: 'a.ts', content: long(5000) }));
  // The reference reads each property twice: to drop undefined, then to write it.
  assert.equal(reads, 2);
  class Edit {
    constructor() {
      this.content = long(4000);
    }
    toJSON() {
      return 'never called';
    }
  }
  assert.equal(pkg.fingerprintToolCallSync('edit', new Edit()), expected('edit', { content: long(4000) }));
});

test('regression: multi-byte key material that fills the reserved room leaves the record options whole', () => {
  // writeCall reserved `3 × (tool + options) + material + 64` bytes and
  // wrote the options into whatever the material's UTF-8 left over: two-
  // byte text that just fitted cut `{"allowBlock":false}` short, the core
  // could not parse it and the record went through the string API. With a
  // raw string beside it, that fallback warns — so any cut shows here.
  // The buffer only grows, so each call's text outgrows the last call's
  // buffer (a pad of short strings, 3,000 code units more each time) and the
  // reservation is all the room there is; the count of two-byte characters
  // walks across the window where they leave under 20 bytes for the options.
  const monitor = new pkg.DoomLoopMonitor(pkg.resolveDoomLoopOption(true));
  for (let n = 100; n < 150; n++) {
    const pad = Array.from({ length: 3 * (n - 99) }, () => 'x'.repeat(1000));
    const value = { pad, short: 'é'.repeat(n), content: long(MIN) };
    const record = monitor.recordToolCallSync('edit', value, n, { allowBlock: false });
    assert.equal(record.fingerprint, expected('edit', value), `${n} two-byte characters`);
  }
});

test('the session engine (withDoomLoop, the framework adapters) takes the raw form too', () => {
  const session = new pkg.DoomLoopSession({ doomLoop: true });
  const edit = (i) => ({ file_path: `src/${i % 2}.ts`, old_string: long(1500), new_string: long(6000 + (i % 2)) });
  for (let round = 1; round <= 3; round++) {
    // Two calls a round, each with two raw strings: their order must hold across calls.
    const calls = [0, 1].map((i) => ({ id: `c${round}${i}`, toolName: 'edit', args: edit(i) }));
    assert.equal(session.wouldHalt(calls), false, `round ${round}`);
    const outcome = session.onResponse({ text: 'editing', calls });
    outcome.decisions.forEach((decision, i) => {
      assert.equal(decision.fingerprint, expected('edit', edit(i)), `round ${round}, call ${i}`);
      assert.equal(decision.streak, round);
    });
  }
  const single = session.onCall({ id: 'solo', toolName: 'write', args: { path: 'b.md', content: long(3000, '€') } });
  assert.equal(single.fingerprint, expected('write', { path: 'b.md', content: long(3000, '€') }));
  assert.equal(session.getState().tools.edit.fingerprint, expected('edit', edit(1)));
});

test('a long response text crosses raw into the session engine, before the calls’ raw strings', () => {
  const block = 'Let me try that again: the "build" fails é😀.\n\t';
  // Text that never repeats a block, with escapes and multi-byte characters.
  const prose = (n) => Array.from({ length: n }, (_, i) => `step ${i * 7919}: "é€😀"\n`).join('').slice(0, n);
  const texts = {
    'a repeating block (a verdict)': block.repeat(60),
    'just under the threshold': prose(MIN - 1),
    'at the threshold': prose(MIN),
    'long, no repetition': prose(20000),
    'long, with a lone surrogate (the ordinary lowering)': `${prose(3000)}\ud800`,
  };
  for (const [label, text] of Object.entries(texts)) {
    const session = new pkg.DoomLoopSession({ doomLoop: true });
    const monitor = new pkg.DoomLoopMonitor(pkg.resolveDoomLoopOption(true));
    // The calls' long strings come after the text's in the I/O buffer.
    const args = { file_path: 'a.ts', new_string: long(2000) };
    const outcome = session.onResponse({ text, calls: [{ id: 'c1', toolName: 'edit', args }] });
    assert.deepEqual(outcome.textVerdict ?? undefined, monitor.recordAssistantTextSync(text), label);
    // A text that stops the run halts its calls unrecorded; the text's
    // verdict above already shows the strings were not swapped.
    if (label.startsWith('a repeating')) assert.notEqual(outcome.halt, null, label);
    else assert.equal(outcome.decisions[0].fingerprint, expected('edit', args), label);
  }
  const session = new pkg.DoomLoopSession({ doomLoop: true });
  assert.notEqual(session.onResponse({ text: texts['a repeating block (a verdict)'], calls: [] }).textVerdict, null);
});

test('onText hands the text over as the monitor does: itself, or its JSON literal for a lone surrogate', () => {
  const block = 'Retrying the "same" step é😀\n';
  for (const text of [block.repeat(50), `${block.repeat(50)}\ud800`, `\udc00${block}`, '']) {
    const session = new pkg.DoomLoopSession({ doomLoop: true });
    const monitor = new pkg.DoomLoopMonitor(pkg.resolveDoomLoopOption(true));
    assert.deepEqual(session.onText(text) ?? undefined, monitor.recordAssistantTextSync(text), JSON.stringify(text.slice(0, 40)));
  }
});
