// Differential fuzz: the package against the reference module on random JS
// values (canonicalize, fingerprint; also values with getters, Proxies and
// toJSON, whose reads are compared), random state blobs (restore →
// getState → the next record) and random call scripts (declareRound,
// recordToolCall, recordAssistantText over random rounds). Prints every
// difference with its seed and exits 1 if there was one.
//
//   REF_MODULE=/path/to/reference/doom-loop.mjs node tests/differential/fuzz.mjs [seconds] [seed]
//
// REF_MODULE is the reference doom-loop.ts transpiled to an ES module by you
// (never committed). Without it the script says so and exits 0.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

if (!process.env.REF_MODULE) {
  console.log('differential fuzz skipped: set REF_MODULE to the reference doom-loop module (plain JS)');
  process.exit(0);
}
const R = await import(pathToFileURL(resolve(process.env.REF_MODULE)).href);
const W = await import(pathToFileURL(resolve(process.env.DOOM_LOOP_PKG ?? 'pkg', 'node.mjs')).href);
const seconds = Number(process.argv[2] ?? 20);
let seed = Number(process.argv[3] ?? Date.now() % 2 ** 31) >>> 0 || 1;
console.log(`differential fuzz: ${seconds} s, seed ${seed}`);

const next = () => {
  seed ^= seed << 13;
  seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  seed >>>= 0;
  return seed / 4294967296;
};
const int = (n) => Math.floor(next() * n);
const pick = (xs) => xs[int(xs.length)];
const STRINGS = ['', 'a', 'b', '__proto__', 'constructor', 'toString', '0', '1', '10', '\uD800', '\uDC00x', '😀', 'é', 'a\nb', '"', '\\', ' ', 'A', 'Z', 'z'];
const NUMBERS = [0, -0, 1, -1, 1.5, 1e21, 1e-7, 5e-324, 2 ** 53, -1e308, 0.1, 100, NaN, Infinity, -Infinity];

/**
 * A string around the 1,024 code units from which plain data's strings
 * cross into wasm raw (js/lower.js), made of the palette's pieces (lone
 * surrogates included, which keep the ordinary form).
 */
function longString() {
  const target = 1000 + int(60);
  let out = '';
  while (out.length < target) out += pick(STRINGS);
  return out;
}

function value(depth) {
  const r = int(depth > 4 ? 7 : 12);
  switch (r) {
    case 0: return pick(STRINGS);
    case 1: case 2: return pick(NUMBERS);
    case 3: return pick([true, false, null, undefined]);
    case 4: return pick([() => 1, Symbol('s'), 1n, new Date(0), new String('s'), new Number(2)]);
    case 5: return next() < 0.2 ? longString() : pick(STRINGS) + int(100);
    case 6: return int(10);
    case 7: case 8: {
      const a = [];
      const n = int(5);
      for (let i = 0; i < n; i++) a.push(value(depth + 1));
      if (next() < 0.1) a.length += 2; // trailing holes
      if (next() < 0.1) delete a[0];
      return a;
    }
    default: {
      const o = next() < 0.2 ? Object.create(null) : {};
      const n = int(5);
      for (let i = 0; i < n; i++) {
        // Defined, not assigned: `o.__proto__ = x` would set the prototype.
        Object.defineProperty(o, pick(STRINGS), { value: value(depth + 1), enumerable: true, writable: true, configurable: true });
      }
      return o;
    }
  }
}

// Values whose reads are observable: mostly plain data (the fast path's
// input) with, here and there, a getter (on an object member or an array
// index; its value changes from read to read), a Proxy logging its traps,
// a non-enumerable toJSON or a shared object. Each run starts a fresh log
// and counter, so both modules must make the same reads in the same order.
function readValue(depth, log) {
  const r = int(depth > 3 ? 5 : 10);
  if (r < 5) return value(3);
  if (r < 7) {
    const a = Array.from({ length: int(4) }, () => readValue(depth + 1, log));
    if (a.length > 0 && next() < 0.2) {
      const i = int(a.length);
      const fixed = a[i];
      Object.defineProperty(a, i, { get: () => (log.push(`[${i}]`), log.length % 2 ? fixed : 'other'), enumerable: true, configurable: true });
    }
    return a;
  }
  const o = next() < 0.2 ? Object.create(null) : {};
  for (let n = int(5); n > 0; n--) {
    const key = pick(STRINGS);
    const item = readValue(depth + 1, log);
    const descriptor =
      next() < 0.15
        ? { get: () => (log.push(`get ${key}`), log.length % 3 ? item : undefined), enumerable: true, configurable: true }
        : { value: item, enumerable: true, writable: true, configurable: true };
    Object.defineProperty(o, key, descriptor);
  }
  if (next() < 0.05) Object.defineProperty(o, 'toJSON', { value: () => 'toJSON called' });
  if (next() < 0.1) {
    return new Proxy(o, {
      get: (target, key, receiver) => (log.push(`proxy get ${String(key)}`), Reflect.get(target, key, receiver)),
      ownKeys: (target) => (log.push('proxy ownKeys'), Reflect.ownKeys(target)),
      has: (target, key) => (log.push(`proxy has ${String(key)}`), Reflect.has(target, key)),
    });
  }
  return o;
}

const ser = (v) => JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? `${x}n` : typeof x === 'symbol' ? String(x) : typeof x === 'function' ? 'fn' : x));
const attempt = async (f) => {
  try {
    return 'ok ' + ser(await f());
  } catch (e) {
    return `err ${e?.constructor?.name}: ${e?.message}`;
  }
};
const quiet = async (f) => {
  const warn = console.warn;
  const seen = [];
  console.warn = (...a) => seen.push(a.map((x) => (x instanceof Error ? x.message : String(x))).join(' '));
  try {
    return [await f(), seen];
  } finally {
    console.warn = warn;
  }
};

const kinds = {
  async value() {
    const v = value(0);
    const tool = pick(STRINGS);
    return (M) => Promise.all([attempt(() => M.canonicalizeKeyMaterial(v)), attempt(() => M.fingerprintToolCall(tool, v))]).then(ser);
  },
  async read() {
    const log = [];
    const v = readValue(0, log);
    return async (M) => {
      log.length = 0;
      const canonical = await attempt(() => M.canonicalizeKeyMaterial(v));
      const canonicalReads = log.splice(0);
      const fingerprint = await attempt(() => M.fingerprintToolCall('t', v));
      return ser([canonical, canonicalReads, fingerprint, log.splice(0)]);
    };
  },
  async blob() {
    const fps = Array.from({ length: 3 }, (_, i) => `f${i}`);
    const entry = () => {
      const e = {};
      if (next() < 0.9) e.fingerprint = next() < 0.9 ? pick(fps) : value(2);
      if (next() < 0.9) e.streak = next() < 0.8 ? pick([1, 2, 3, 2.5, 1e7, -1]) : value(2);
      if (next() < 0.4) e.roundFingerprints = next() < 0.8 ? fps.slice(0, 1 + int(3)).reverse() : value(2);
      // Known, documented divergence (restore_sparse): holes in the set.
      if (Array.isArray(e.roundFingerprints)) e.roundFingerprints = Array.from(e.roundFingerprints);
      if (next() < 0.4) e.callStreaks = callStreaks();
      return e;
    };
    // Half of them all valid counts (the shim's one-stringify path), the
    // rest: invalid counts, a null prototype, a getter, a Proxy (their reads
    // are compared), anything.
    const reads = [];
    const callStreaks = () => {
      const r = next();
      const counts = Object.fromEntries(fps.map((f) => [f, pick(r < 0.5 ? [1, 2, 3.7, 1e7] : [1, 2, 0, 3.7, -1, NaN])]));
      if (r < 0.6) return counts;
      if (r < 0.7) return Object.assign(Object.create(null), counts);
      if (r < 0.8) {
        return Object.defineProperty(counts, 'f1', {
          enumerable: true,
          get: () => (reads.push('get f1'), 2),
        });
      }
      if (r < 0.9) {
        return new Proxy(counts, {
          get: (target, key) => (reads.push(`get ${String(key)}`), target[key]),
          ownKeys: (target) => (reads.push('ownKeys'), Reflect.ownKeys(target)),
        });
      }
      return value(2);
    };
    const blob = next() < 0.1 ? value(0) : { tools: Object.fromEntries(Array.from({ length: int(4) }, () => [pick(['t', 'u', '__proto__', '0', 'x']), entry()])) };
    if (blob !== null && typeof blob === 'object') {
      if (next() < 0.3) blob.text = { fingerprint: pick(fps), streak: pick([1, 2, NaN]) };
      if (next() < 0.3) blob.escalationsUsed = pick([1, 2.5, -1, NaN, '1']);
    }
    return async (M) => {
      reads.length = 0;
      const m = new M.DoomLoopMonitor(M.resolveDoomLoopOption(true));
      const [r, warns] = await quiet(() => attempt(() => m.restore(blob)));
      return ser([r, warns, m.getState(), await attempt(() => m.recordToolCall('t', {}, 1)), reads.splice(0)]);
    };
  },
  async script() {
    const steps = Array.from({ length: 1 + int(12) }, () => {
      const round = next() < 0.8 ? 1 + int(4) : pick(['a', null, 1n, 2.5]);
      const r = int(10);
      if (r < 2) return { declare: round, calls: Array.from({ length: int(4) }, () => ({ toolName: pick(['t', 'u']), keyMaterial: next() < 0.8 ? { a: int(3) } : value(2) })) };
      if (r < 3) return { text: pick(['I am stuck. I am stuck. I am stuck. I am stuck. I am stuck.', 'hello', '', '  ']) };
      return { tool: pick(['t', 'u']), km: next() < 0.8 ? { a: int(3) } : value(2), round, options: next() < 0.2 ? { allowBlock: pick([false, 0, '', 1]) } : undefined };
    });
    const option = pick([true, { ladder: { steer: 2, block: 4 } }, { text: false }]);
    return async (M) => {
      const [out, warns] = await quiet(async () => {
        const m = new M.DoomLoopMonitor(M.resolveDoomLoopOption(option));
        const out = [];
        for (const s of steps) {
          if (s.declare !== undefined) out.push(await attempt(() => m.declareRound(s.declare, s.calls)));
          else if (s.text !== undefined) out.push(await attempt(() => m.recordAssistantText(s.text)));
          else out.push(await attempt(() => m.recordToolCall(s.tool, s.km, s.round, s.options)));
        }
        out.push(ser(m.getState()));
        return out;
      });
      return ser([out, warns.length]);
    };
  },
};

const deadline = Date.now() + seconds * 1000;
const counts = {};
let differences = 0;
while (Date.now() < deadline) {
  for (const [kind, make] of Object.entries(kinds)) {
    const caseSeed = seed;
    const run = await make();
    const [r, w] = [await run(R), await run(W)];
    counts[kind] = (counts[kind] ?? 0) + 1;
    if (r !== w) {
      differences++;
      if (differences <= 20) console.log(`DIFF ${kind} (case seed ${caseSeed})\n  ref  ${r.slice(0, 400)}\n  wasm ${w.slice(0, 400)}`);
    }
  }
}
console.log(`${Object.entries(counts).map(([k, n]) => `${n} ${k}s`).join(', ')}; ${differences} differences`);
process.exit(differences > 0 ? 1 : 0);
