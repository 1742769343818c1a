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
// reaches runs. Plain data skips the walk (see the next section): for it
// `JSON.stringify` is provably the same reading.

/** Thrown at the first thing the reference throws on; carries the text written so far. */
class Stop {
  constructor(text) {
    this.text = text;
  }
}

export function lowerKeyMaterial(value) {
  return lowerFor(value, false);
}

// --- Long strings cross raw ----------------------------------------------
//
// `JSON.stringify` of a long string (the file an edit or a write carries)
// costs several times more than copying its UTF-8 into wasm memory, where
// the core escapes it anyway. So the calls that go through the I/O buffer
// lower plain data holding strings of RAW_STRING_MIN or more code units
// (and no lone surrogate, which UTF-8 cannot carry) as text with the bare
// word `raw` in their place, the strings themselves beside it, in order;
// the core escapes each as `JSON.stringify` would. Containers without such
// a string still go through one `JSON.stringify`. Only plain data takes
// this form — reading it again runs no user code — so a caller whose core
// call fails can lower the same value the ordinary way and retry.

/** Strings this long (UTF-16 code units) or longer cross raw: measured in docs/performance.md. */
export const RAW_STRING_MIN = 512;

/** Long strings met by the current plainness check, and the containers above them. */
let longStrings = 0;
let longStringHolders;

/**
 * `lowerKeyMaterial` for the I/O buffer: the same text, or, for plain data
 * with long strings, `{ text, strings }` — text with `raw` for each of
 * `strings`.
 */
export function lowerKeyMaterialForIo(value) {
  return lowerFor(value, true);
}

function lowerFor(value, rawStrings) {
  if (typeof value === 'string') {
    return rawStrings && crossesRaw(value) ? { text: 'raw', strings: [value] } : JSON.stringify(value);
  }
  arrayIntrinsics = undefined;
  species = undefined;
  longStrings = 0;
  const plain = isProxy !== undefined && isPlain(value);
  const holders = longStringHolders;
  // Not kept past the call: it holds the caller's objects.
  longStringHolders = undefined;
  if (!plain) return walkKeyMaterial(value);
  if (!rawStrings || holders === undefined) return JSON.stringify(value);
  const strings = [];
  const text = withRawStrings(value, holders, strings);
  // Every long string had a lone surrogate: the text is the ordinary one.
  return strings.length > 0 ? { text, strings } : text;
}

/** No raw strings: what a lowering that is plain text carries beside it. */
const NO_STRINGS = Object.freeze([]);

/** The text of a `lowerKeyMaterialForIo` answer. */
export const ioText = (lowered) => (typeof lowered === 'string' ? lowered : lowered.text);

/** The raw strings of a `lowerKeyMaterialForIo` answer, in order (none for plain text). */
export const ioStrings = (lowered) => (typeof lowered === 'string' ? NO_STRINGS : lowered.strings);

/** A `lowerKeyMaterialForIo` answer with its text wrapped by `wrap`; the raw strings stay in order. */
export const wrapIoText = (lowered, wrap) =>
  typeof lowered === 'string' ? wrap(lowered) : { text: wrap(lowered.text), strings: lowered.strings };

const crossesRaw = (string) => string.length >= RAW_STRING_MIN && isWellFormed(string);

function withRawStrings(value, holders, strings) {
  if (typeof value === 'string') {
    if (!crossesRaw(value)) return JSON.stringify(value);
    strings.push(value);
    return 'raw';
  }
  if (!holders.has(value)) return JSON.stringify(value);
  let out;
  if (Array.isArray(value)) {
    out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + withRawStrings(value[i], holders, strings);
    return out + ']';
  }
  const keys = objectKeys(value);
  out = '{';
  for (let i = 0; i < keys.length; i++) {
    out += (i > 0 ? ',' : '') + JSON.stringify(keys[i]) + ':' + withRawStrings(value[keys[i]], holders, strings);
  }
  return out + '}';
}

function walkKeyMaterial(value) {
  try {
    return keyAt(value, 0, new Set());
  } catch (error) {
    if (error instanceof Stop) return error.text;
    throw error;
  }
}

// Each level returns its text (short strings concatenate flat, which keeps
// the garbage collector out of the way); a Stop passing through a level
// collects that level's text so far and its closing bracket.
function keyAt(value, depth, path) {
  if (depth > MAX_CANONICALIZE_DEPTH) throw new Stop('null');
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (Number.isFinite(value)) return String(value);
      throw new Stop(value !== value ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity');
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      throw new Stop('bigint');
    case 'object':
      if (value === null) return 'null';
      break;
    default:
      // undefined, functions, symbols
      return 'null';
  }
  if (path.has(value)) throw new Stop('circular');
  path.add(value);
  const text = Array.isArray(value) ? keyArray(value, depth, path) : keyObject(value, depth, path);
  path.delete(value);
  return text;
}

const arrayMap = Array.prototype.map;

// `obj.map(canon)`, as the reference calls it (and names it: a missing
// `map` throws `obj.map is not a function`). For a plain array the steps of
// `map` — read `length` and `constructor`, then each present index in order
// — are taken inline, which is several times faster than a callback;
// anything else (a subclass, a replaced `map`) goes through its own `map`.
function keyArray(obj, depth, path) {
  const map = obj.map;
  if (typeof map !== 'function') throw new TypeError('obj.map is not a function');
  if (map !== arrayMap) return keyArrayByMap(map, obj, depth, path);
  const length = obj.length;
  // `map` then reads `Array[Symbol.species]`: a replaced one is met there.
  if (obj.constructor !== Array || !intrinsicSpecies()) return keyArrayByMap(map, obj, depth, path);
  let out = '[';
  let i = 0;
  try {
    for (; i < length; i++) {
      if (i > 0) out += ',';
      out += i in obj ? keyAt(obj[i], depth + 1, path) : 'hole';
    }
  } catch (error) {
    if (error instanceof Stop) error.text = out + error.text + ']';
    throw error;
  }
  return out + ']';
}

function keyArrayByMap(map, obj, depth, path) {
  let out = '[';
  let next = 0;
  let mapped;
  try {
    mapped = map.call(obj, (item, index) => {
      for (; next < index; next++) out += next > 0 ? ',hole' : 'hole';
      if (next > 0) out += ',';
      next++;
      out += keyAt(item, depth + 1, path);
    });
  } catch (error) {
    if (error instanceof Stop) error.text = out + (next > 1 ? ',' : '') + error.text + ']';
    throw error;
  }
  const length = Array.isArray(mapped) ? mapped.length : next;
  for (; next < length; next++) out += next > 0 ? ',hole' : 'hole';
  return out + ']';
}

// Property keys are strings, for which `<` is the default sort's UTF-16
// code-unit order; a comparator is several times faster than the default.
const byCodeUnits = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

function keyObject(object, depth, path) {
  const all = Object.keys(object);
  const keys = [];
  for (let i = 0; i < all.length; i++) {
    const entry = object[all[i]];
    if (entry !== undefined && typeof entry !== 'function' && typeof entry !== 'symbol') keys.push(all[i]);
  }
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1] > keys[i]) {
      keys.sort(byCodeUnits);
      break;
    }
  }
  let out = '{';
  try {
    for (let i = 0; i < keys.length; i++) {
      if (i > 0) out += ',';
      out += JSON.stringify(keys[i]) + ':';
      out += keyAt(object[keys[i]], depth + 1, path);
    }
  } catch (error) {
    if (error instanceof Stop) error.text = out + error.text + '}';
    throw error;
  }
  return out + '}';
}

// --- Key material that is plain data: JSON.stringify, proven equivalent --
//
// Almost every argument object is parsed JSON: ordinary objects and arrays
// of data properties holding strings, finite numbers, booleans and null.
// For those the reference's reads (each property twice, sorted order,
// arrays through `map`) have no observable effect, and `JSON.stringify`
// writes exactly the lowered text — strings and numbers through the same
// `JSON.stringify`, undefined-free so nothing is dropped or nulled — except
// for key order, which the core sorts (it sorts any lowered object). The
// check below proves "plain" without one observable step of its own:
//
// - Proxies are excluded first, by the host's `isProxy` (Node, Bun, Deno:
//   `util.types.isProxy`, which runs no trap); without one there is no
//   fast path. Every later step then touches only ordinary objects, whose
//   introspection (`getPrototypeOf`, `Object.hasOwn`,
//   `getOwnPropertyDescriptor`, `__lookupGetter__`) runs no user code.
// - No property is read before it is known not to have a getter
//   (`dataValue`): an accessor (a getter, on an object or an array index)
//   is not plain, so no getter ever runs here, and the walk reads it as the
//   reference does.
// - An object's keys come from `for…in`, which for an ordinary object whose
//   prototype is `Object.prototype` (or null) lists what `Object.keys`
//   would, provided `Object.prototype` has no enumerable key (checked every
//   call; with one there is no fast path).
// - `JSON.stringify` would call `toJSON`: no own `toJSON` on any object or
//   array, the prototype is `Object.prototype` (or null; arrays:
//   `Array.prototype`, whose prototype must be `Object.prototype`) and
//   neither prototype holds a `toJSON` (pollution is checked every call).
// - Arrays are read by the reference through `map` (which reads
//   `constructor` and `Array[Symbol.species]`): the intrinsic ones, not
//   shadowed on the array; every index an own data property (a hole would
//   be `[1,,2]` in the reference and `null` in JSON.stringify).
// - Anything else — undefined, functions, symbols, bigints, non-finite
//   numbers, class instances, boxed primitives, nesting at the limit (a
//   cycle reaches it too) — is not plain and takes the walk, which gives
//   the reference's output or error.

let isProxy;

/** Registered by entries whose host can tell a Proxy without running its traps. */
export function setProxyCheck(check) {
  isProxy = typeof check === 'function' ? check : undefined;
}

const { getPrototypeOf, getOwnPropertyDescriptor, hasOwn, keys: objectKeys } = Object;
const ObjectPrototype = Object.prototype;
const ArrayPrototype = Array.prototype;
const speciesGetter = getOwnPropertyDescriptor(Array, Symbol.species)?.get;
/** Whether this call has checked the array intrinsics (`undefined`: not yet). */
let arrayIntrinsics;

function isPlain(value) {
  if (lookupGetter === undefined || hasOwn(ObjectPrototype, 'toJSON') || hasEnumerableKey(ObjectPrototype)) return false;
  try {
    return isPlainKeyMaterial(value, 0);
  } catch {
    // Introspection that throws (a module namespace's uninitialised
    // binding): the walk meets it as the reference does.
    return false;
  }
}

/** Whether `for…in` lists any key of `object` (its prototype's included). */
function hasEnumerableKey(object) {
  for (const _ in object) return true;
  return false;
}

function isIntrinsicData(object, key, value) {
  const descriptor = getOwnPropertyDescriptor(object, key);
  return descriptor !== undefined && hasOwn(descriptor, 'value') && descriptor.value === value;
}

function checkArrayIntrinsics() {
  arrayIntrinsics =
    getPrototypeOf(ArrayPrototype) === ObjectPrototype &&
    !hasOwn(ArrayPrototype, 'toJSON') &&
    isIntrinsicData(ArrayPrototype, 'map', arrayMap) &&
    isIntrinsicData(ArrayPrototype, 'constructor', Array) &&
    intrinsicSpecies();
  return arrayIntrinsics;
}

/** Whether this call has checked `Array[Symbol.species]` (`undefined`: not yet). */
let species;

/** `Array[Symbol.species]` is still the intrinsic getter (so reading it runs no user code). */
function intrinsicSpecies() {
  if (species === undefined) {
    const descriptor = getOwnPropertyDescriptor(Array, Symbol.species);
    species = speciesGetter !== undefined && descriptor !== undefined && hasOwn(descriptor, 'get') && descriptor.get === speciesGetter;
  }
  return species;
}

/**
 * Whether `JSON.stringify` writes a non-container as the walks would
 * (finite numbers, strings, booleans, null); `undefined` for an object.
 */
function plainLeaf(value) {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      return value === null ? true : undefined;
    default:
      return false;
  }
}

// An own property's value if it is a data property, else `NOT_DATA` —
// without running a getter. `__lookupGetter__` (captured at load, before
// any caller's code) answers "is this an accessor with a getter" for an own
// key without allocating a descriptor (≈ 1.5× faster per property than
// `getOwnPropertyDescriptor`, measured in docs/performance.md). When it
// answers no, `[[Get]]` of an own key of an ordinary object runs no user
// code: a data property gives its value, and an accessor without a getter
// gives undefined, which is not plain. A host without it (none known) has
// no fast path (`isPlain`).
const NOT_DATA = Symbol('not a data property');
const lookupGetter = typeof ObjectPrototype.__lookupGetter__ === 'function' ? ObjectPrototype.__lookupGetter__ : undefined;
const dataValue = (object, key) => (lookupGetter.call(object, key) === undefined ? object[key] : NOT_DATA);

function isPlainKeyMaterial(value, depth) {
  switch (typeof value) {
    case 'string':
      // Counted for the raw form (lowerKeyMaterialForIo).
      if (value.length >= RAW_STRING_MIN) longStrings++;
      return true;
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      if (value === null) return true;
      break;
    default:
      return false;
  }
  // Children of a container at the limit are past it: the walk decides.
  if (depth >= MAX_CANONICALIZE_DEPTH || isProxy(value)) return false;
  const longStringsBefore = longStrings;
  if (Array.isArray(value)) {
    if (!(arrayIntrinsics ?? checkArrayIntrinsics())) return false;
    if (getPrototypeOf(value) !== ArrayPrototype) return false;
    if (hasOwn(value, 'toJSON') || hasOwn(value, 'map') || hasOwn(value, 'constructor')) return false;
    const length = value.length;
    for (let i = 0; i < length; i++) {
      if (!hasOwn(value, i) || !isPlainKeyMaterial(dataValue(value, i), depth + 1)) return false;
    }
  } else {
    const proto = getPrototypeOf(value);
    if ((proto !== ObjectPrototype && proto !== null) || hasOwn(value, 'toJSON')) return false;
    // `for…in` lists exactly the keys `Object.keys` would (isPlain checked
    // that Object.prototype has none to add), and V8 reads `value[key]` in
    // its body through the object's enum cache: the check is 6–15 % faster
    // than over `Object.keys` (docs/performance.md). The getter test stays
    // inline for the same reason.
    for (const key in value) {
      if (!isPlainKeyMaterial(lookupGetter.call(value, key) === undefined ? value[key] : NOT_DATA, depth + 1)) return false;
    }
  }
  if (longStrings !== longStringsBefore) (longStringHolders ??= new Set()).add(value);
  return true;
}

/**
 * `JSON.stringify(counts)` when that is exactly the text reading `counts`
 * entry by entry as the reference's `restore` reads a `callStreaks` object
 * (`Object.entries`, keeping finite numbers ≥ 1) would give: an ordinary
 * object, no Proxy, no `toJSON`, whose every own enumerable key is a data
 * property holding such a number. Else `undefined`, and the caller reads it
 * entry by entry. The check runs no user code and builds nothing; a
 * persisted state's 100k counts are one native stringify instead of 100k
 * string concatenations (docs/performance.md).
 */
export function plainCountsJson(counts) {
  if (isProxy === undefined || lookupGetter === undefined) return undefined;
  if (typeof counts !== 'object' || counts === null || Array.isArray(counts) || isProxy(counts)) return undefined;
  const proto = getPrototypeOf(counts);
  if ((proto !== ObjectPrototype && proto !== null) || hasOwn(counts, 'toJSON')) return undefined;
  if (hasOwn(ObjectPrototype, 'toJSON') || hasEnumerableKey(ObjectPrototype)) return undefined;
  for (const key in counts) {
    const count = lookupGetter.call(counts, key) === undefined ? counts[key] : NOT_DATA;
    if (typeof count !== 'number' || !(count >= 1) || count === Infinity) return undefined;
  }
  return JSON.stringify(counts);
}

// --- Small plain data: canonical JSON written here ---------------------
//
// For a small plain value the whole fingerprint can be taken without the
// core: its canonical JSON written here and hashed by the host's one-shot
// SHA-256 (Node's `crypto.hash`), where stringifying it, checking it,
// copying it into wasm and canonicalizing it there cost 2–3× as much
// (docs/performance.md). The walk below is the plainness check above,
// read for read — Proxy first, no property read before its getter is ruled
// out, the same prototype and intrinsics checks — that also writes what it
// reads: strings as `JSON.stringify` writes them, numbers as `String` does
// (for a finite number the same text), an object's members sorted by
// UTF-16 code units — exactly the reference canonicalizer's text, since for
// plain data its reads have no observable effect. It declines (undefined)
// whatever is not plain, a string long enough to cross raw, and values of
// more than CANONICAL_IN_JS_VALUES values: large values are faster through
// the core, which copies decimals and strings as they are (a number other
// than a 32-bit integer, which JS must print digit by digit, counts as
// NUMBER_WORK values). The budget bounds what a declined value wasted.

/** Values (leaves and containers) the canonical JSON written here may hold. */
export const CANONICAL_IN_JS_VALUES = 512;

/** What printing a number beyond the 32-bit integers costs, in values (measured: ≈ 15× an integer). */
export const NUMBER_WORK = 16;

/** The keys and texts of the members being written, one segment per open object (reused). */
const memberKeys = [];
const memberTexts = [];
let membersTop = 0;
let valuesLeft = 0;

/** JSON literals of the short keys met recently (a few kinds of argument objects share them). */
const quotedKeys = new Map();
const QUOTED_KEYS_MAX = 4096;
/** Longer keys are quoted each time: the cache holds at most 4096 × 64 code units. */
const QUOTED_KEY_MAX_LENGTH = 64;

/**
 * The canonical JSON of `value` (the reference canonicalizer's text) when
 * it is small plain data, else `undefined` — decided and written without
 * running any user code.
 */
export function canonicalPlainText(value) {
  if (isProxy === undefined || lookupGetter === undefined || hasOwn(ObjectPrototype, 'toJSON') || hasEnumerableKey(ObjectPrototype)) {
    return undefined;
  }
  arrayIntrinsics = undefined;
  species = undefined;
  membersTop = 0;
  valuesLeft = CANONICAL_IN_JS_VALUES;
  try {
    return canonicalAt(value, 0);
  } catch {
    // Introspection that throws: the ordinary path meets it as the reference does.
    return undefined;
  }
}

function canonicalAt(value, depth) {
  if (--valuesLeft < 0) return undefined;
  switch (typeof value) {
    case 'string':
      return value.length < RAW_STRING_MIN ? quoteString(value) : undefined;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if ((value | 0) === value) return `${value}`;
      valuesLeft -= NUMBER_WORK - 1;
      return Number.isFinite(value) && valuesLeft >= 0 ? `${value}` : undefined;
    case 'object':
      if (value === null) return 'null';
      break;
    default:
      return undefined;
  }
  if (depth >= MAX_CANONICALIZE_DEPTH || isProxy(value)) return undefined;
  return Array.isArray(value) ? canonicalArray(value, depth) : canonicalObject(value, depth);
}

function canonicalArray(array, depth) {
  if (!(arrayIntrinsics ?? checkArrayIntrinsics())) return undefined;
  if (getPrototypeOf(array) !== ArrayPrototype) return undefined;
  if (hasOwn(array, 'toJSON') || hasOwn(array, 'map') || hasOwn(array, 'constructor')) return undefined;
  const length = array.length;
  // Each element is at least one value: a long array is declined at once;
  // and one whose elements would all cost what the first did (rows of a
  // table) once that is known, not when the budget runs out.
  if (length > valuesLeft) return undefined;
  const budget = valuesLeft;
  let out = '[';
  for (let i = 0; i < length; i++) {
    if (!hasOwn(array, i)) return undefined;
    const text = canonicalAt(dataValue(array, i), depth + 1);
    if (text === undefined || (i === 0 && (budget - valuesLeft) * length > budget)) return undefined;
    out += i === 0 ? text : `,${text}`;
  }
  return `${out}]`;
}

function canonicalObject(object, depth) {
  const proto = getPrototypeOf(object);
  if ((proto !== ObjectPrototype && proto !== null) || hasOwn(object, 'toJSON')) return undefined;
  // This object's members go on the stack above its parent's: a child is
  // written (and its segment popped) before the parent pushes its member.
  const base = membersTop;
  let sorted = true;
  // `for…in` as in isPlainKeyMaterial: the keys `Object.keys` lists.
  for (const key in object) {
    const text = canonicalAt(lookupGetter.call(object, key) === undefined ? object[key] : NOT_DATA, depth + 1);
    if (text === undefined) {
      membersTop = base;
      return undefined;
    }
    if (membersTop > base && !(memberKeys[membersTop - 1] < key)) sorted = false;
    memberKeys[membersTop] = key;
    memberTexts[membersTop] = text;
    membersTop++;
  }
  if (!sorted) sortMembers(base, membersTop);
  let out = '{';
  for (let i = base; i < membersTop; i++) {
    out += `${i === base ? '' : ','}${quoteKey(memberKeys[i])}:${memberTexts[i]}`;
    // Not kept past the call: they are the caller's, and can be large.
    memberKeys[i] = undefined;
    memberTexts[i] = undefined;
  }
  membersTop = base;
  return `${out}}`;
}

/** Sorts the members in `from..to` by key, in UTF-16 code-unit order (`<` on strings; keys are distinct). */
function sortMembers(from, to) {
  if (to - from > 16) {
    const keys = [];
    const texts = [];
    for (let i = from; i < to; i++) keys.push(i);
    keys.sort((a, b) => (memberKeys[a] < memberKeys[b] ? -1 : 1));
    for (let i = 0; i < keys.length; i++) texts.push(memberTexts[keys[i]]);
    for (let i = 0; i < keys.length; i++) keys[i] = memberKeys[keys[i]];
    for (let i = 0; i < keys.length; i++) {
      memberKeys[from + i] = keys[i];
      memberTexts[from + i] = texts[i];
    }
    return;
  }
  for (let i = from + 1; i < to; i++) {
    const key = memberKeys[i];
    const text = memberTexts[i];
    let j = i;
    for (; j > from && memberKeys[j - 1] > key; j--) {
      memberKeys[j] = memberKeys[j - 1];
      memberTexts[j] = memberTexts[j - 1];
    }
    memberKeys[j] = key;
    memberTexts[j] = text;
  }
}

function quoteKey(key) {
  if (key.length > QUOTED_KEY_MAX_LENGTH) return JSON.stringify(key);
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (quotedKeys.size >= QUOTED_KEYS_MAX) quotedKeys.clear();
    quotedKeys.set(key, quoted);
  }
  return quoted;
}

/**
 * `JSON.stringify(string)`: a short string with nothing to escape (no
 * control character, quote, backslash or surrogate) is its own text in
 * quotes, which a loop finds faster than the native call costs.
 */
function quoteString(string) {
  if (string.length > 64) return JSON.stringify(string);
  for (let i = 0; i < string.length; i++) {
    const unit = string.charCodeAt(i);
    if (unit < 0x20 || unit === 0x22 || unit === 0x5c || (unit >= 0xd800 && unit <= 0xdfff)) return JSON.stringify(string);
  }
  return `"${string}"`;
}

// --- Everything else (configs, options, transcripts): one generic walk ---

export function lower(value) {
  return isPlainJson(value, 0) ? JSON.stringify(value) : lowerAt(value, 0, new Set());
}

function isPlainJson(value, depth) {
  const leaf = plainLeaf(value);
  if (leaf !== undefined) return leaf;
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
