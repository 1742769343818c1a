//! RFC 8785 (JCS) canonical JSON, exactly as the reference builds it.
//!
//! The reference's `canonicalizeKeyMaterial` is a recursive walk: object
//! keys sorted by UTF-16 code units, `undefined`/function/symbol entries
//! dropped from objects and written `null` in arrays, strings and numbers
//! written as `JSON.stringify` writes them (`-0` → `0`, `1e21` → `1e+21`,
//! lone surrogates as `\udxxx`), and four failures with fixed messages:
//! non-finite numbers, bigints, cycles, and nesting past
//! [`MAX_CANONICALIZE_DEPTH`]. Failures surface in the reference's traversal
//! order (sorted keys, array order, depth checked first), so a value with
//! two problems fails with the same message here as there.
//!
//! One pass, one output buffer: each key is sorted once and written once,
//! never re-serialized or re-parsed, so the cost is linear in the input
//! (plus the key sorts).

use crate::error::{Error, ErrorKind, Result};
use std::cmp::Ordering;

use crate::js_string::cmp_wtf8_as_utf16;
use crate::json::{
    parse_lowered, sorted_indices, write_json_string, write_json_string_bytes, write_json_utf8_bytes, write_number,
    Parser, Value,
};

/// Deepest nesting canonicalization accepts (the reference's
/// `MAX_CANONICALIZE_DEPTH`).
pub const MAX_CANONICALIZE_DEPTH: usize = 64;

/// The reference's message for nesting past [`MAX_CANONICALIZE_DEPTH`].
pub const TOO_DEEP_MESSAGE: &str =
    "Cannot canonicalize key material nested deeper than 64 levels for doom-loop fingerprinting";
/// The reference's message for NaN and ±Infinity.
pub const NON_FINITE_MESSAGE: &str =
    "Cannot canonicalize non-finite number (NaN/Infinity) for doom-loop fingerprinting: RFC 8785 has no representation";
/// The reference's message for bigints.
pub const BIGINT_MESSAGE: &str = "Cannot canonicalize bigint for doom-loop fingerprinting: RFC 8785 has no representation (convert to string or number in loopKey)";
/// The reference's message for cycles.
pub const CIRCULAR_MESSAGE: &str = "Cannot canonicalize circular key material for doom-loop fingerprinting";

/// Canonical JSON of `value` (the reference's `canonicalizeKeyMaterial`).
///
/// # Errors
/// [`ErrorKind::NonFinite`], [`ErrorKind::BigInt`], [`ErrorKind::Circular`]
/// or [`ErrorKind::TooDeep`], with the reference's messages.
///
/// ```
/// use doom_loop::{canonicalize, json::parse};
/// let v = parse(r#"{"b":[1e21,-0],"a":"\ud800"}"#).unwrap();
/// assert_eq!(canonicalize(&v).unwrap(), r#"{"a":"\ud800","b":[1e+21,0]}"#);
/// ```
pub fn canonicalize(value: &Value) -> Result<String> {
    let mut out = String::new();
    canonicalize_into(value, &mut out)?;
    Ok(out)
}

/// Appends the canonical JSON of `value` to `out`. On error `out` holds a
/// partial write.
///
/// # Errors
/// As [`canonicalize`].
pub fn canonicalize_into(value: &Value, out: &mut String) -> Result<()> {
    write_canonical(value, 0, out)
}

fn write_canonical(value: &Value, depth: usize, out: &mut String) -> Result<()> {
    if depth > MAX_CANONICALIZE_DEPTH {
        return Err(Error::new(ErrorKind::TooDeep, TOO_DEEP_MESSAGE));
    }
    match value {
        Value::Null | Value::Undefined | Value::Hole => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) if !n.is_finite() => return Err(Error::new(ErrorKind::NonFinite, NON_FINITE_MESSAGE)),
        Value::Number(n) => write_number(*n, out),
        Value::String(s) => write_json_string(s, out),
        Value::BigInt => return Err(Error::new(ErrorKind::BigInt, BIGINT_MESSAGE)),
        Value::Circular => return Err(Error::new(ErrorKind::Circular, CIRCULAR_MESSAGE)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                // A hole is skipped by the reference's `map` and joins as
                // nothing: `[1,,3]` (a reference quirk kept for parity).
                if !matches!(item, Value::Hole) {
                    write_canonical(item, depth + 1, out)?;
                }
            }
            out.push(']');
        }
        Value::Object(object) => {
            let kept = || object.iter().filter(|(_, v)| !matches!(v, Value::Undefined));
            out.push('{');
            // Keys are unique: in order unless some pair is out of order.
            if kept()
                .zip(kept().skip(1))
                .all(|((a, _), (b, _))| a.cmp_utf16(b) == Ordering::Less)
            {
                for (i, (key, item)) in kept().enumerate() {
                    write_member(i, key, item, depth, out)?;
                }
            } else {
                let entries: Vec<_> = kept().collect();
                // Keys are unique, so an unstable sort gives the one order there is.
                let order = sorted_indices(entries.len(), &|a, b| entries[a].0.cmp_utf16(entries[b].0));
                for (i, (key, item)) in order.into_iter().map(|i| entries[i]).enumerate() {
                    write_member(i, key, item, depth, out)?;
                }
            }
            out.push('}');
        }
    }
    Ok(())
}

/// `"key":value`, after a comma unless it is the object's first member.
fn write_member(index: usize, key: &crate::JsString, item: &Value, depth: usize, out: &mut String) -> Result<()> {
    if index > 0 {
        out.push(',');
    }
    write_json_string(key, out);
    out.push(':');
    write_canonical(item, depth + 1, out)
}

/// Canonical JSON of a value given in the binding's lowered text form (see
/// `parse_lowered`): the same answer, and the same errors, as
/// `canonicalize(&parse_lowered(text)?)`.
///
/// The common case — key material that is plain JSON, as `JSON.stringify`
/// writes it — is canonicalized straight from the text, without building a
/// value tree: strings without escapes and short integers are copied
/// verbatim, and only objects whose keys are out of order are rewritten.
/// Anything else (an error to report, a duplicate key, nesting past the
/// limit, the JS-only words that fail) takes the tree path, which alone
/// decides errors and their order.
///
/// # Errors
/// As `parse_lowered` and [`canonicalize`].
///
/// ```
/// use doom_loop::canonical::canonicalize_lowered;
/// assert_eq!(canonicalize_lowered(r#"{"b":[1.50,undefined,hole],"a":undefined}"#).unwrap(), r#"{"b":[1.5,null,]}"#);
/// ```
pub fn canonicalize_lowered(text: &str) -> Result<String> {
    let mut out = Vec::with_capacity(text.len());
    canonicalize_lowered_into(text, &mut out)?;
    // UTF-8 always (the input is, and every lone surrogate is escaped);
    // were it not, the tree path answers rather than a panic.
    String::from_utf8(out).or_else(|_| canonicalize(&parse_lowered(text)?))
}

/// Appends [`canonicalize_lowered`]'s output to `out`, as bytes: the
/// fingerprint only hashes them, so the text is written once, with no
/// UTF-8 check of its own (the input is UTF-8, the escapes ASCII). On
/// error `out` is as it was.
///
/// # Errors
/// As [`canonicalize_lowered`].
pub(crate) fn canonicalize_lowered_into(text: &str, out: &mut Vec<u8>) -> Result<()> {
    let mark = out.len();
    if Direct::new(text).document(out).is_some() {
        return Ok(());
    }
    out.truncate(mark);
    let mut tree = String::new();
    canonicalize_into(&parse_lowered(text)?, &mut tree)?;
    out.extend_from_slice(tree.as_bytes());
    Ok(())
}

/// [`canonicalize_lowered_into`] for lowered text whose large strings were
/// handed over raw: each bare word `raw` in `text` stands for the next of
/// `strings` (UTF-8 bytes, not yet escaped nor checked), which is checked
/// and escaped straight into `out` — the binding then never has to
/// `JSON.stringify` a file an edit carries, only copy its UTF-8. Only the
/// tree-free path reads this form: the binding sends it for plain data
/// alone, which that path always takes, and anything it cannot take is an
/// error here (the binding then sends the ordinary lowered text).
///
/// # Errors
/// [`ErrorKind::Syntax`] if the text is not plain lowered JSON that the
/// tree-free path canonicalizes, if it does not use every string once, or
/// if a string is not UTF-8.
pub(crate) fn canonicalize_lowered_with_strings_into(text: &str, strings: &[&[u8]], out: &mut Vec<u8>) -> Result<()> {
    let mut direct = Direct::new(text);
    direct.strings = strings;
    match direct.document(out) {
        Some(()) if direct.next_string == strings.len() => Ok(()),
        _ => Err(Error::new(
            ErrorKind::Syntax,
            "lowered key material with raw strings must be plain JSON that uses each string once",
        )),
    }
}

/// The tree-free canonicalizer over the lowered value that starts `text`
/// (which may go on: a value inside a larger document), each bare word
/// `raw` standing for the next of `strings`: appends its canonical form to
/// `out` and returns where the value ended — the bytes of `text` it spans
/// and how many of `strings` it used. `None` wherever the tree path must
/// decide (the caller then parses the whole document); `out` may then hold
/// a partial write.
pub(crate) fn canonicalize_lowered_prefix_into(
    text: &str,
    strings: &[&[u8]],
    out: &mut Vec<u8>,
) -> Option<(usize, usize)> {
    let mut direct = Direct::new(text);
    direct.strings = strings;
    if direct.value(0, false, out)? == Written::Undefined {
        out.extend_from_slice(b"null");
    }
    Some((direct.parser.pos, direct.next_string))
}

/// What a lowered value wrote, for the container to place.
#[derive(PartialEq)]
enum Written {
    Value,
    /// `undefined` (or a function or symbol): nothing written; `null` in
    /// arrays and at the top, dropped from objects.
    Undefined,
    /// An array hole: nothing written, and nothing to write.
    Hole,
}

/// Where an object key's UTF-16-comparable bytes live.
#[derive(Clone, Copy)]
enum KeyBytes {
    /// An escape-free key, in the input.
    Input(usize, usize),
    /// A decoded key (WTF-8), in [`Direct::decoded_keys`].
    Decoded(usize, usize),
}

/// One member of the object being canonicalized: its key and the span of
/// `"key":value` in the output (empty for a dropped `undefined` member,
/// which still counts for duplicate keys).
struct Member {
    key: KeyBytes,
    start: usize,
    end: usize,
}

/// The tree-free canonicalizer. Returns `None` whenever the tree path must
/// decide, so it never has to reproduce an error message or order.
struct Direct<'a> {
    text: &'a str,
    parser: Parser<'a>,
    members: Vec<Member>,
    decoded_keys: Vec<u8>,
    scratch: Vec<u8>,
    /// The member order of the object being rewritten (reused).
    order: Vec<usize>,
    /// A number JS prints differently from its literal (a 17-digit double,
    /// an exponent), printed before it is copied out (reused).
    digits: String,
    /// The raw strings the bare word `raw` stands for, in order (UTF-8,
    /// checked once, as their escaped literals).
    strings: &'a [&'a [u8]],
    next_string: usize,
}

impl<'a> Direct<'a> {
    fn new(text: &'a str) -> Self {
        Direct {
            text,
            parser: Parser::new(text.as_bytes(), true),
            members: Vec::with_capacity(16),
            decoded_keys: Vec::new(),
            scratch: Vec::new(),
            order: Vec::new(),
            digits: String::new(),
            strings: &[],
            next_string: 0,
        }
    }

    fn document(&mut self, out: &mut Vec<u8>) -> Option<()> {
        if self.value(0, false, out)? == Written::Undefined {
            out.extend_from_slice(b"null");
        }
        self.parser.skip_ws();
        (self.parser.pos == self.text.len()).then_some(())
    }

    fn value(&mut self, depth: usize, in_array: bool, out: &mut Vec<u8>) -> Option<Written> {
        if depth > MAX_CANONICALIZE_DEPTH {
            return None;
        }
        self.parser.skip_ws();
        match self.parser.peek()? {
            b'[' => self.array(depth, out),
            b'{' => self.object(depth, out),
            b'"' => self.string(out),
            b'-' | b'0'..=b'9' => self.number(out),
            b'r' if !self.strings.is_empty() => self.raw_string(out),
            _ => self.word(in_array, out),
        }
    }

    fn word(&mut self, in_array: bool, out: &mut Vec<u8>) -> Option<Written> {
        match self.parser.parse_word(in_array).ok()? {
            Value::Null => out.extend_from_slice(b"null"),
            Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
            Value::Undefined => return Some(Written::Undefined),
            Value::Hole => return Some(Written::Hole),
            _ => return None,
        }
        Some(Written::Value)
    }

    fn number(&mut self, out: &mut Vec<u8>) -> Option<Written> {
        let start = self.parser.pos;
        if let Some(end) = self.short_integer(start).or_else(|| self.canonical_decimal(start)) {
            self.parser.pos = end;
            out.extend_from_slice(&self.text.as_bytes()[start..end]);
            return Some(Written::Value);
        }
        let n = self.parser.parse_f64().ok().filter(|n| n.is_finite())?;
        self.digits.clear();
        write_number(n, &mut self.digits);
        out.extend_from_slice(self.digits.as_bytes());
        Some(Written::Value)
    }

    /// The end of an integer literal at `start` that JS prints digit for
    /// digit: up to 15 digits (an exact double), no leading zero, not `-0`.
    fn short_integer(&self, start: usize) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let first = start + usize::from(bytes[start] == b'-');
        let digits = bytes[first..].iter().take_while(|b| b.is_ascii_digit()).count();
        let end = first + digits;
        let plain = (1..=15).contains(&digits)
            && (bytes[first] != b'0' || (digits == 1 && first == start))
            && !matches!(bytes.get(end), Some(b'.' | b'e' | b'E'));
        plain.then_some(end)
    }

    /// The end of a decimal literal at `start` that JS prints character for
    /// character: an integer part without leading zeros, a fraction not
    /// ending in `0`, no exponent, at most 15 significant digits, and at
    /// least 1e-6 in magnitude (JS writes smaller numbers with an exponent).
    /// Any decimal of up to 15 significant digits reads back from its double
    /// (a double holds 15 decimal digits), so no shorter decimal reads as the
    /// same double, and these are the digits `Number.prototype.toString` —
    /// and RFC 8785 — write: copying them skips the float parse and print
    /// that every price or score in the arguments would otherwise cost.
    fn canonical_decimal(&self, start: usize) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let digits_from = |at: usize| {
            bytes
                .get(at..)
                .map_or(0, |rest| rest.iter().take_while(|b| b.is_ascii_digit()).count())
        };
        let first = start + usize::from(bytes[start] == b'-');
        let int_digits = digits_from(first);
        if int_digits == 0 || (int_digits > 1 && bytes[first] == b'0') || bytes.get(first + int_digits) != Some(&b'.') {
            return None;
        }
        let fraction = first + int_digits + 1;
        let end = fraction + digits_from(fraction);
        if end == fraction || bytes[end - 1] == b'0' || matches!(bytes.get(end), Some(b'e' | b'E')) {
            return None;
        }
        let significant = if bytes[first] == b'0' {
            let zeros = bytes[fraction..end].iter().take_while(|&&b| b == b'0').count();
            if zeros > 5 {
                return None;
            }
            end - fraction - zeros
        } else {
            int_digits + (end - fraction)
        };
        (significant <= 15).then_some(end)
    }

    fn string(&mut self, out: &mut Vec<u8>) -> Option<Written> {
        match self.canonical_string() {
            Some((start, end, _)) => out.extend_from_slice(&self.text.as_bytes()[start - 1..=end]),
            None => write_json_string_bytes(&self.parser.parse_string().ok()?, out),
        }
        Some(Written::Value)
    }

    /// The bare word `raw`: the next raw string, escaped as
    /// `JSON.stringify` would have written it.
    fn raw_string(&mut self, out: &mut Vec<u8>) -> Option<Written> {
        let rest = &self.text.as_bytes()[self.parser.pos..];
        if !rest.starts_with(b"raw") || rest.get(3).is_some_and(u8::is_ascii_alphabetic) {
            return None;
        }
        let string = self.strings.get(self.next_string)?;
        // Room for the quotes and an escape every eighth byte: growing a
        // megabyte buffer midway costs a quarter of the escaping.
        out.reserve(string.len() + string.len() / 8 + 2);
        write_json_utf8_bytes(string, out)?;
        self.next_string += 1;
        self.parser.pos += 3;
        Some(Written::Value)
    }

    /// Reads a string literal already in canonical form — escapes only the
    /// short ones `JSON.stringify` writes (`\"`, `\\`, `\b`, `\f`, `\n`,
    /// `\r`, `\t`) — returning its span inside the quotes and whether it has
    /// escapes; otherwise leaves the position at the opening quote.
    fn canonical_string(&mut self) -> Option<(usize, usize, bool)> {
        let open = self.parser.pos;
        let bytes = self.text.as_bytes();
        let mut escaped = false;
        self.parser.pos += 1;
        loop {
            self.parser.skip_plain_string_bytes();
            match self.parser.peek() {
                Some(b'"') => {
                    self.parser.pos += 1;
                    return Some((open + 1, self.parser.pos - 1, escaped));
                }
                Some(b'\\')
                    if matches!(
                        bytes.get(self.parser.pos + 1),
                        Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't')
                    ) =>
                {
                    escaped = true;
                    self.parser.pos += 2;
                }
                _ => break,
            }
        }
        self.parser.pos = open;
        None
    }

    fn array(&mut self, depth: usize, out: &mut Vec<u8>) -> Option<Written> {
        self.parser.pos += 1;
        out.push(b'[');
        self.parser.skip_ws();
        if self.parser.peek() == Some(b']') {
            self.parser.pos += 1;
        } else {
            loop {
                // Holes and undefined take their place: `[null,,1]`.
                if self.value(depth + 1, true, out)? == Written::Undefined {
                    out.extend_from_slice(b"null");
                }
                self.parser.skip_ws();
                self.parser.pos += 1;
                match self.text.as_bytes().get(self.parser.pos - 1)? {
                    b',' => out.push(b','),
                    b']' => break,
                    _ => return None,
                }
            }
        }
        out.push(b']');
        Some(Written::Value)
    }

    fn object(&mut self, depth: usize, out: &mut Vec<u8>) -> Option<Written> {
        self.parser.pos += 1;
        let body = out.len() + 1;
        let base = self.members.len();
        out.push(b'{');
        self.parser.skip_ws();
        if self.parser.peek() == Some(b'}') {
            self.parser.pos += 1;
        } else {
            let mut kept = 0;
            loop {
                kept += usize::from(self.member(depth, kept > 0, out)?);
                self.parser.skip_ws();
                self.parser.pos += 1;
                match self.text.as_bytes().get(self.parser.pos - 1)? {
                    b',' => {}
                    b'}' => break,
                    _ => return None,
                }
            }
        }
        self.order_members(base, body, out)?;
        self.members.truncate(base);
        out.push(b'}');
        Some(Written::Value)
    }

    /// Writes one `"key":value` (after a comma if `after_another`), or
    /// nothing for an undefined value; says whether it wrote.
    fn member(&mut self, depth: usize, after_another: bool, out: &mut Vec<u8>) -> Option<bool> {
        self.parser.skip_ws();
        if self.parser.peek() != Some(b'"') {
            return None;
        }
        let rollback = out.len();
        if after_another {
            out.push(b',');
        }
        let start = out.len();
        // Keys are compared decoded: an escaped key is decoded, once.
        let open = self.parser.pos;
        let key = match self.canonical_string() {
            Some((key_start, key_end, false)) => {
                out.extend_from_slice(&self.text.as_bytes()[key_start - 1..=key_end]);
                KeyBytes::Input(key_start, key_end)
            }
            _ => {
                self.parser.pos = open;
                let key = self.parser.parse_string().ok()?;
                write_json_string_bytes(&key, out);
                let from = self.decoded_keys.len();
                self.decoded_keys.extend_from_slice(key.as_bytes());
                KeyBytes::Decoded(from, self.decoded_keys.len())
            }
        };
        self.parser.skip_ws();
        if self.parser.peek() != Some(b':') {
            return None;
        }
        self.parser.pos += 1;
        out.push(b':');
        let written = match self.value(depth + 1, false, out)? {
            Written::Value => true,
            Written::Undefined => false,
            Written::Hole => return None,
        };
        if !written {
            out.truncate(rollback);
        }
        let end = if written { out.len() } else { start };
        self.members.push(Member { key, start, end });
        Some(written)
    }

    /// Puts the members written since `base` in UTF-16 key order (they are
    /// usually in order already). A duplicate key is left to the tree path,
    /// which keeps JS's last-wins semantics.
    fn order_members(&mut self, base: usize, body: usize, out: &mut Vec<u8>) -> Option<()> {
        let (text, decoded) = (self.text.as_bytes(), &self.decoded_keys);
        let key = |k: KeyBytes| match k {
            KeyBytes::Input(a, b) => &text[a..b],
            KeyBytes::Decoded(a, b) => &decoded[a..b],
        };
        let members = &self.members[base..];
        let cmp = |a: usize, b: usize| cmp_wtf8_as_utf16(key(members[a].key), key(members[b].key));
        if (1..members.len()).all(|i| cmp(i - 1, i) == Ordering::Less) {
            return Some(());
        }
        let order = &mut self.order;
        if members.len() <= INSERTION_SORTED_MEMBERS {
            insertion_sorted_without_duplicates(members.len(), &cmp, order)?;
        } else {
            *order = sorted_indices(members.len(), &cmp);
            if order.windows(2).any(|w| cmp(w[0], w[1]) == Ordering::Equal) {
                return None;
            }
        }
        self.scratch.clear();
        self.scratch.extend_from_slice(&out[body..]);
        out.truncate(body);
        for member in order.iter().map(|&i| &members[i]).filter(|m| m.end > m.start) {
            if out.len() > body {
                out.push(b',');
            }
            out.extend_from_slice(&self.scratch[member.start - body..member.end - body]);
        }
        Some(())
    }
}

/// Objects up to this many members are ordered by insertion sort: the
/// usual handful of keys in a few comparisons, duplicates found on the way,
/// and no allocation (larger objects take the merge sort, not quadratic).
const INSERTION_SORTED_MEMBERS: usize = 32;

/// Fills `order` with `0..len` sorted by `cmp`; `None` on two equal keys.
/// Inserting a key walks left past the greater ones, so the first one it
/// stops at is the greatest not above it: an equal key, if there is one —
/// every duplicate is met.
fn insertion_sorted_without_duplicates(
    len: usize,
    cmp: &dyn Fn(usize, usize) -> Ordering,
    order: &mut Vec<usize>,
) -> Option<()> {
    order.clear();
    order.extend(0..len);
    for i in 1..len {
        let mut j = i;
        while j > 0 {
            match cmp(order[j - 1], order[j]) {
                Ordering::Less => break,
                Ordering::Equal => return None,
                Ordering::Greater => {
                    order.swap(j - 1, j);
                    j -= 1;
                }
            }
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;
    use crate::JsString;

    /// The tree-free path alone, appending to `out` (its text checked as UTF-8).
    fn direct_into(text: &str, out: &mut String) -> Option<()> {
        let mut bytes = out.clone().into_bytes();
        Direct::new(text).document(&mut bytes)?;
        *out = String::from_utf8(bytes).expect("the tree-free path writes UTF-8");
        Some(())
    }

    fn canon(text: &str) -> Result<String> {
        canonicalize(&parse_lowered(text).unwrap())
    }

    fn with_strings(text: &str, strings: &[&str]) -> Result<String> {
        let mut out = Vec::new();
        let strings: Vec<&[u8]> = strings.iter().map(|s| s.as_bytes()).collect();
        canonicalize_lowered_with_strings_into(text, &strings, &mut out)?;
        Ok(String::from_utf8(out).expect("canonical text is UTF-8"))
    }

    #[test]
    fn raw_strings_canonicalize_as_their_json_literals_would() {
        let strings = ["tab\t \"quoted\" back\\slash \u{1} \u{1f} é 😀 \n", "raw", ""];
        let literals: Vec<String> = strings
            .iter()
            .map(|s| crate::json::to_json(&Value::String(JsString::from(*s))))
            .collect();
        for (raw, ordinary) in [
            ("raw", literals[0].clone()),
            (
                "{\"z\":raw,\"a\":[raw, raw ,1]}",
                format!("{{\"z\":{},\"a\":[{},{},1]}}", literals[0], literals[1], literals[2]),
            ),
            (
                "[{\"raw\":raw},\"raw\",undefined,raw,raw]",
                format!(
                    "[{{\"raw\":{}}},\"raw\",undefined,{},{}]",
                    literals[0], literals[1], literals[2]
                ),
            ),
        ] {
            let count = raw.matches("raw").count() - raw.matches("\"raw\"").count();
            assert_eq!(with_strings(raw, &strings[..count]), canon(&ordinary), "{raw}");
        }
    }

    #[test]
    fn raw_strings_must_be_used_once_each_and_only_as_values() {
        for (text, strings) in [
            ("raw", &["a", "b"][..]),
            ("[raw,raw]", &["a"][..]),
            ("{raw:1}", &["a"][..]),
            ("rawr", &["a"][..]),
            ("[1,2", &["a"][..]),
            ("NaN", &["a"][..]),
        ] {
            let error = with_strings(text, strings).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::Syntax, "{text}");
        }
        // Without strings the word is not part of the lowered form at all.
        assert!(canonicalize_lowered("raw").is_err());
        // A raw string that is not UTF-8 (no JS string encodes to it) is
        // refused, never hashed as it came.
        let mut out = Vec::new();
        let not_utf8: &[&[u8]] = &[b"ok", &[b'x', 0xFF, b'y']];
        let error = canonicalize_lowered_with_strings_into("[raw,raw]", not_utf8, &mut out).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Syntax);
    }

    #[test]
    fn js_only_values_follow_the_reference() {
        assert_eq!(canon("[undefined,hole,1,hole]").unwrap(), "[null,,1,]");
        assert_eq!(canon("{\"a\":undefined,\"b\":1}").unwrap(), "{\"b\":1}");
        assert_eq!(canon("undefined").unwrap(), "null");
        assert_eq!(canon("{\"b\":NaN,\"a\":bigint}").unwrap_err().kind(), ErrorKind::BigInt);
        assert_eq!(canon("[circular]").unwrap_err().message(), CIRCULAR_MESSAGE);
    }

    /// The tree-free path must not silently hand plain JSON to the tree
    /// path (correct, but the speed is the point of it).
    #[test]
    fn plain_json_never_needs_the_tree() {
        for text in [
            r#"{"b\n":1,"a":"x\"y\\z\t","\u00e9":[1.5,-0,1e21,007e0]}"#.replace("007e0", "7e0"),
            r#"{"z":{"y":[undefined,hole,null,true,false]},"a":undefined,"\ud800":"\ud800"}"#.to_string(),
            "[12345678901234567890,-12,0,-0.0]".to_string(),
        ] {
            let mut out = String::new();
            assert!(direct_into(&text, &mut out).is_some(), "{text}");
            assert_eq!(out, canonicalize(&parse_lowered(&text).unwrap()).unwrap());
        }
        for needs_tree in [
            r#"{"a":1,"a":2}"#,
            "[NaN]",
            r#"{"a":bigint}"#,
            "[circular]",
            "1 2",
            "hole",
        ] {
            assert!(direct_into(needs_tree, &mut String::new()).is_none(), "{needs_tree}");
        }
    }

    /// The canonical string scanner: escapes every few bytes, at and across
    /// the eight-byte words it skips, and the escapes it must hand to the
    /// tree (`\u` forms, `\/`) or refuse (raw control bytes, a string cut
    /// short), each where a word starts, inside it and at its end.
    #[test]
    fn escape_dense_strings_are_copied_verbatim_or_handed_to_the_tree() {
        for body in [
            r#"x = \"y\"\n"#,
            r#"\\\"\t\r\b\f"#,
            "abcdefg\\\"",
            r#"\u00e9"#,
            r#"a\/b"#,
            "a\u{1}b",
        ] {
            for prefix in ["", "1234567", "12345678", "123456789abcdef"] {
                let text = format!(r#"{{"k":"{prefix}{body}{body}","j":"{body}"}}"#);
                let mut out = String::new();
                let direct = direct_into(&text, &mut out);
                match parse_lowered(&text) {
                    Ok(value) if direct.is_some() => assert_eq!(out, canonicalize(&value).unwrap(), "{text}"),
                    Ok(_) => assert!(body.contains("\\u") || body.contains("\\/"), "{text} needed the tree"),
                    Err(_) => assert!(direct.is_none(), "{text} is not JSON"),
                }
            }
        }
        for cut in [r#""abc"#, r#""abcdefgh\"#, r#""abcdefghijklmnop"#] {
            assert!(direct_into(cut, &mut String::new()).is_none(), "{cut}");
        }
    }

    /// Found by the differential property test while the tree-free path
    /// was written: a duplicate key whose last value is `undefined` must
    /// drop the member (JS keeps the last value), not keep the first.
    #[test]
    fn nested_unsorted_objects_are_reordered_as_the_tree_orders_them() {
        // A 60-level chain of unsorted objects, unsorted objects inside
        // sorted ones and arrays, dropped members among reordered ones, and
        // the output's prefix kept.
        let mut chain = String::from(r#"{"n":1,"leaf":"end"}"#);
        for level in 0..59 {
            chain = format!(r#"{{"level":{level},"child":{chain},"tags":["b",{{"y":1,"x":[{{"q":0,"p":-0}}]}}]}}"#);
        }
        for text in [
            chain,
            r#"{"a":{"d":{"f":1,"e":2},"c":[{"h":1,"g":2},3]},"b":0}"#.to_string(),
            r#"[{"b":1,"a":undefined,"c":{"z":undefined,"y":2,"x":3}},{"k":1,"j":{}}]"#.to_string(),
            r#"{"\ud800":1,"\u00e9":{"b":2,"a":1},"a":[]}"#.to_string(),
            // Unsorted objects whose members are all dropped (an empty
            // body to reorder).
            r#"{"z":{"b":undefined,"a":undefined},"y":[{"d":undefined,"c":undefined}]}"#.to_string(),
        ] {
            let mut out = String::from("tool\n");
            assert!(direct_into(&text, &mut out).is_some(), "{text}");
            assert_eq!(
                out,
                format!("tool\n{}", canonicalize(&parse_lowered(&text).unwrap()).unwrap()),
                "{text}"
            );
        }
    }

    /// Objects reordered at every depth, beside and inside each other, in
    /// arrays, next to dropped members: the tree-free path writes what the
    /// tree path writes. Naive oracle: parse, then canonicalize the tree.
    #[test]
    fn reordered_objects_anywhere_are_assembled_as_the_tree_orders_them() {
        fn value(rng: &mut crate::test_rng::XorShift, depth: usize, out: &mut String) {
            match if depth >= 5 { rng.below(3) } else { rng.below(6) } {
                0 => out.push_str(&rng.below(100).to_string()),
                1 => out.push_str(rng.pick(&[r#""s""#, r#""\"q\"""#, "null", "undefined"])),
                2 => out.push_str("[]"),
                3 => {
                    out.push('[');
                    for i in 0..rng.below(4) {
                        if i > 0 {
                            out.push(',');
                        }
                        value(rng, depth + 1, out);
                    }
                    out.push(']');
                }
                _ => {
                    let mut keys: Vec<char> = "abcdefgh".chars().collect();
                    for i in (1..keys.len()).rev() {
                        keys.swap(i, rng.below(i + 1));
                    }
                    out.push('{');
                    for (i, key) in keys.iter().take(rng.below(6)).enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        out.push_str(&format!(r#""{key}":"#));
                        value(rng, depth + 1, out);
                    }
                    out.push('}');
                }
            }
        }
        let mut rng = crate::test_rng::XorShift(0x9E37_79B9_7F4A_7C15);
        let mut reordered = 0;
        for _ in 0..3000 {
            let mut text = String::new();
            value(&mut rng, 0, &mut text);
            let mut out = String::from("tool\n");
            assert!(direct_into(&text, &mut out).is_some(), "{text}");
            let expected = format!("tool\n{}", canon(&text).unwrap());
            reordered += usize::from(expected != format!("tool\n{}", text.replace(",undefined", "")));
            assert_eq!(out, expected, "{text}");
        }
        assert!(reordered > 500, "too few inputs needed reordering: {reordered}");
    }

    /// The decimals copied verbatim are exactly what parsing and printing
    /// them would write; the naive oracle is the tree path (parse, then
    /// `write_number`), over every placement of the point and the zeros in
    /// literals of 1 to 17 digits, and at the edges of the rule.
    #[test]
    fn decimals_copied_verbatim_are_the_ones_js_prints_digit_for_digit() {
        let mut rng = crate::test_rng::XorShift(0x2545_F491_4F6C_DD1D);
        let mut literals: Vec<String> = [
            "0.000001",
            "0.0000001",
            "-0.000001",
            "0.1",
            "-0.5",
            "0.10",
            "1.0",
            "00.5",
            "0.5e1",
            "123456789012.345",
            "1234567890123.456",
            "999999999999999.9",
            "0.123456789012345",
            "0.1234567890123456",
            "5e-7",
            "1.",
            ".5",
            "-0.0",
            "9007199254740993.5",
            "0.30000000000000004",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for _ in 0..20_000 {
            let digits: String = (0..1 + rng.below(17))
                .map(|_| char::from(b'0' + rng.below(10) as u8))
                .collect();
            let point = rng.below(digits.len() + 1);
            let (int, frac) = digits.split_at(point);
            let int = if int.is_empty() { "0" } else { int };
            let sign = if rng.below(2) == 0 { "-" } else { "" };
            literals.push(format!("{sign}{int}.{frac}"));
            literals.push(format!("{sign}0.{}{frac}", "0".repeat(rng.below(8))));
        }
        let mut copied = 0;
        for literal in &literals {
            let direct = Direct::new(literal);
            let verbatim = direct.canonical_decimal(0);
            let Ok(value) = parse(literal) else {
                assert!(
                    direct_into(literal, &mut String::new()).is_none(),
                    "{literal} is not JSON"
                );
                continue;
            };
            let oracle = canonicalize(&value).unwrap();
            if verbatim == Some(literal.len()) {
                copied += 1;
                assert_eq!(&oracle, literal, "copied verbatim");
            }
            let mut out = String::new();
            if direct_into(literal, &mut out).is_some() {
                assert_eq!(out, oracle, "{literal}");
            }
        }
        assert!(
            copied > 10_000,
            "the rule copied only {copied} of {} literals",
            literals.len()
        );
    }

    /// Objects of every size on both sides of the insertion-sort limit, in
    /// random key order, with and without one duplicate: the direct path
    /// orders them as the tree does and leaves every duplicate to the tree.
    #[test]
    fn objects_of_every_size_are_ordered_and_duplicates_left_to_the_tree() {
        let mut rng = crate::test_rng::XorShift(0x9E37_79B9_7F4A_7C15);
        for len in 1..=(INSERTION_SORTED_MEMBERS + 8) {
            for duplicate in [false, true] {
                let mut keys: Vec<String> = (0..len).map(|i| format!("k{}", i * 7 % 101)).collect();
                if duplicate {
                    let (from, to) = (rng.below(len), rng.below(len));
                    keys[to] = keys[from].clone();
                }
                for i in (1..keys.len()).rev() {
                    keys.swap(i, rng.below(i + 1));
                }
                let has_duplicate = (1..keys.len()).any(|i| keys[..i].contains(&keys[i]));
                let text = format!(
                    "{{{}}}",
                    keys.iter()
                        .enumerate()
                        .map(|(i, k)| format!("\"{k}\":{i}"))
                        .collect::<Vec<_>>()
                        .join(",")
                );
                let mut out = String::new();
                let direct = direct_into(&text, &mut out);
                if has_duplicate {
                    assert!(direct.is_none(), "{text}");
                } else {
                    assert!(direct.is_some(), "{text}");
                    assert_eq!(out, canonicalize(&parse_lowered(&text).unwrap()).unwrap(), "{text}");
                }
            }
        }
    }

    #[test]
    fn duplicate_key_whose_last_value_is_undefined_drops_the_member() {
        let text = r#"{"\ud83d":-0,"\ud83d":undefined}"#;
        assert_eq!(canonicalize_lowered(text).unwrap(), "{}");
    }

    #[test]
    fn depth_is_checked_before_the_value() {
        let at = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        assert!(canonicalize(&parse(&at(64)).unwrap()).is_ok());
        assert_eq!(
            canonicalize(&parse(&at(65)).unwrap()).unwrap_err().kind(),
            ErrorKind::TooDeep
        );
        let empty = format!("{}{}", "[".repeat(65), "]".repeat(65));
        assert!(canonicalize(&parse(&empty).unwrap()).is_ok());
    }
}
