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
