//! The value model and a reader and writer with `JSON.parse` /
//! `JSON.stringify` semantics.
//!
//! The reference's inputs are JS values, usually straight out of
//! `JSON.parse`. To agree with it byte for byte the model must hold what such
//! a value holds: IEEE-754 doubles rounded as `JSON.parse` rounds them
//! (`1e400` is `Infinity`, `-0` stays negative zero), strings with lone
//! surrogates ([`JsString`]), objects whose duplicate keys keep the *last*
//! value at the *first* position, `"__proto__"` as an ordinary key, and the
//! own-property order of JS objects (array-index keys first, ascending, then
//! insertion order). serde_json can do none of the first three.
//!
//! The wasm binding hands JS values over in a *lowered* form of the same
//! syntax (`parse_lowered`) that adds the JS-only values key material can
//! hold — `undefined`, `NaN`, `±Infinity`, bigints, array holes and cycles —
//! so that canonicalization, not the binding, decides what each one means.
//!
//! Parsing is iterative (an explicit stack), so hostile nesting cannot
//! overflow the call stack; it is bounded by [`MAX_PARSE_DEPTH`] because
//! dropping and writing values recurse.

use crate::error::{Error, ErrorKind, Result};
use crate::js_string::JsString;
// Re-exported for the modules that sort alongside JSON handling.
pub(crate) use crate::sort::{sorted, sorted_indices};

/// Deepest nesting [`parse`] accepts. Far above the 64 levels
/// canonicalization allows, so every value the reference can fingerprint
/// parses; deeper input is rejected with [`ErrorKind::NestingLimit`].
pub const MAX_PARSE_DEPTH: usize = 512;

/// A JS value as the detector sees it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A double (may be NaN, ±Infinity or -0 when lowered from JS).
    Number(f64),
    /// A string.
    String(JsString),
    /// An array.
    Array(Vec<Value>),
    /// An object, in JS own-property order.
    Object(Object),
    /// `undefined`, a function or a symbol: dropped from objects and `null`
    /// in arrays by both `JSON.stringify` and canonicalization.
    Undefined,
    /// A bigint (canonicalization rejects it).
    BigInt,
    /// A hole of a sparse array (`[1,,3]`).
    Hole,
    /// A reference to an enclosing value (canonicalization rejects it).
    Circular,
}

impl Value {
    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_js_string(&self) -> Option<&JsString> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The number, if this is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// JS `typeof` of the value.
    pub fn type_of(&self) -> &'static str {
        match self {
            Value::Null | Value::Array(_) | Value::Object(_) | Value::Circular => "object",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Undefined | Value::Hole => "undefined",
            Value::BigInt => "bigint",
        }
    }

    /// JS `ToBoolean`.
    pub fn is_truthy(&self) -> bool {
        match self {
            Value::Null | Value::Undefined | Value::Hole => false,
            Value::Bool(b) => *b,
            Value::Number(n) => *n != 0.0 && !n.is_nan(),
            Value::String(s) => !s.is_empty(),
            Value::Array(_) | Value::Object(_) | Value::Circular => true,
            // 0n is falsy; the lowered form does not keep a bigint's value.
            Value::BigInt => true,
        }
    }

    /// JS `ToNumber` (objects via their string form, so `[]` is 0, `[3]` is
    /// 3 and `{}` is NaN; a bigint, whose value the lowered form drops, is NaN).
    pub fn to_number(&self) -> f64 {
        match self {
            Value::Null => 0.0,
            Value::Bool(b) => f64::from(u8::from(*b)),
            Value::Number(n) => *n,
            Value::String(s) => string_to_number(&s.to_utf8_lossy()),
            Value::Array(items) => match items.as_slice() {
                [] => 0.0,
                [only] => match only {
                    Value::Null | Value::Undefined | Value::Hole => 0.0,
                    Value::Array(_) | Value::String(_) | Value::Number(_) => only.to_number(),
                    _ => f64::NAN,
                },
                _ => f64::NAN,
            },
            _ => f64::NAN,
        }
    }

    /// A property read `value[key]` as JS performs it on a value from
    /// `JSON.parse`, prototype chain included: `"__proto__"` reads the
    /// prototype (an object with no enumerable keys, so `{}`), and the other
    /// names of `Object.prototype` / `Array.prototype` read functions
    /// ([`Value::Undefined`] here). `None` means the property does not exist
    /// (`key in value` is false).
    pub fn get_property(&self, key: &JsString) -> Option<Value> {
        match self {
            Value::Object(o) => o
                .get_js(key)
                .cloned()
                .or_else(|| inherited_property(key, OBJECT_PROTOTYPE)),
            Value::Array(items) => {
                if key == "length" {
                    return Some(Value::Number(items.len() as f64));
                }
                if let Some(index) = array_index(key.as_bytes()) {
                    return items.get(index as usize).and_then(|item| match item {
                        Value::Hole => None,
                        other => Some(other.clone()),
                    });
                }
                inherited_property(key, ARRAY_PROTOTYPE).or_else(|| inherited_property(key, OBJECT_PROTOTYPE))
            }
            _ => None,
        }
    }
}

/// JS `StringToNumber`: trimmed decimal, `0x`/`0o`/`0b` integers,
/// `Infinity`; empty is 0; anything else NaN.
pub fn string_to_number(s: &str) -> f64 {
    let trimmed = s.trim_matches(|c: char| crate::whitespace::is_js_whitespace(c as u32));
    if trimmed.is_empty() {
        return 0.0;
    }
    let radix = |prefix: &[&str], radix: u32| -> Option<f64> {
        let lower = trimmed.get(..2)?;
        if !prefix.contains(&lower) {
            return None;
        }
        let digits = trimmed.get(2..)?;
        if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
            return Some(f64::NAN);
        }
        Some(digits.chars().fold(0.0, |acc, c| {
            acc * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))
        }))
    };
    if let Some(n) = radix(&["0x", "0X"], 16)
        .or_else(|| radix(&["0o", "0O"], 8))
        .or_else(|| radix(&["0b", "0B"], 2))
    {
        return n;
    }
    let unsigned = trimmed.trim_start_matches(['+', '-']);
    if unsigned == "Infinity" && trimmed.len() - unsigned.len() <= 1 {
        return if trimmed.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    if !crate::value::float::decimal_literal(trimmed) {
        return f64::NAN;
    }
    crate::value::float::parse_decimal(trimmed)
}

const OBJECT_PROTOTYPE: &[&str] = &[
    "__proto__",
    "constructor",
    "__defineGetter__",
    "__defineSetter__",
    "hasOwnProperty",
    "__lookupGetter__",
    "__lookupSetter__",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toString",
    "valueOf",
    "toLocaleString",
];

const ARRAY_PROTOTYPE: &[&str] = &[
    "at",
    "concat",
    "copyWithin",
    "fill",
    "find",
    "findIndex",
    "findLast",
    "findLastIndex",
    "lastIndexOf",
    "pop",
    "push",
    "reverse",
    "shift",
    "unshift",
    "slice",
    "sort",
    "splice",
    "includes",
    "indexOf",
    "join",
    "keys",
    "entries",
    "values",
    "forEach",
    "filter",
    "flat",
    "flatMap",
    "map",
    "every",
    "some",
    "reduce",
    "reduceRight",
    "toReversed",
    "toSorted",
    "toSpliced",
    "with",
    "toLocaleString",
    "toString",
    "constructor",
];

fn inherited_property(key: &JsString, names: &[&str]) -> Option<Value> {
    let name = key.as_str()?;
    if !names.contains(&name) {
        return None;
    }
    Some(if name == "__proto__" {
        // The prototype object: no own enumerable keys.
        Value::Object(Object::new())
    } else {
        Value::Undefined
    })
}

/// A JS object: own enumerable string-keyed properties in JS order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Object {
    entries: Vec<(JsString, Value)>,
}

impl Object {
    /// An empty object.
    pub fn new() -> Self {
        Object::default()
    }

    /// Builds an object from entries as JS `Object.fromEntries` does: a
    /// repeated key keeps its first position and its last value, and
    /// array-index keys move to the front in ascending order.
    pub fn from_entries(entries: Vec<(JsString, Value)>) -> Self {
        let mut object = Object {
            entries: dedupe_last_wins(entries),
        };
        object.order_array_indices_first();
        object
    }

    /// Sets a property (`obj[key] = value` on a null-prototype object).
    pub fn insert(&mut self, key: JsString, value: Value) {
        if let Some(slot) = self.entries.iter_mut().find(|(k, _)| *k == key) {
            slot.1 = value;
            return;
        }
        let is_index = array_index(key.as_bytes()).is_some();
        self.entries.push((key, value));
        if is_index {
            self.order_array_indices_first();
        }
    }

    /// Own property by name.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries
            .iter()
            .find(|(k, _)| k.as_bytes() == key.as_bytes())
            .map(|(_, v)| v)
    }

    /// Removes a property and returns its value (`delete obj[key]`); the
    /// others keep their order. Lets a reader take a large value out of a
    /// parsed object instead of copying it.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let at = self.entries.iter().position(|(k, _)| k.as_bytes() == key.as_bytes())?;
        Some(self.entries.remove(at).1)
    }

    /// Own property by JS string name.
    pub fn get_js(&self, key: &JsString) -> Option<&Value> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Entries in JS own-property order (`Object.entries`).
    pub fn iter(&self) -> impl Iterator<Item = (&JsString, &Value)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// Number of own properties.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the object has no own properties.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn order_array_indices_first(&mut self) {
        if self.entries.iter().any(|(k, _)| array_index(k.as_bytes()).is_some()) {
            // Indices ascending in front, string keys behind in insertion order.
            let (indices, names): (Vec<_>, Vec<_>) = std::mem::take(&mut self.entries)
                .into_iter()
                .partition(|(k, _)| array_index(k.as_bytes()).is_some());
            let index_of = |i: usize| array_index(indices[i].0.as_bytes());
            let order = sorted_indices(indices.len(), &|a, b| index_of(a).cmp(&index_of(b)));
            let mut slots: Vec<Option<(JsString, Value)>> = indices.into_iter().map(Some).collect();
            self.entries = order.into_iter().filter_map(|i| slots[i].take()).collect();
            self.entries.extend(names);
        }
    }
}

impl FromIterator<(JsString, Value)> for Object {
    fn from_iter<I: IntoIterator<Item = (JsString, Value)>>(iter: I) -> Self {
        Object::from_entries(iter.into_iter().collect())
    }
}

/// A canonical array index (`"0"`, `"17"`, up to 2³²−2), which JS orders
/// before every other own key.
fn array_index(key: &[u8]) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || (key.len() > 1 && key[0] == b'0') {
        return None;
    }
    let mut value: u64 = 0;
    for &b in key {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value * 10 + u64::from(b - b'0');
    }
    if value <= 4_294_967_294 {
        Some(value as u32)
    } else {
        None
    }
}

fn dedupe_last_wins(entries: Vec<(JsString, Value)>) -> Vec<(JsString, Value)> {
    if entries.len() <= 16 {
        let mut out: Vec<(JsString, Value)> = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            match out.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => out.push((key, value)),
            }
        }
        return out;
    }
    // Large objects: find each key's first position by sorting positions
    // by key (stable, so equal keys stay in input order), then move each
    // key's last value into its first slot.
    // Ties broken by position: equal keys stay in input order.
    let order = sorted_indices(entries.len(), &|a, b| {
        entries[a].0.as_bytes().cmp(entries[b].0.as_bytes()).then(a.cmp(&b))
    });
    let mut keep = vec![true; entries.len()];
    let mut moves: Vec<(usize, usize)> = Vec::new();
    let mut run = 0;
    while run < order.len() {
        let mut end = run + 1;
        while end < order.len() && entries[order[end]].0 == entries[order[run]].0 {
            keep[order[end]] = false;
            end += 1;
        }
        if end - run > 1 {
            moves.push((order[run], order[end - 1]));
        }
        run = end;
    }
    let mut slots: Vec<Option<(JsString, Value)>> = entries.into_iter().map(Some).collect();
    for (first, last) in moves {
        if let Some((_, value)) = slots[last].take() {
            if let Some(slot) = slots[first].as_mut() {
                slot.1 = value;
            }
        }
    }
    slots
        .into_iter()
        .zip(keep)
        .filter_map(|(slot, kept)| slot.filter(|_| kept))
        .collect()
}

/// Parses JSON text with `JSON.parse` semantics.
///
/// # Errors
/// [`ErrorKind::Syntax`] for text that is not JSON,
/// [`ErrorKind::NestingLimit`] past [`MAX_PARSE_DEPTH`].
///
/// ```
/// use doom_loop::json::{parse, Value};
/// let v = parse(r#"{"a":1,"a":2,"__proto__":"x"}"#).unwrap();
/// let o = v.as_object().unwrap();
/// assert_eq!(o.get("a"), Some(&Value::Number(2.0)));
/// assert_eq!(o.len(), 2);
/// ```
pub fn parse(text: &str) -> Result<Value> {
    Parser::new(text.as_bytes(), false).parse_document()
}

/// [`parse`] over a JS string (whose raw characters may be lone surrogates).
///
/// # Errors
/// As [`parse`].
pub fn parse_js(text: &JsString) -> Result<Value> {
    Parser::new(text.as_bytes(), false).parse_document()
}

/// Parses the lowered form of a JS value (what the wasm binding hands over): JSON plus the bare words
/// `undefined`, `NaN`, `Infinity`, `-Infinity`, `bigint`, `hole` (array
/// elements only) and `circular`.
///
/// # Errors
/// As [`parse`].
///
/// ```
/// use doom_loop::{json::parse_lowered, Value};
/// assert!(matches!(parse_lowered("[hole,NaN]").unwrap(), Value::Array(_)));
/// ```
pub fn parse_lowered(text: &str) -> Result<Value> {
    Parser::new(text.as_bytes(), true).parse_document()
}

/// [`parse_lowered`] for the value that starts `text`, which may go on (a
/// value inside a larger document): the value and the bytes of `text` it
/// spans (leading whitespace included).
///
/// # Errors
/// As [`parse`] for the value itself; what follows it is not read.
///
/// ```
/// use doom_loop::{json::parse_lowered_prefix, Value};
/// let (value, len) = parse_lowered_prefix(r#""a\u00e9",1"#).unwrap();
/// assert_eq!(value, Value::String("aé".into()));
/// assert_eq!(len, 9);
/// ```
pub fn parse_lowered_prefix(text: &str) -> Result<(Value, usize)> {
    let mut parser = Parser::new(text.as_bytes(), true);
    let value = parser.parse_value()?;
    Ok((value, parser.pos))
}

/// [`parse_lowered`] for text whose long strings were handed over raw: the
/// bare word `raw` (a value, never a key) stands for the next of `strings`,
/// unescaped — the binding's form for plain data that carries a file (see
/// [`crate::fingerprint::fingerprint_lowered_tool_call_with_strings`]).
///
/// # Errors
/// As [`parse`], and a syntax error if `text` does not use every string
/// exactly once.
///
/// ```
/// use doom_loop::{json::{parse_lowered, parse_lowered_with_strings}};
/// let raw = parse_lowered_with_strings(r#"{"content":raw,"n":1}"#, &["a \"b\"\n"]).unwrap();
/// assert_eq!(raw, parse_lowered(r#"{"content":"a \"b\"\n","n":1}"#).unwrap());
/// ```
pub fn parse_lowered_with_strings(text: &str, strings: &[&str]) -> Result<Value> {
    let mut parser = Parser::new(text.as_bytes(), true);
    parser.strings = strings;
    let value = parser.parse_document()?;
    if parser.next_string != strings.len() {
        return Err(Error::syntax(format!(
            "lowered text names {} of its {} raw strings",
            parser.next_string,
            strings.len()
        )));
    }
    Ok(value)
}

/// Bytes that end a verbatim run inside a string literal: the closing
/// quote, a backslash, and control characters (an error in JSON).
const STRING_STOP: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// The length of the prefix of `bytes` without a byte of `stop`: eight
/// bytes at a time (strings are most of a large payload) until `first_stop`
/// names the first stop in a word — exactly, so the stop is found without
/// a second, byte-wise look at that word (most strings are a key or a word
/// that ends inside the first eight bytes: measured in docs/performance.md)
/// — then the last few bytes one by one.
#[inline(always)]
fn verbatim_run(bytes: &[u8], stop: &[bool; 256], first_stop: impl Fn(u64) -> Option<usize>) -> usize {
    let mut pos = 0;
    while let Some(chunk) = bytes.get(pos..pos + 8) {
        if let Some(at) = first_stop(le_word(chunk)) {
            return pos + at;
        }
        pos += 8;
    }
    pos + bytes[pos..]
        .iter()
        .position(|&b| stop[b as usize])
        .unwrap_or(bytes.len() - pos)
}

fn le_word(chunk: &[u8]) -> u64 {
    chunk
        .iter()
        .take(8)
        .enumerate()
        .fold(0, |word, (i, &b)| word | u64::from(b) << (8 * i))
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` below `bound` (≤ 0x80) — the
/// classic SWAR test — and maybe of bytes above the first (a borrow runs
/// upward): exact as a yes/no answer, and its lowest bit set is exact too,
/// since the bytes below the first match borrow nothing.
fn bytes_below(word: u64, bound: u8) -> u64 {
    word.wrapping_sub(ONES * u64::from(bound)) & !word & HIGHS
}

/// [`bytes_below`]'s marks for the bytes equal to `byte`.
fn bytes_equal(word: u64, byte: u8) -> u64 {
    bytes_below(word ^ (ONES * u64::from(byte)), 1)
}

/// The marks of the bytes of `word` in [`STRING_STOP`].
fn string_stops(word: u64) -> u64 {
    bytes_below(word, 0x20) | bytes_equal(word, b'"') | bytes_equal(word, b'\\')
}

/// The marks of the bytes of `word` in [`ESCAPE_CANDIDATE`].
fn escape_candidates(word: u64) -> u64 {
    string_stops(word) | bytes_equal(word, 0xED)
}

/// The position of the first byte of `word` (little-endian) in
/// [`STRING_STOP`]: the lowest bit of the three masks, each exact there.
fn first_string_stop(word: u64) -> Option<usize> {
    first_marked(string_stops(word))
}

/// The position of the first byte of `word` in [`ESCAPE_CANDIDATE`].
fn first_escape_candidate(word: u64) -> Option<usize> {
    first_marked(escape_candidates(word))
}

/// The byte whose high bit is the lowest one set in `marks`.
fn first_marked(marks: u64) -> Option<usize> {
    (marks != 0).then(|| marks.trailing_zeros() as usize / 8)
}

enum Frame {
    Array(Vec<Value>),
    Object(Vec<(JsString, Value)>, JsString),
}

pub(crate) struct Parser<'a> {
    bytes: &'a [u8],
    pub(crate) pos: usize,
    lowered: bool,
    /// The raw strings the bare word `raw` stands for, in order
    /// ([`parse_lowered_with_strings`]).
    strings: &'a [&'a str],
    next_string: usize,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(bytes: &'a [u8], lowered: bool) -> Self {
        Parser {
            bytes,
            pos: 0,
            lowered,
            strings: &[],
            next_string: 0,
        }
    }

    fn error(&self, what: &str) -> Error {
        if self.pos >= self.bytes.len() {
            Error::syntax(format!("Unexpected end of JSON input ({what})"))
        } else {
            Error::syntax(format!("{what} in JSON at position {}", self.pos))
        }
    }

    pub(crate) fn skip_ws(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    pub(crate) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn parse_document(&mut self) -> Result<Value> {
        let value = self.parse_value()?;
        self.skip_ws();
        if self.pos != self.bytes.len() {
            return Err(self.error("Unexpected non-whitespace character after JSON"));
        }
        Ok(value)
    }

    fn parse_value(&mut self) -> Result<Value> {
        let mut stack: Vec<Frame> = Vec::new();
        'value: loop {
            self.skip_ws();
            // Parse one value, or open a container and loop.
            let mut value = match self.peek() {
                Some(b'[') => {
                    self.pos += 1;
                    self.enter(&stack)?;
                    self.skip_ws();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        Value::Array(Vec::new())
                    } else {
                        stack.push(Frame::Array(Vec::new()));
                        continue 'value;
                    }
                }
                Some(b'{') => {
                    self.pos += 1;
                    self.enter(&stack)?;
                    self.skip_ws();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        Value::Object(Object::new())
                    } else {
                        let key = self.parse_key()?;
                        stack.push(Frame::Object(Vec::new(), key));
                        continue 'value;
                    }
                }
                _ => self.parse_scalar(matches!(stack.last(), Some(Frame::Array(_))))?,
            };
            // Attach the value to its container, closing containers as they end.
            loop {
                let Some(frame) = stack.last_mut() else {
                    return Ok(value);
                };
                self.skip_ws();
                match frame {
                    Frame::Array(items) => {
                        items.push(value);
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                continue 'value;
                            }
                            Some(b']') => {
                                self.pos += 1;
                                let Some(Frame::Array(items)) = stack.pop() else {
                                    unreachable!("top frame is an array")
                                };
                                value = Value::Array(items);
                            }
                            _ => return Err(self.error("Expected ',' or ']' after array element")),
                        }
                    }
                    Frame::Object(entries, key) => {
                        entries.push((std::mem::take(key), value));
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_ws();
                                *key = self.parse_key()?;
                                continue 'value;
                            }
                            Some(b'}') => {
                                self.pos += 1;
                                let Some(Frame::Object(entries, _)) = stack.pop() else {
                                    unreachable!("top frame is an object")
                                };
                                value = Value::Object(Object::from_entries(entries));
                            }
                            _ => return Err(self.error("Expected ',' or '}' after property value")),
                        }
                    }
                }
            }
        }
    }

    fn enter(&self, stack: &[Frame]) -> Result<()> {
        // `stack` holds the containers around this one.
        if stack.len() + 1 > MAX_PARSE_DEPTH {
            return Err(Error::new(
                ErrorKind::NestingLimit,
                format!("JSON nested deeper than {MAX_PARSE_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    fn parse_key(&mut self) -> Result<JsString> {
        self.skip_ws();
        if self.peek() != Some(b'"') {
            return Err(self.error("Expected double-quoted property name"));
        }
        let key = self.parse_string()?;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.error("Expected ':' after property name"));
        }
        self.pos += 1;
        Ok(key)
    }

    fn parse_scalar(&mut self, in_array: bool) -> Result<Value> {
        match self.peek() {
            Some(b'"') => Ok(Value::String(self.parse_string()?)),
            Some(b'-' | b'0'..=b'9') => self.parse_number(),
            Some(b'a'..=b'z' | b'A'..=b'Z') => self.parse_word(in_array),
            _ => Err(self.error("Unexpected token")),
        }
    }

    pub(crate) fn parse_word(&mut self, in_array: bool) -> Result<Value> {
        let start = self.pos;
        while matches!(self.peek(), Some(b'a'..=b'z' | b'A'..=b'Z')) {
            self.pos += 1;
        }
        let value = match &self.bytes[start..self.pos] {
            b"true" => Value::Bool(true),
            b"false" => Value::Bool(false),
            b"null" => Value::Null,
            word if self.lowered => match word {
                b"undefined" => Value::Undefined,
                b"NaN" => Value::Number(f64::NAN),
                b"Infinity" => Value::Number(f64::INFINITY),
                b"bigint" => Value::BigInt,
                b"circular" => Value::Circular,
                b"hole" if in_array => Value::Hole,
                b"raw" if self.next_string < self.strings.len() => {
                    self.next_string += 1;
                    Value::String(JsString::from(self.strings[self.next_string - 1]))
                }
                _ => {
                    self.pos = start;
                    return Err(self.error("Unexpected token"));
                }
            },
            _ => {
                self.pos = start;
                return Err(self.error("Unexpected token"));
            }
        };
        Ok(value)
    }

    fn parse_number(&mut self) -> Result<Value> {
        self.parse_f64().map(Value::Number)
    }

    /// A number literal (or, lowered, `-Infinity`).
    pub(crate) fn parse_f64(&mut self) -> Result<f64> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
            if self.lowered && self.bytes[self.pos..].starts_with(b"Infinity") {
                self.pos += b"Infinity".len();
                return Ok(f64::NEG_INFINITY);
            }
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.skip_digits(),
            _ => return Err(self.error("No number after minus sign")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("Unterminated fractional number"));
            }
            self.skip_digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("Exponent part is missing a number"));
            }
            self.skip_digits();
        }
        // The grammar above is a subset of what value::float parses
        // (correctly rounded), and the slice is ASCII.
        let literal = std::str::from_utf8(&self.bytes[start..self.pos]).map_err(|_| Error::syntax("invalid number"))?;
        Ok(crate::value::float::parse_decimal(literal))
    }

    fn skip_digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
    }

    /// Advances past bytes that a string literal copies verbatim.
    pub(crate) fn skip_plain_string_bytes(&mut self) {
        let rest = &self.bytes[self.pos.min(self.bytes.len())..];
        self.pos += verbatim_run(rest, &STRING_STOP, first_string_stop);
    }

    pub(crate) fn parse_string(&mut self) -> Result<JsString> {
        self.pos += 1; // opening quote
        let mut run_start = self.pos;
        self.skip_plain_string_bytes();
        // Most strings have no escape: one exact allocation, one copy.
        let mut out = JsString::with_capacity(self.pos - run_start);
        loop {
            out.extend_wtf8(&self.bytes[run_start..self.pos]);
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    self.parse_escape(&mut out)?;
                }
                Some(_) => return Err(self.error("Bad control character in string literal")),
                None => return Err(self.error("Unterminated string")),
            }
            run_start = self.pos;
            self.skip_plain_string_bytes();
        }
    }

    fn parse_escape(&mut self, out: &mut JsString) -> Result<()> {
        let Some(b) = self.peek() else {
            return Err(self.error("Unterminated string"));
        };
        self.pos += 1;
        let unit: u16 = match b {
            b'"' => 0x22,
            b'\\' => 0x5C,
            b'/' => 0x2F,
            b'b' => 0x08,
            b'f' => 0x0C,
            b'n' => 0x0A,
            b'r' => 0x0D,
            b't' => 0x09,
            b'u' => {
                let hex = self
                    .bytes
                    .get(self.pos..self.pos + 4)
                    .ok_or_else(|| self.error("Bad Unicode escape"))?;
                let mut unit: u16 = 0;
                for &h in hex {
                    let digit = (h as char)
                        .to_digit(16)
                        .ok_or_else(|| self.error("Bad Unicode escape"))?;
                    unit = unit * 16 + digit as u16;
                }
                self.pos += 4;
                unit
            }
            _ => {
                self.pos -= 1;
                return Err(self.error("Bad escaped character"));
            }
        };
        out.push_code_unit(unit);
        Ok(())
    }
}

/// Bytes a JSON string literal cannot copy verbatim: those that stop a
/// verbatim run when reading (control characters, `"`, `\\`), plus 0xED,
/// which leads a lone surrogate in WTF-8 (or, followed by 0x80..=0x9F, an
/// ordinary U+D000..U+D7FF).
const ESCAPE_CANDIDATE: [bool; 256] = {
    let mut table = STRING_STOP;
    table[0xED] = true;
    table
};

/// Writes `s` as a JSON string literal exactly as well-formed
/// `JSON.stringify` does (lone surrogates as lowercase `\udxxx`).
pub fn write_json_string(s: &JsString, out: &mut String) {
    let bytes = s.as_bytes();
    if bytes.len() < WORD_WISE_MIN {
        return write_json_string_by_runs(s, out);
    }
    if push_escaped(bytes, escape_wtf8, out).is_none() {
        // Unreachable (every lone surrogate is escaped, so what is left is
        // UTF-8); the run-wise writer below is the fallback.
        write_json_string_by_runs(s, out);
    }
}

/// [`write_json_string`] into bytes, escaped straight into `out` (the
/// tree-free canonicalizer's writer: no buffer of its own, no UTF-8 check —
/// what it writes is UTF-8 by construction).
pub(crate) fn write_json_string_bytes(s: &JsString, out: &mut Vec<u8>) {
    escape_wtf8(s.as_bytes(), out);
}

/// [`write_json_utf8`] into bytes: `bytes` are checked in place, then
/// escaped straight into `out`; `None`, `out` unchanged, if not UTF-8.
pub(crate) fn write_json_utf8_bytes(bytes: &[u8], out: &mut Vec<u8>) -> Option<()> {
    std::str::from_utf8(bytes).ok()?;
    escape_json_str(bytes, out);
    Some(())
}

/// Escapes `bytes` (with `escape`) into a buffer of its own, then appends
/// it to `out` if it is UTF-8 — its one check; `None`, `out` unchanged, if
/// not.
fn push_escaped(bytes: &[u8], escape: fn(&[u8], &mut Vec<u8>), out: &mut String) -> Option<()> {
    let mut escaped = Vec::with_capacity(bytes.len() + bytes.len() / 8 + 16);
    escape(bytes, &mut escaped);
    out.push_str(std::str::from_utf8(&escaped).ok()?);
    Some(())
}

/// Strings shorter than this (bytes) are written run by run: for them a
/// buffer of their own and its UTF-8 check cost more than the runs'
/// copies (measured in docs/performance.md).
const WORD_WISE_MIN: usize = 64;

/// [`escape_json_str`] for WTF-8: also stops at 0xED, which leads a lone
/// surrogate (escaped) or an ordinary U+D000..U+D7FF (copied).
fn escape_wtf8(bytes: &[u8], escaped: &mut Vec<u8>) {
    escape_words(
        bytes,
        escaped,
        &ESCAPE_CANDIDATE,
        first_escape_candidate,
        escape_candidate,
    );
}

/// Writes the byte `b` at `pos` — escaped if it is a stop, `\udxxx` for a
/// lone surrogate, as it is otherwise — and says how many bytes it took.
fn escape_candidate(bytes: &[u8], pos: usize, b: u8, escaped: &mut Vec<u8>) -> usize {
    if STRING_STOP[b as usize] {
        push_escape_byte(b, escaped);
        return 1;
    }
    if b == 0xED && bytes.get(pos + 1).is_some_and(|&n| n >= 0xA0) {
        let (unit, width) = crate::js_string::decode_at(bytes, pos);
        push_unicode_escape_byte(unit, escaped);
        return width;
    }
    escaped.push(b);
    1
}

/// The run-wise [`write_json_string`]: the fallback of the word-wise one.
fn write_json_string_by_runs(s: &JsString, out: &mut String) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push('"');
    let mut run_start = 0;
    let mut pos = 0;
    loop {
        // Skip, in one tight scan, everything that is copied verbatim.
        pos += verbatim_run(&bytes[pos..], &ESCAPE_CANDIDATE, first_escape_candidate);
        let Some(&b) = bytes.get(pos) else { break };
        let lone_surrogate = b == 0xED && bytes.get(pos + 1).is_some_and(|&n| n >= 0xA0);
        if b == 0xED && !lone_surrogate {
            pos += 1;
            continue;
        }
        push_wtf8_run(out, &bytes[run_start..pos]);
        if lone_surrogate {
            let (cp, width) = crate::js_string::decode_at(bytes, pos);
            push_unicode_escape(cp, out);
            pos += width;
        } else {
            push_escape(b, out);
            pos += 1;
        }
        run_start = pos;
    }
    push_wtf8_run(out, &bytes[run_start..]);
    out.push('"');
}

/// [`write_json_string`] for text that is already well-formed UTF-8 (no
/// lone surrogate can occur): the same literal, without the surrogate
/// checks or re-validating each run — the binding hands large string
/// arguments over this way, raw, instead of `JSON.stringify`'d.
///
/// It shares [`write_json_string`]'s word loop, compiled once for each
/// (a loop choosing at run time how to copy each run measured 0.71–0.79×
/// on the raw-string rows in wasm: docs/performance.md).
///
/// ```
/// let mut out = String::new();
/// doom_loop::json::write_json_str("tab\there \"x\" \u{1}é", &mut out);
/// assert_eq!(out, r#""tab\there \"x\" \u0001é""#);
/// ```
pub fn write_json_str(s: &str, out: &mut String) {
    if write_json_utf8(s.as_bytes(), out).is_none() {
        // Unreachable (escaping UTF-8 keeps it UTF-8); the tree's writer
        // is the fallback rather than a panic.
        write_json_string(&JsString::from(s), out);
    }
}

/// [`write_json_str`] for text given as bytes not yet known to be UTF-8:
/// the escaped literal's own UTF-8 check is the only one (escaping keeps
/// every byte that is not a stop, so the literal is UTF-8 exactly when
/// the text is). `None`, with `out` unchanged, when it is not.
pub(crate) fn write_json_utf8(bytes: &[u8], out: &mut String) -> Option<()> {
    push_escaped(bytes, escape_json_str, out)
}

/// The literal of UTF-8 `bytes` into `escaped` (see [`escape_words`]).
fn escape_json_str(bytes: &[u8], escaped: &mut Vec<u8>) {
    let stop = |_: &[u8], _: usize, stop: u8, escaped: &mut Vec<u8>| {
        push_escape_byte(stop, escaped);
        1
    };
    escape_words(bytes, escaped, &STRING_STOP, first_string_stop, stop);
}

/// The literal of `bytes` into `escaped`, eight bytes a step: each step
/// copies a whole word (a fixed-size copy is two plain stores in wasm,
/// where a copy of a run's variable length is a `memory.copy`, whose fixed
/// cost is most of a short run's) and takes back what followed the word's
/// first byte that may need escaping (`first`; the last few bytes go one by
/// one through `table`), which `candidate` writes (given the input, its
/// position and the byte), answering how many bytes it took. Generic, not
/// function pointers: each writer gets its own loop with both inlined.
fn escape_words(
    bytes: &[u8],
    escaped: &mut Vec<u8>,
    table: &[bool; 256],
    first: impl Fn(u64) -> Option<usize>,
    candidate: impl Fn(&[u8], usize, u8, &mut Vec<u8>) -> usize,
) {
    escaped.push(b'"');
    let mut pos = 0;
    while let Some(chunk) = bytes.get(pos..pos + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        escaped.extend_from_slice(&word);
        let Some(at) = first(u64::from_le_bytes(word)) else {
            pos += 8;
            continue;
        };
        escaped.truncate(escaped.len() - 8 + at);
        pos += at;
        pos += candidate(bytes, pos, word[at], escaped);
    }
    while let Some(&b) = bytes.get(pos) {
        if table[b as usize] {
            pos += candidate(bytes, pos, b, escaped);
        } else {
            escaped.push(b);
            pos += 1;
        }
    }
    escaped.push(b'"');
}

/// [`push_unicode_escape`] into bytes.
fn push_unicode_escape_byte(unit: u32, escaped: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digit = |shift: u32| HEX[((unit >> shift) & 0xF) as usize];
    escaped.extend_from_slice(&[b'\\', b'u', digit(12), digit(8), digit(4), digit(0)]);
}

/// [`push_escape`] into bytes. Inlined into the word loops: a file an edit
/// carries meets a quote or a newline every few dozen bytes, and a call per
/// escape was a tenth of escaping such a string (docs/performance.md).
#[inline(always)]
fn push_escape_byte(b: u8, escaped: &mut Vec<u8>) {
    match SHORT_ESCAPE[b as usize] {
        0 => push_control_escape_byte(b, escaped),
        short => escaped.extend_from_slice(&[b'\\', short]),
    }
}

/// The letter of a byte's short escape (`"` → `"`, newline → `n`, …); 0
/// where `JSON.stringify` writes `\u00xx` instead.
const SHORT_ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[0x08] = b'b';
    table[0x0C] = b'f';
    table[b'\n' as usize] = b'n';
    table[b'\r' as usize] = b'r';
    table[b'\t' as usize] = b't';
    table
};

/// The `\u00xx` of a control character: rare, so kept out of the loops.
#[cold]
#[inline(never)]
fn push_control_escape_byte(b: u8, escaped: &mut Vec<u8>) {
    push_unicode_escape_byte(u32::from(b), escaped);
}

/// The escape `JSON.stringify` writes for an ASCII byte that cannot stand
/// in a string literal: the short forms, else `\u00xx`.
fn push_escape(b: u8, out: &mut String) {
    match SHORT_ESCAPE[b as usize] {
        0 => push_unicode_escape(u32::from(b), out),
        short => out.extend(['\\', char::from(short)]),
    }
}

/// `\uxxxx` with lowercase hex, as `JSON.stringify` writes it.
fn push_unicode_escape(unit: u32, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push_str("\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[((unit >> shift) & 0xF) as usize] as char);
    }
}

/// Appends a run of WTF-8 bytes that holds no lone surrogate.
fn push_wtf8_run(out: &mut String, run: &[u8]) {
    // Runs are cut only at ASCII bytes and before lone surrogates, so each
    // run is well-formed UTF-8.
    if let Ok(text) = std::str::from_utf8(run) {
        out.push_str(text);
    }
}

/// Writes a finite number as ECMAScript `Number.prototype.toString` (which
/// `JSON.stringify` and RFC 8785 use); non-finite numbers write `null`, as
/// `JSON.stringify` does.
pub fn write_number(n: f64, out: &mut String) {
    if !n.is_finite() {
        out.push_str("null");
    } else if n == 0.0 {
        out.push('0');
    } else if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        // Safe integers: their digits are exactly the shortest form, and
        // most key-material numbers are integers.
        write_integer(n as i64, out);
    } else {
        let mut buffer = ryu_js::Buffer::new();
        out.push_str(buffer.format_finite(n));
    }
}

fn write_integer(n: i64, out: &mut String) {
    if n < 0 {
        out.push('-');
    }
    let mut digits = [0u8; 20];
    let mut len = 0;
    let mut rest = n.unsigned_abs();
    loop {
        digits[len] = b'0' + (rest % 10) as u8;
        len += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    for &d in digits[..len].iter().rev() {
        out.push(d as char);
    }
}

/// A JS number as `String(n)` and template literals print it (NaN and
/// ±Infinity included, which JSON writes as `null`).
pub fn js_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".to_string();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    let mut out = String::new();
    write_number(n, &mut out);
    out
}

/// Serializes a value as `JSON.stringify` would (`undefined` entries
/// dropped, holes and non-finite numbers as `null`). Top-level
/// [`Value::Undefined`] writes `null`.
pub fn to_json(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Null | Value::Undefined | Value::Hole | Value::BigInt | Value::Circular => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(*n, out),
        Value::String(s) => write_json_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(object) => {
            out.push('{');
            let mut first = true;
            for (key, item) in object.iter() {
                if matches!(item, Value::Undefined) {
                    continue;
                }
                if !first {
                    out.push(',');
                }
                first = false;
                write_json_string(key, out);
                out.push(':');
                write_value(item, out);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_strings_parse_into_the_string_values_they_stand_for() {
        let strings = ["a \"b\"\n\u{1} é 😀", "raw", ""];
        let parsed = parse_lowered_with_strings(r#"[raw,{"raw":raw},"raw",raw]"#, &strings).unwrap();
        let ordinary = r#"["a \"b\"\n\u0001 é 😀",{"raw":"raw"},"raw",""]"#;
        assert_eq!(parsed, parse_lowered(ordinary).unwrap());
        for (text, strings) in [
            ("raw", &["a", "b"][..]),
            ("[raw,raw]", &["a"][..]),
            ("{raw:1}", &["a"][..]),
            ("rawr", &["a"][..]),
        ] {
            assert_eq!(
                parse_lowered_with_strings(text, strings).unwrap_err().kind(),
                ErrorKind::Syntax,
                "{text}"
            );
        }
        // Without strings the word is not part of the lowered form.
        assert!(parse_lowered("raw").is_err());
    }

    #[test]
    fn numbers_round_like_json_parse() {
        assert_eq!(parse("9007199254740993").unwrap(), Value::Number(9007199254740992.0));
        assert_eq!(parse("1e400").unwrap(), Value::Number(f64::INFINITY));
        let Value::Number(z) = parse("-0e0").unwrap() else {
            panic!()
        };
        assert!(z == 0.0 && z.is_sign_negative());
    }

    #[test]
    fn swar_word_tests_agree_with_the_tables() {
        for byte in 0..=255u8 {
            for at in 0..8 {
                let mut chunk = [b'a'; 8];
                chunk[at] = byte;
                let word = le_word(&chunk);
                assert_eq!(
                    first_string_stop(word).is_some(),
                    STRING_STOP[byte as usize],
                    "byte {byte:#x} at {at}"
                );
                assert_eq!(
                    first_escape_candidate(word).is_some(),
                    ESCAPE_CANDIDATE[byte as usize],
                    "byte {byte:#x} at {at}"
                );
            }
        }
        let busy = le_word(&[0x80, 0xFF, 0x7F, 0x21, 0x5B, 0x5D, 0xC3, 0xEE]);
        assert!(first_string_stop(busy).is_none() && first_escape_candidate(busy).is_none());
    }

    /// The first stop (or escape candidate) a word's masks name is the
    /// first byte in the table, for every byte value after every other one
    /// (a borrow from an earlier match must not move it), at every position.
    #[test]
    fn first_string_stop_is_the_first_byte_in_the_table() {
        for first in 0..=255u8 {
            for second in 0..=255u8 {
                for at in 0..7 {
                    let mut chunk = [b'a'; 8];
                    chunk[at] = first;
                    chunk[at + 1] = second;
                    let naive = chunk.iter().position(|&b| STRING_STOP[b as usize]);
                    assert_eq!(first_string_stop(le_word(&chunk)), naive, "{chunk:?}");
                    let naive = chunk.iter().position(|&b| ESCAPE_CANDIDATE[b as usize]);
                    assert_eq!(first_escape_candidate(le_word(&chunk)), naive, "{chunk:?}");
                }
            }
        }
    }

    /// `write_json_str` and `write_json_string` (eight bytes a step)
    /// against a naive oracle: each code point escaped as `JSON.stringify`
    /// escapes it, over strings with every kind of stop at every offset of
    /// a word, multi-byte text and (WTF-8) lone surrogates and U+D000..
    /// around them, short (run-wise) and from `WORD_WISE_MIN` (word-wise).
    #[test]
    fn json_string_literals_match_a_code_point_oracle() {
        fn naive(s: &JsString) -> String {
            let mut out = String::from("\"");
            for unit in s.code_points() {
                match char::from_u32(unit) {
                    Some('"') => out.push_str("\\\""),
                    Some('\\') => out.push_str("\\\\"),
                    Some('\u{8}') => out.push_str("\\b"),
                    Some('\u{c}') => out.push_str("\\f"),
                    Some('\n') => out.push_str("\\n"),
                    Some('\r') => out.push_str("\\r"),
                    Some('\t') => out.push_str("\\t"),
                    Some(c) if (c as u32) >= 0x20 => out.push(c),
                    _ => out.push_str(&format!("\\u{unit:04x}")),
                }
            }
            out.push('"');
            out
        }
        let pieces = [
            "a", "é", "€", "😀", "\u{d7ff}", "\u{d000}", "\"", "\\", "\n", "\t", "\u{0}", "\u{1f}", "\u{7f}", " ",
        ];
        let mut rng = crate::test_rng::XorShift(0xD1B5_4A32_D192_ED03);
        for _ in 0..20_000 {
            let (mut text, mut wtf8) = (String::new(), JsString::new());
            let length = if rng.below(2) == 0 {
                rng.below(26)
            } else {
                WORD_WISE_MIN + rng.below(140)
            };
            while text.len() < length {
                let piece = rng.pick(&pieces);
                text.push_str(piece);
                wtf8.push_str(piece);
                if rng.below(6) == 0 {
                    wtf8.push_code_unit(rng.pick(&[0xD800, 0xDBFF, 0xDC00, 0xDFFF]));
                }
            }
            let mut out = String::from("prefix");
            write_json_str(&text, &mut out);
            assert_eq!(
                out,
                format!("prefix{}", naive(&JsString::from(text.as_str()))),
                "{text:?}"
            );
            let mut out = String::from("prefix");
            write_json_string(&wtf8, &mut out);
            assert_eq!(out, format!("prefix{}", naive(&wtf8)), "{wtf8:?}");
            // The word-wise escapers themselves, past the fallback a wrong
            // literal that is not UTF-8 would take.
            let (mut utf8, mut wide) = (Vec::new(), Vec::new());
            escape_json_str(text.as_bytes(), &mut utf8);
            assert_eq!(utf8, naive(&JsString::from(text.as_str())).into_bytes(), "{text:?}");
            escape_wtf8(wtf8.as_bytes(), &mut wide);
            assert_eq!(wide, naive(&wtf8).into_bytes(), "{wtf8:?}");
            // The tree-free canonicalizer's byte writers, appending.
            let mut bytes = b"prefix".to_vec();
            write_json_string_bytes(&wtf8, &mut bytes);
            assert_eq!(bytes, format!("prefix{}", naive(&wtf8)).into_bytes(), "{wtf8:?}");
            let mut bytes = b"prefix".to_vec();
            assert!(write_json_utf8_bytes(text.as_bytes(), &mut bytes).is_some());
            let expected = format!("prefix{}", naive(&JsString::from(text.as_str())));
            assert_eq!(bytes, expected.into_bytes(), "{text:?}");
        }
    }

    #[test]
    fn raw_bytes_that_are_not_utf8_are_refused_and_nothing_written() {
        // A stray continuation byte, a truncated sequence, a lone surrogate
        // in WTF-8 (UTF-8 cannot carry it), each at word and tail positions.
        for bad in [&[0x80][..], &[0xE2, 0x82], &[0xED, 0xA0, 0x80]] {
            for at in [0, 3, 11] {
                let mut input = vec![b'a'; 16];
                input.splice(at..at, bad.iter().copied());
                let mut out = b"prefix".to_vec();
                assert!(write_json_utf8_bytes(&input, &mut out).is_none(), "{input:?}");
                assert_eq!(out, b"prefix", "{input:?}");
            }
        }
    }

    #[test]
    fn grammar_is_strict() {
        for bad in [
            "01",
            "1.",
            ".5",
            "+1",
            "[1,]",
            "{\"a\":1,}",
            "'a'",
            "NaN",
            "\"\t\"",
            "tru",
            "[",
            "\"\\x\"",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(parse(" [1 , {\"a\" : [ ] } ]\r\n").is_ok());
    }

    #[test]
    fn lone_surrogates_survive_and_pairs_join() {
        let v = parse(r#""\ud83c\udf89\ud800x\uDC00""#).unwrap();
        let Value::String(s) = &v else { panic!() };
        assert_eq!(
            s.code_units().collect::<Vec<_>>(),
            vec![0xD83C, 0xDF89, 0xD800, 0x78, 0xDC00]
        );
        assert_eq!(to_json(&v), "\"🎉\\ud800x\\udc00\"");
    }

    #[test]
    fn duplicate_keys_keep_first_position_and_last_value() {
        let v = parse(r#"{"b":1,"a":2,"b":3,"1":4}"#).unwrap();
        assert_eq!(to_json(&v), r#"{"1":4,"b":3,"a":2}"#);
    }

    #[test]
    fn nesting_is_bounded_without_recursion() {
        let deep = "[".repeat(100_000);
        assert_eq!(parse(&deep).unwrap_err().kind(), ErrorKind::NestingLimit);
        let ok = format!("{}{}", "[".repeat(MAX_PARSE_DEPTH), "]".repeat(MAX_PARSE_DEPTH));
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn lowered_words_only_in_lowered_mode() {
        let v = parse_lowered("[undefined,NaN,-Infinity,hole,bigint,circular]").unwrap();
        assert_eq!(to_json(&v), "[null,null,null,null,null,null]");
        assert!(parse("[undefined]").is_err());
        assert!(parse_lowered("{\"a\":hole}").is_err());
    }

    #[test]
    fn number_formatting_matches_ecmascript() {
        for (n, s) in [
            (1e21, "1e+21"),
            (5e-324, "5e-324"),
            (-0.0, "0"),
            (0.1, "0.1"),
            (1e-7, "1e-7"),
            (123456789012345680000.0, "123456789012345680000"),
        ] {
            let mut out = String::new();
            write_number(n, &mut out);
            assert_eq!(out, s);
        }
    }
}
