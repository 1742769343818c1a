// Lowering: a JS value → the text form the wasm core reads.
//
// The core decides what every value means (canonicalization, key order,
// errors and their order); this walk only reads the value the way the
// reference's canonicalizer reads it — `typeof`, `Array.isArray`,
// `Object.keys`, `value[key]` — and writes what it saw: JSON for JSON
// data, JSON.stringify'd strings (so lone surrogates cross intact), and
// bare words for what JSON cannot hold (`undefined` for undefined,
// functions and symbols; `NaN`/`Infinity`; `bigint`; `hole` for a missing
// array element; `circular` for a value already on the current path).
//
// Past MAX_DEPTH the reference throws whatever the value is, so the walk
// writes `null` there and never descends further: deep or hostile input
// cannot exhaust the JS stack or the wasm parser.
//
// Fast path: for plain JSON data — finite numbers, strings, booleans, null,
// arrays without holes and plain objects without `toJSON`, within the depth
// limit — the native `JSON.stringify` writes exactly what the walk would,
// several times faster. A read-only check decides; anything else (class
// instances, Dates, boxed primitives, undefined, functions, bigints,
// non-finite numbers, holes, cycles, depth) takes the walk.

export const MAX_CANONICALIZE_DEPTH = 64;

// --- Key material: the reference's canonicalizer, read for read ----------
//
// `lowerKeyMaterial` reads a value exactly as `canonicalizeKeyMaterial`
// does, in its order, and no more: `Object.keys`, then every property once
// to filter out undefined / functions / symbols, the survivors sorted and
// read a second time as they are written; arrays through their own `map`
// (holes skipped, as `map` skips them); never `toJSON`, never a
// prototype or `has` check. At the first thing the reference throws on —
// a non-finite number, a bigint, a cycle, anything past depth 64 — it
// writes that value's bare word, closes what is open and stops reading,
// so the core reports that error and no getter the reference never
// reaches runs. No JSON.stringify fast path: it would call `toJSON` and
// read each property once, in insertion order.

const STOP = Symbol('stop');

export function lowerKeyMaterial(value) {
  if (typeof value === 'string') return JSON.stringify(value);
  const out = { text: '', closers: [] };
  try {
    keyAt(value, 0, new Set(), out);
  } catch (error) {
    if (error !== STOP) throw error;
    for (let i = out.closers.length - 1; i >= 0; i--) out.text += out.closers[i];
  }
  return out.text;
}

function stopWith(word, out) {
  out.text += word;
  throw STOP;
}

function keyAt(value, depth, path, out) {
  if (depth > MAX_CANONICALIZE_DEPTH) stopWith('null', out);
  if (value === null || value === undefined) {
    out.text += 'null';
    return;
  }
  switch (typeof value) {
    case 'string':
      out.text += JSON.stringify(value);
      return;
    case 'number':
      if (Number.isFinite(value)) out.text += String(value);
      else stopWith(value !== value ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity', out);
      return;
    case 'boolean':
      out.text += value ? 'true' : 'false';
      return;
    case 'bigint':
      stopWith('bigint', out);
      return;
    case 'object':
      break;
    default:
      out.text += 'null';
      return;
  }
  if (path.has(value)) stopWith('circular', out);
  path.add(value);
  if (Array.isArray(value)) keyArray(value, depth, path, out);
  else keyObject(value, depth, path, out);
  path.delete(value);
}

// `obj`, as the reference names it: a missing `map` throws `obj.map is not a function`.
function keyArray(obj, depth, path, out) {
  out.text += '[';
  out.closers.push(']');
  let next = 0;
  const hole = () => {
    out.text += next > 0 ? ',hole' : 'hole';
    next++;
  };
  const mapped = obj.map((item, index) => {
    while (next < index) hole();
    if (next > 0) out.text += ',';
    next++;
    keyAt(item, depth + 1, path, out);
  });
  const length = Array.isArray(mapped) ? mapped.length : next;
  while (next < length) hole();
  out.closers.pop();
  out.text += ']';
}

function keyObject(object, depth, path, out) {
  const keys = Object.keys(object)
    .filter((key) => {
      const entry = object[key];
      return entry !== undefined && typeof entry !== 'function' && typeof entry !== 'symbol';
    })
    .sort();
  out.text += '{';
  out.closers.push('}');
  for (let i = 0; i < keys.length; i++) {
    if (i > 0) out.text += ',';
    out.text += JSON.stringify(keys[i]) + ':';
    keyAt(object[keys[i]], depth + 1, path, out);
  }
  out.closers.pop();
  out.text += '}';
}

// --- Everything else (configs, options, transcripts): one generic walk ---

export function lower(value) {
  return isPlainJson(value, 0) ? JSON.stringify(value) : lowerAt(value, 0, new Set());
}

function isPlainJson(value, depth) {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return true;
  // Children of a container at the limit are past it: the walk decides.
  if (depth >= MAX_CANONICALIZE_DEPTH) return false;
  if (Array.isArray(value)) {
    // JSON.stringify would call an array's own or inherited toJSON.
    if ('toJSON' in value) return false;
    for (let i = 0; i < value.length; i++) {
      // A hole reads as undefined, which is not plain.
      if (!isPlainJson(value[i], depth + 1)) return false;
    }
    return true;
  }
  const proto = Object.getPrototypeOf(value);
  if ((proto !== Object.prototype && proto !== null) || 'toJSON' in value) return false;
  for (const key of Object.keys(value)) {
    if (!isPlainJson(value[key], depth + 1)) return false;
  }
  return true;
}

function lowerAt(value, depth, path) {
  if (depth > MAX_CANONICALIZE_DEPTH) return 'null';
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (Number.isFinite(value)) return String(value);
      return value !== value ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return 'bigint';
    case 'object':
      break;
    default:
      return 'undefined';
  }
  if (path.has(value)) return 'circular';
  path.add(value);
  try {
    return Array.isArray(value)
      ? lowerArray(value, depth, path)
      : lowerObject(value, depth, path);
  } finally {
    path.delete(value);
  }
}

function lowerArray(array, depth, path) {
  let out = '[';
  for (let i = 0; i < array.length; i++) {
    if (i > 0) out += ',';
    out += i in array ? lowerAt(array[i], depth + 1, path) : 'hole';
  }
  return out + ']';
}

function lowerObject(object, depth, path) {
  let out = '{';
  let first = true;
  for (const key of Object.keys(object)) {
    const item = object[key];
    if (!first) out += ',';
    first = false;
    out += JSON.stringify(key) + ':' + lowerAt(item, depth + 1, path);
  }
  return out + '}';
}

/// A string for a `&str` parameter: raw when well formed (fast, no copy of
/// escapes), else as a JSON literal so lone surrogates survive.
export function textArg(text) {
  return isWellFormed(text) ? [text, false] : [JSON.stringify(text), true];
}

export const isWellFormed =
  typeof String.prototype.isWellFormed === 'function'
    ? (s) => s.isWellFormed()
    : (s) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
