// Small plain values fingerprinted without wasm (js/lower.js,
// canonicalPlainText): in Node, once node:crypto is in use, the shim writes
// a small plain value's canonical JSON itself and hashes it with
// `crypto.hash`. That text must be exactly the reference canonicalizer's,
// and the fingerprint exactly the core's, for every value it takes — and it
// must decline every value that is not plain data. A differential property
// test: seeded random values through the fast path, a naive canonicalizer
// written from the reference's definition (Object.keys, sorted by UTF-16
// code units, JSON.stringify for strings and numbers) and the core's own
// path (the wasm string API, which never takes the shortcut).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { types } from 'node:util';
import { runDocument } from './corpus.mjs';
import { canonicalPlainText, lowerKeyMaterial, setProxyCheck, CANONICAL_IN_JS_VALUES, NUMBER_WORK, RAW_STRING_MIN } from '../../pkg/lower.js';

const require = createRequire(import.meta.url);
const pkg = require('../../pkg/node.cjs');
// The glue the Node entry installed (one instance per process).
const glue = require('../../pkg/doom_loop_node.cjs');
// This copy of the shim's lowering (pkg/lower.js as an ES module) gets the
// Proxy test the Node entry installs into its own.
setProxyCheck(types.isProxy);

/** The reference canonicalizer's text, naively: throws where it throws. */
function naive(value, depth = 0) {
  if (depth > 64) throw new Error('too deep');
  if (value === null || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('non-finite');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : naive(item, depth + 1))).join(',')}]`;
  const keys = Object.keys(value)
    .filter((key) => value[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${naive(value[key], depth + 1)}`).join(',')}}`;
}

const sha = (text) => createHash('sha256').update(new TextEncoder().encode(text)).digest('hex');
/** The core's fingerprint: the lowered value through the wasm string API. */
const viaCore = (tool, value) => glue.fingerprintToolCall(JSON.stringify(tool), lowerKeyMaterial(value));

/** A seeded xorshift generator, so a failure replays. */
function rng(seed) {
  let state = BigInt(seed) || 1n;
  const next = () => {
    state ^= (state << 13n) & 0xffffffffffffffffn;
    state ^= state >> 7n;
    state ^= (state << 17n) & 0xffffffffffffffffn;
    return Number(state & 0xffffffffn) / 2 ** 32;
  };
  const below = (n) => Math.floor(next() * n);
  return { next, below, pick: (items) => items[below(items.length)] };
}

// Keys on the edges: integer-like (listed first by JS, sorted as text by
// the reference), `__proto__` and other Object.prototype names, escapes,
// lone surrogates, astral and BMP-above-surrogate characters (whose UTF-16
// order differs from their code points'), the empty key.
const KEYS = ['', 'a', 'b', 'B', 'z', 'aa', 'a0', '0', '1', '9', '10', '01', '-1', '4294967294', '4294967295', '1.5', '__proto__', 'constructor', 'toString', 'toJSON_', 'map', 'é', 'É', '\uffff', '\ue000', '😀', '\ud800', '\udc00x', 'a"b', 'a\\b', '\n', '\u0001', '\u2028', 'key with spaces'];
const STRING_UNITS = ['a', 'Z', ' ', '"', '\\', '/', '\n', '\t', '\u0000', '\u001f', '\u007f', 'é', '€', '\u2028', '\ud83d\ude00', '\ud800', '\udfff', '<', '}'];
const NUMBERS = [0, -0, 1, -1, 7, 42, 30000, 2 ** 31, 2 ** 53, 2 ** 53 + 2, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, 0.1, 0.75, 0.1 + 0.2, -1234.5678, 123456789012345680000];

function randomString(r) {
  const length = r.pick([0, 1, 3, 8, 20, 63, 64, 65, 100]);
  let out = '';
  for (let i = 0; i < length; i++) out += r.pick(STRING_UNITS);
  return out;
}

function randomNumber(r) {
  if (r.next() < 0.5) return r.pick(NUMBERS);
  // Any finite double: random bits.
  const view = new DataView(new ArrayBuffer(8));
  view.setUint32(0, Math.floor(r.next() * 2 ** 32));
  view.setUint32(4, Math.floor(r.next() * 2 ** 32));
  const x = view.getFloat64(0);
  return Number.isFinite(x) ? x : r.next() * 1e6;
}

/** A random plain value: objects with null or ordinary prototypes, arrays, every kind of leaf. */
function randomPlain(r, depth = 0) {
  const roll = r.next();
  if (depth > 4 || roll < 0.45) {
    switch (r.below(5)) {
      case 0:
        return randomString(r);
      case 1:
        return randomNumber(r);
      case 2:
        return r.next() < 0.5;
      case 3:
        return null;
      default:
        return r.pick(KEYS);
    }
  }
  if (roll < 0.7) return Array.from({ length: r.below(5) }, () => randomPlain(r, depth + 1));
  const object = r.next() < 0.15 ? Object.create(null) : {};
  const members = r.next() < 0.1 ? 17 + r.below(30) : r.below(7);
  for (let i = 0; i < members; i++) {
    // Defined, not assigned: `__proto__` is an own key, as JSON.parse makes it.
    const key = r.next() < 0.8 ? r.pick(KEYS) : randomString(r);
    Object.defineProperty(object, key, { value: randomPlain(r, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return object;
}

/** How many values (leaves and containers) `value` holds, a number beyond the 32-bit integers counted as NUMBER_WORK. */
const valuesIn = (value) => {
  if (value !== null && typeof value === 'object') return 1 + Object.values(value).reduce((sum, item) => sum + valuesIn(item), 0);
  return typeof value === 'number' && (value | 0) !== value ? NUMBER_WORK : 1;
};

test('small plain values: the canonical JSON written in JS is the reference canonicalizer\'s, and the fingerprint the core\'s', () => {
  const r = rng(0x5eed);
  let taken = 0;
  for (let i = 0; i < 3000; i++) {
    const value = randomPlain(r);
    const tool = r.pick(['edit', 'bash', 'tool with space', 'é', '']);
    const text = canonicalPlainText(value);
    const expected = naive(value);
    // Every generated string is shorter than RAW_STRING_MIN: only the size
    // declines (an array whose elements would cost what its first did, past
    // the budget, is declined at its first element).
    if (valuesIn(value) > CANONICAL_IN_JS_VALUES) assert.equal(text, undefined, `case ${i}: declined when large`);
    if (text !== undefined) {
      taken++;
      assert.equal(text, expected, `case ${i}`);
    }
    const fingerprint = pkg.fingerprintToolCallSync(tool, value);
    assert.equal(fingerprint, sha(`${tool}\n${expected}`), `case ${i}: the reference's fingerprint`);
    assert.equal(fingerprint, viaCore(tool, value), `case ${i}: the core's fingerprint`);
  }
  assert.ok(taken > 2000, `most generated values are small (${taken} taken)`);
});

test('a tool name with a lone surrogate is hashed as U+FFFD, as the reference\'s TextEncoder does', () => {
  for (const tool of ['\ud800', 'a\udc00b', 'x\ud83d']) {
    const value = { b: 1, a: ['x'] };
    const expected = sha(`${tool}\n{"a":["x"],"b":1}`);
    assert.equal(pkg.fingerprintToolCallSync(tool, value), expected);
    assert.equal(viaCore(tool, value), expected);
  }
});

test('what is not small plain data is declined, and fingerprinted (or refused) as the core does', () => {
  class Point {
    constructor() {
      this.x = 1;
    }
  }
  const nest = (levels) => {
    let value = 1;
    for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { k: value };
    return value;
  };
  const values = {
    getter: {
      a: 1,
      get b() {
        return 2;
      },
    },
    'getter on an index': Object.defineProperty([1, 2], 1, { get: () => 3, enumerable: true }),
    proxy: new Proxy({ a: 1 }, {}),
    'proxy inside': { a: new Proxy([1], {}) },
    undefined: { a: undefined, b: 1 },
    'undefined in an array': [1, undefined],
    function: { f() {} },
    symbol: { s: Symbol('s') },
    NaN: { n: NaN },
    Infinity: [Infinity],
    bigint: { b: 1n },
    hole: [1, , 2],
    'class instance': { p: new Point() },
    Date: { d: new Date(0) },
    'boxed string': { s: Object('x') },
    'own toJSON': { toJSON: () => 1 },
    'array toJSON': Object.assign([1], { toJSON: () => 2 }),
    cycle: (() => {
      const a = { b: 1 };
      a.self = a;
      return a;
    })(),
    '65 levels': nest(65),
    [`a string of ${RAW_STRING_MIN} units`]: { s: 'x'.repeat(RAW_STRING_MIN) },
    [`${CANONICAL_IN_JS_VALUES} values and one more`]: Array.from({ length: CANONICAL_IN_JS_VALUES }, (_, i) => i),
    [`${CANONICAL_IN_JS_VALUES} values and one more, in objects`]: { a: Array.from({ length: CANONICAL_IN_JS_VALUES / 2 }, (_, i) => ({ i })), b: 1 },
    'more decimals than the budget prints': Array.from({ length: CANONICAL_IN_JS_VALUES / NUMBER_WORK }, (_, i) => i + 0.5),
  };
  for (const [name, value] of Object.entries(values)) {
    assert.equal(canonicalPlainText(value), undefined, `${name}: declined`);
    let ours;
    let core;
    try {
      ours = pkg.fingerprintToolCallSync('t', value);
    } catch (error) {
      ours = `threw ${error.message}`;
    }
    try {
      core = viaCore('t', value);
    } catch (error) {
      core = `threw ${error.message}`;
    }
    assert.equal(ours, core, name);
  }
  // Their edges are taken: 64 levels, a string one unit shorter, exactly the budget.
  assert.equal(canonicalPlainText(nest(64)), naive(nest(64)));
  assert.equal(canonicalPlainText({ s: 'x'.repeat(RAW_STRING_MIN - 1) }), naive({ s: 'x'.repeat(RAW_STRING_MIN - 1) }));
  const full = Array.from({ length: CANONICAL_IN_JS_VALUES - 1 }, (_, i) => i);
  assert.equal(canonicalPlainText(full), naive(full));
  const decimals = Array.from({ length: CANONICAL_IN_JS_VALUES / NUMBER_WORK - 1 }, (_, i) => i + 0.5);
  assert.equal(canonicalPlainText(decimals), naive(decimals));
});

test('a polluted Object.prototype (an enumerable key, a toJSON) turns the shortcut off', () => {
  const value = { b: 1, a: 2 };
  for (const key of ['extra', 'toJSON']) {
    Object.defineProperty(Object.prototype, key, { value: () => 0, enumerable: key === 'extra', configurable: true, writable: true });
    try {
      assert.equal(canonicalPlainText(value), undefined, key);
    } finally {
      delete Object.prototype[key];
    }
  }
  assert.equal(canonicalPlainText(value), '{"a":2,"b":1}');
});

test('the conformance corpus passes with node:crypto in use, where its small plain values skip wasm', () => {
  // `make conformance` runs it in a process that never loads node:crypto (so
  // through the core); this process has it loaded (createHash above).
  const root = new URL('../../vectors/', import.meta.url);
  const files = [new URL('upstream-vectors.json', root), ...readdirSync(new URL('reference/', root)).sort().map((f) => new URL(`reference/${f}`, root))];
  let taken = 0;
  const counting = { ...pkg, fingerprintToolCallSync: (tool, value) => ((taken += canonicalPlainText(value) !== undefined ? 1 : 0), pkg.fingerprintToolCallSync(tool, value)) };
  for (const file of files) {
    const result = runDocument(counting, JSON.parse(readFileSync(file, 'utf8')), file.pathname);
    assert.deepEqual(result.failures.slice(0, 5), [], file.pathname);
    assert.ok(result.passed > 0, file.pathname);
  }
  assert.ok(taken > 100, `the corpus's fingerprints took the shortcut (${taken})`);
});


test('a session fingerprints small plain calls in the shim and decides exactly as when the core reads every call as a tree', () => {
  // The same random run through two sessions: one as adapters use it (small
  // plain arguments fingerprinted in JS, the core handed the fingerprint),
  // one whose identity loopKey functions make the core take every call's
  // arguments as a tree. Mixed responses (a long string beside small calls,
  // a malformed call, a tool with a data-form loop key, a tool name with a
  // lone surrogate) included; each call alone (onCall) and wouldHalt too.
  const crypto = require('node:crypto');
  const realHash = crypto.hash;
  let hashed = 0;
  crypto.hash = (...args) => (hashed++, realHash(...args));
  try {
    const r = rng(0xca11);
    // Objects, as SDKs hand arguments over (a loopKey answering a primitive exempts the call).
    const pool = Array.from({ length: 6 }, () => ({ v: randomPlain(r), w: randomPlain(r) }));
    const tools = ['a', 'b', 'c', 'keyed', '\u00e9', 'x\ud800'];
    const identity = (args) => args;
    const fast = new pkg.DoomLoopSession({ loopKeys: { keyed: ['k'] } });
    const tree = new pkg.DoomLoopSession({ loopKeys: { a: identity, b: identity, c: identity, '\u00e9': identity, 'x\ud800': identity, keyed: ['k'] } });
    const copy = (call) => ({ ...call, args: typeof call.args === 'string' ? call.args : structuredClone(call.args) });
    let refused = 0;
    for (let round = 1; round <= 80; round++) {
      const calls = Array.from({ length: 1 + r.below(4) }, (_, k) => {
        const roll = r.next();
        const args = roll < 0.08 ? { content: 'x'.repeat(2000 + round) } : roll < 0.12 ? `{not json ${round}` : roll < 0.2 ? { k: r.below(3), other: round } : r.pick(pool);
        return { id: `r${round}-${k}`, toolName: r.pick(tools), args: typeof args === 'string' ? args : structuredClone(args) };
      });
      if (round % 9 === 0) {
        fast.beginRound();
        tree.beginRound();
        for (const call of calls) assert.deepEqual(fast.onCall(call), tree.onCall(copy(call)), `round ${round}, one call alone`);
        fast.endRound();
        tree.endRound();
        continue;
      }
      if (round % 7 === 0) assert.equal(fast.wouldHalt(calls), tree.wouldHalt(calls.map(copy)), `would halt, round ${round}`);
      const a = fast.onResponse({ calls });
      const b = tree.onResponse({ calls: calls.map(copy) });
      assert.deepEqual(a, b, `round ${round}`);
      refused += a.decisions.filter((d) => d.action === 'refuse').length;
    }
    assert.deepEqual(fast.getState(), tree.getState());
    assert.ok(hashed > 60, `the shim fingerprinted calls itself (${hashed})`);
    assert.ok(refused > 0, `loops were refused (${refused})`);
    fast.free();
    tree.free();
  } finally {
    crypto.hash = realHash;
  }
});
