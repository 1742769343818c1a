// The conformance loop for the npm package: every case of a corpus
// document (format: vectors/FORMAT.md) through the package's public API,
// exactly as a user calls it. Runtime-neutral (no fs, no node: imports), so
// the same loop runs in Node, Bun, Deno, workerd and Chromium; each runner
// only loads the documents and the package.

export function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  const defined = (o) => Object.keys(o).filter((k) => o[k] !== undefined);
  const ka = defined(a);
  const kb = defined(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
}

/** Compares as JSON would see it (JSON.stringify drops undefined, functions). */
function jsonEqual(actual, expected) {
  const seen = actual === undefined ? undefined : JSON.parse(JSON.stringify(actual));
  return deepEqual(seen, expected);
}

function decodeStandIns(value) {
  if (Array.isArray(value)) return value.map(decodeStandIns);
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 1 && value.$nan === true) return NaN;
    if (keys.length === 1 && value.$undefined === true) return undefined;
    // fromEntries: own keys, a `__proto__` one included.
    return Object.fromEntries(keys.map((key) => [key, decodeStandIns(value[key])]));
  }
  return value;
}

function captureWarnings(fn) {
  const original = console.warn;
  const warnings = [];
  console.warn = (...args) =>
    warnings.push(args.map((a) => (a instanceof Error ? a.message : String(a))).join(' '));
  try {
    return { value: fn(), warnings };
  } finally {
    console.warn = original;
  }
}

function check(label, actual, expected) {
  if (!jsonEqual(actual, expected)) {
    throw new Error(`${label}: got ${JSON.stringify(actual)?.slice(0, 300)} want ${JSON.stringify(expected)?.slice(0, 300)}`);
  }
}

const runners = {
  fingerprints(api, c) {
    const v = JSON.parse(c.args);
    if (c.error) {
      let threw = false;
      try {
        api.canonicalizeKeyMaterial(v);
      } catch {
        threw = true;
      }
      if (!threw) throw new Error('expected canonicalization to fail');
      return;
    }
    if ('jcs' in c) check('jcs', api.canonicalizeKeyMaterial(v), c.jcs);
    if ('fingerprint' in c) check('fingerprint', api.fingerprintToolCallSync(c.toolName, v), c.fingerprint);
    if ('keyFingerprint' in c) check('keyFingerprint', api.fingerprintKeyMaterialSync(v), c.keyFingerprint);
  },
  text(api, c) {
    const result = api.detectTextRepetition(c.text, c.options ?? undefined);
    check('result', result, c.result);
    if (result && 'sampleFingerprint' in c) {
      check('sampleFingerprint', api.fingerprintKeyMaterialSync(result.sample), c.sampleFingerprint);
    }
  },
  config(api, c) {
    const { value, warnings } = captureWarnings(() => api.resolveDoomLoopOption(decodeStandIns(c.option)));
    check('resolved', value, c.resolved);
    check('warnings', warnings, c.warnings);
  },
  loopKeys(api, c) {
    const resolution = api.resolveLoopKeyMaterial(decodeStandIns(c.loopKey), JSON.parse(c.args));
    check('resolution', resolution, c.resolution);
    if ('keyMaterialJcs' in c) {
      check('keyMaterialJcs', api.canonicalizeKeyMaterial(resolution.keyMaterial), c.keyMaterialJcs);
    }
  },
  trace(api, t) {
    const { value: config } = captureWarnings(() => api.resolveDoomLoopOption(decodeStandIns(t.option)));
    const monitor = new api.DoomLoopMonitor(config);
    try {
      t.steps.forEach((step, i) => {
        try {
          runStep(monitor, step);
        } catch (error) {
          throw new Error(`step ${i} (${step.op}): ${error.message}`);
        }
      });
    } finally {
      monitor.free();
    }
  },
};

function runStep(monitor, s) {
  switch (s.op) {
    case 'declare': {
      const calls = s.calls.map((c) => ({ toolName: c.toolName, keyMaterial: JSON.parse(c.args) }));
      const { warnings } = captureWarnings(() => monitor.declareRoundSync(s.round, calls));
      return check('warnings', warnings, s.warnings);
    }
    case 'record':
      return check(
        'record',
        monitor.recordToolCallSync(s.toolName, JSON.parse(s.args), s.round, s.options ?? undefined),
        s.expect,
      );
    case 'text':
      return check('text', monitor.recordAssistantTextSync(s.text) ?? null, s.expect);
    case 'resetText':
      return monitor.resetTextStreak();
    case 'canEscalate':
      return check('canEscalate', monitor.canEscalate(), s.expect);
    case 'consumeEscalation':
      return monitor.consumeEscalation();
    case 'getState':
      return check('state', monitor.getState(), s.expect);
    case 'restore': {
      const { warnings } = captureWarnings(() => monitor.restore(s.state));
      return check('warnings', warnings, s.warnings);
    }
    default:
      throw new Error(`unknown op ${s.op}`);
  }
}

function upstream(api, doc) {
  const out = [];
  for (const v of doc.toolCallVectors ?? []) {
    out.push(() => {
      check('jcs', api.canonicalizeKeyMaterial(v.keyMaterial), v.jcs);
      check('fingerprint', api.fingerprintToolCallSync(v.toolName, v.keyMaterial), v.fingerprint);
    });
  }
  for (const v of doc.keyMaterialVectors ?? []) {
    out.push(() => {
      check('jcs', api.canonicalizeKeyMaterial(v.keyMaterial), v.jcs);
      check('fingerprint', api.fingerprintKeyMaterialSync(v.keyMaterial), v.fingerprint);
    });
  }
  const circular = {};
  circular.self = circular;
  let deep = 0;
  for (let i = 0; i < 65; i++) deep = [deep];
  const rejected = {
    bigint: [{ n: 10n }],
    'NaN / Infinity': [[NaN], { x: Infinity }, -Infinity],
    'circular reference': [circular],
    'nesting > 64 levels': [deep],
  };
  for (const r of doc.rejected ?? []) {
    out.push(() => {
      const inputs = rejected[r.name];
      if (!inputs) throw new Error(`no construction for rejected vector ${r.name}`);
      for (const input of inputs) {
        let threw = false;
        try {
          api.canonicalizeKeyMaterial(input);
        } catch {
          threw = true;
        }
        if (!threw) throw new Error(`${r.name}: accepted`);
      }
    });
  }
  return out;
}

/**
 * The checks of one document, each a thunk that throws on mismatch. A
 * document of no known shape throws (the native runner's messages).
 */
export function casesOf(api, doc) {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new Error('corpus file is not a JSON object');
  }
  if (doc.toolCallVectors) return upstream(api, doc);
  if (Array.isArray(doc.traces)) return doc.traces.map((t) => () => runners.trace(api, t));
  if (!Array.isArray(doc.cases)) throw new Error('corpus file has neither `cases` nor `traces`');
  const first = doc.cases[0] ?? {};
  const has = (key) => first !== null && typeof first === 'object' && key in first;
  const run = has('option')
    ? runners.config
    : has('loopKey')
      ? runners.loopKeys
      : has('text')
        ? runners.text
        : has('toolName') || doc.cases.length === 0
          ? runners.fingerprints
          : undefined;
  if (!run) throw new Error('corpus cases match no known kind');
  return doc.cases.map((c) => () => run(api, c));
}

/** Runs every case; returns {passed, failures: [label]}. */
export function runDocument(api, doc, name = 'corpus') {
  let passed = 0;
  const failures = [];
  casesOf(api, doc).forEach((thunk, i) => {
    try {
      thunk();
      passed++;
    } catch (error) {
      failures.push(`${name} case ${i}: ${error.message}`);
    }
  });
  return { passed, failures };
}
