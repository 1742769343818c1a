//! JavaScript strings: any sequence of UTF-16 code units, lone surrogates
//! included, stored as WTF-8.
//!
//! The reference is TypeScript, so every string it touches — tool names,
//! object keys, assistant text — is a JS string that may hold a lone
//! surrogate. Rust's `String` cannot, and replacing one with U+FFFD would
//! change canonical JSON (`"\ud800"` vs `"\ufffd"`), fingerprints, persisted
//! state keys and verdict messages. WTF-8 keeps ASCII and well-formed text
//! byte-identical to UTF-8 (so the common case costs nothing) and encodes a
//! lone surrogate as its 3-byte generalized-UTF-8 form. The invariant kept
//! by every constructor: a surrogate *pair* is always stored as one 4-byte
//! sequence, never as two 3-byte halves, so equality of strings is equality
//! of bytes.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

/// An owned JavaScript string (UTF-16 semantics, WTF-8 storage).
///
/// ```
/// use doom_loop::JsString;
/// let s = JsString::from_code_units(&[0x61, 0xD800]);
/// assert_eq!(s.utf16_len(), 2);
/// assert_eq!(s.to_utf8_lossy(), "a\u{FFFD}");
/// ```
#[derive(Default, PartialEq, Eq, Hash)]
pub struct JsString {
    bytes: Vec<u8>,
}

// By hand for `clone_from`, which the derive leaves at `*self = clone()`:
// copying into a string's own room allocates nothing (the detector's
// per-call bookkeeping reuses its strings this way).
impl Clone for JsString {
    fn clone(&self) -> Self {
        JsString {
            bytes: self.bytes.clone(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.bytes.clone_from(&source.bytes);
    }
}

impl JsString {
    /// The empty string.
    pub const fn new() -> Self {
        JsString { bytes: Vec::new() }
    }

    /// An empty string with room for `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> Self {
        JsString {
            bytes: Vec::with_capacity(capacity),
        }
    }

    /// Builds a string from UTF-16 code units, pairing surrogates where they pair.
    pub fn from_code_units(units: &[u16]) -> Self {
        let mut out = JsString::with_capacity(units.len());
        for &unit in units {
            out.push_code_unit(unit);
        }
        out
    }

    /// The WTF-8 bytes. Identical to UTF-8 when the string is well formed.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The string as `&str` when it holds no lone surrogate.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }

    /// True when the string holds no lone surrogate (JS `isWellFormed()`).
    pub fn is_well_formed(&self) -> bool {
        self.as_str().is_some()
    }

    /// True for the empty string.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Length in UTF-16 code units (JS `.length`).
    pub fn utf16_len(&self) -> usize {
        self.bytes
            .iter()
            .map(|&b| match b {
                0x80..=0xBF => 0,
                0xF0..=0xFF => 2,
                _ => 1,
            })
            .sum()
    }

    /// Appends a well-formed string.
    pub fn push_str(&mut self, s: &str) {
        self.bytes.extend_from_slice(s.as_bytes());
    }

    /// Appends a character.
    pub fn push_char(&mut self, c: char) {
        let mut buf = [0u8; 4];
        self.push_str(c.encode_utf8(&mut buf));
    }

    /// Appends another JS string, joining a trailing lone high surrogate of
    /// `self` with a leading lone low surrogate of `other` (as JS `+` does).
    pub fn push_js(&mut self, other: &JsString) {
        self.extend_wtf8(&other.bytes);
    }

    /// Appends one UTF-16 code unit, completing a pair with a preceding lone
    /// high surrogate.
    pub fn push_code_unit(&mut self, unit: u16) {
        if (0xDC00..=0xDFFF).contains(&unit) && self.ends_with_lone_high() {
            let start = self.bytes.len() - 3;
            let high = decode_surrogate_bytes(&self.bytes[start..]);
            self.bytes.truncate(start);
            let cp = 0x10000 + (((high as u32) - 0xD800) << 10) + ((unit as u32) - 0xDC00);
            // A valid supplementary code point by construction.
            if let Some(c) = char::from_u32(cp) {
                self.push_char(c);
            }
            return;
        }
        match char::from_u32(unit as u32) {
            Some(c) => self.push_char(c),
            None => self.bytes.extend_from_slice(&encode_surrogate(unit)),
        }
    }

    fn ends_with_lone_high(&self) -> bool {
        let n = self.bytes.len();
        n >= 3 && self.bytes[n - 3] == 0xED && (0xA0..=0xAF).contains(&self.bytes[n - 2])
    }

    /// Iterates the UTF-16 code units.
    pub fn code_units(&self) -> CodeUnits<'_> {
        CodeUnits {
            bytes: &self.bytes,
            pos: 0,
            pending_low: None,
        }
    }

    /// Iterates the code points, lone surrogates yielded as themselves
    /// (`0xD800..=0xDFFF`).
    pub fn code_points(&self) -> CodePoints<'_> {
        CodePoints {
            bytes: &self.bytes,
            pos: 0,
        }
    }

    /// UTF-8 with each lone surrogate replaced by U+FFFD — what JS
    /// `TextEncoder` produces, and so what the reference hashes.
    pub fn to_utf8_lossy(&self) -> Cow<'_, str> {
        if let Some(s) = self.as_str() {
            return Cow::Borrowed(s);
        }
        let mut out = String::with_capacity(self.bytes.len());
        for cp in self.code_points() {
            out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
        }
        Cow::Owned(out)
    }

    /// Compares two strings by UTF-16 code units, the order of JS
    /// `Array.prototype.sort` and of RFC 8785 key sorting.
    pub fn cmp_utf16(&self, other: &JsString) -> Ordering {
        cmp_wtf8_as_utf16(&self.bytes, &other.bytes)
    }

    /// The code units in `start..end` (clamped), as JS `slice` with
    /// non-negative bounds: a cut through a surrogate pair leaves a lone half.
    pub fn slice_utf16(&self, start: usize, end: usize) -> JsString {
        let mut out = JsString::new();
        for unit in self.code_units().skip(start).take(end.saturating_sub(start)) {
            out.push_code_unit(unit);
        }
        out
    }

    /// The last `count` code units (JS `s.slice(-count)` for `count > 0`).
    pub fn tail_utf16(&self, count: usize) -> JsString {
        let mut taken = 0usize;
        let mut pos = self.bytes.len();
        while pos > 0 && taken < count {
            let start = char_start_before(&self.bytes, pos);
            let width = if self.bytes[start] >= 0xF0 { 2 } else { 1 };
            if taken + width > count {
                // Only the low half of this pair fits.
                let mut out = JsString::new();
                let units: Vec<u16> = JsString {
                    bytes: self.bytes[start..pos].to_vec(),
                }
                .code_units()
                .collect();
                out.push_code_unit(units[1]);
                out.bytes.extend_from_slice(&self.bytes[pos..]);
                return out;
            }
            taken += width;
            pos = start;
        }
        JsString {
            bytes: self.bytes[pos..].to_vec(),
        }
    }

    /// Appends WTF-8 bytes (a whole number of characters, each well formed
    /// or a lone surrogate), pairing a leading lone low surrogate with a
    /// trailing lone high one of `self`.
    pub(crate) fn extend_wtf8(&mut self, bytes: &[u8]) {
        if bytes.len() >= 3 && bytes[0] == 0xED && (0xB0..=0xBF).contains(&bytes[1]) && self.ends_with_lone_high() {
            self.push_code_unit(decode_surrogate_bytes(bytes));
            self.bytes.extend_from_slice(&bytes[3..]);
        } else {
            self.bytes.extend_from_slice(bytes);
        }
    }
}

fn char_start_before(bytes: &[u8], mut pos: usize) -> usize {
    pos -= 1;
    while pos > 0 && (0x80..=0xBF).contains(&bytes[pos]) {
        pos -= 1;
    }
    pos
}

fn encode_surrogate(unit: u16) -> [u8; 3] {
    [
        0xE0 | (unit >> 12) as u8,
        0x80 | ((unit >> 6) & 0x3F) as u8,
        0x80 | (unit & 0x3F) as u8,
    ]
}

fn decode_surrogate_bytes(b: &[u8]) -> u16 {
    (((b[0] & 0x0F) as u16) << 12) | (((b[1] & 0x3F) as u16) << 6) | ((b[2] & 0x3F) as u16)
}

/// Decodes the code point starting at `pos`; returns it and its byte width.
pub(crate) fn decode_at(bytes: &[u8], pos: usize) -> (u32, usize) {
    let b0 = bytes[pos] as u32;
    let cont = |i: usize| (bytes.get(pos + i).copied().unwrap_or(0x80) & 0x3F) as u32;
    match b0 {
        0x00..=0x7F => (b0, 1),
        0xC0..=0xDF => (((b0 & 0x1F) << 6) | cont(1), 2),
        0xE0..=0xEF => (((b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2), 3),
        _ => (((b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3), 4),
    }
}

fn utf16_units(cp: u32) -> (u32, u32) {
    if cp >= 0x10000 {
        let v = cp - 0x10000;
        (0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF))
    } else {
        (cp, 0)
    }
}

pub(crate) fn cmp_wtf8_as_utf16(a: &[u8], b: &[u8]) -> Ordering {
    let common = common_prefix(a, b);
    if common == a.len() || common == b.len() {
        return a.len().cmp(&b.len());
    }
    // UTF-8 byte order is code point order, which is UTF-16 order except
    // between a supplementary character (lead byte F0..F4, a surrogate pair
    // in UTF-16) and U+D800..U+FFFF (lead ED..EF). Any other first
    // difference — continuation bytes included, as both sides then share
    // the lead — is decided by the bytes.
    let (x, y) = (a[common], b[common]);
    if (x >= 0xF0) == (y >= 0xF0) || x < 0xED || y < 0xED {
        return x.cmp(&y);
    }
    // Back up to the start of the character holding the first difference:
    // the shared prefix before it is whole characters in both strings.
    // From there compare code unit by code unit: a lone high surrogate
    // and a pair share their first unit, and the order is then decided
    // by what follows the lone one.
    let start = char_start_before(a, common + 1);
    let units = |bytes| CodeUnits {
        bytes,
        pos: 0,
        pending_low: None,
    };
    units(&a[start..]).cmp(units(&b[start..]))
}

/// The length of the longest common prefix of `a` and `b`: eight bytes
/// at a time first (fingerprints, 64 hex digits, are compared often and
/// share long prefixes only with themselves).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let len = a.len().min(b.len());
    let mut at = 0;
    while at + 8 <= len && a[at..at + 8] == b[at..at + 8] {
        at += 8;
    }
    while at < len && a[at] == b[at] {
        at += 1;
    }
    at
}

/// Iterator over UTF-16 code units of a [`JsString`].
pub struct CodeUnits<'a> {
    bytes: &'a [u8],
    pos: usize,
    pending_low: Option<u16>,
}

impl Iterator for CodeUnits<'_> {
    type Item = u16;
    fn next(&mut self) -> Option<u16> {
        if let Some(low) = self.pending_low.take() {
            return Some(low);
        }
        if self.pos >= self.bytes.len() {
            return None;
        }
        let (cp, width) = decode_at(self.bytes, self.pos);
        self.pos += width;
        let (first, second) = utf16_units(cp);
        if second != 0 {
            self.pending_low = Some(second as u16);
        }
        Some(first as u16)
    }
}

/// Iterator over code points of a [`JsString`] (lone surrogates included).
pub struct CodePoints<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Iterator for CodePoints<'_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        let (cp, width) = decode_at(self.bytes, self.pos);
        self.pos += width;
        Some(cp)
    }
}

impl From<&str> for JsString {
    fn from(s: &str) -> Self {
        JsString {
            bytes: s.as_bytes().to_vec(),
        }
    }
}

impl From<String> for JsString {
    fn from(s: String) -> Self {
        JsString { bytes: s.into_bytes() }
    }
}

impl fmt::Display for JsString {
    /// Lossy: lone surrogates print as U+FFFD.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_utf8_lossy())
    }
}

impl fmt::Debug for JsString {
    /// Quoted like `str`'s `Debug`, with each lone surrogate as `\u{d800}`
    /// (so two strings that print alike are equal).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write;
        f.write_char('"')?;
        for code_point in self.code_points() {
            match char::from_u32(code_point) {
                Some(c) => write!(f, "{}", c.escape_debug())?,
                None => write!(f, "\\u{{{code_point:x}}}")?,
            }
        }
        f.write_char('"')
    }
}

impl PartialEq<str> for JsString {
    fn eq(&self, other: &str) -> bool {
        self.bytes == other.as_bytes()
    }
}

impl PartialEq<&str> for JsString {
    fn eq(&self, other: &&str) -> bool {
        self.bytes == other.as_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(s: &JsString) -> Vec<u16> {
        s.code_units().collect()
    }

    #[test]
    fn pairs_join_and_lone_halves_survive() {
        let s = JsString::from_code_units(&[0xD83C, 0xDF89, 0xD800, 0x41, 0xDC00]);
        assert_eq!(units(&s), vec![0xD83C, 0xDF89, 0xD800, 0x41, 0xDC00]);
        assert_eq!(&s.as_bytes()[..4], "🎉".as_bytes());
        assert_eq!(s.utf16_len(), 5);
        assert_eq!(s.to_utf8_lossy(), "🎉\u{FFFD}A\u{FFFD}");
    }

    #[test]
    fn sorting_follows_code_units_not_code_points() {
        let astral = JsString::from("🎉"); // D83C DF89
        let private = JsString::from("\u{E000}");
        assert_eq!(astral.cmp_utf16(&private), Ordering::Less);
        assert_eq!(JsString::from("ab").cmp_utf16(&JsString::from("a")), Ordering::Greater);
        assert_eq!(JsString::from("é").cmp_utf16(&JsString::from("z")), Ordering::Greater);
    }

    /// Found by the `text` fuzz target: a lone high surrogate followed by
    /// U+E800 sorted before the pair it shares its first unit with.
    #[test]
    fn lone_high_surrogate_then_bmp_sorts_by_the_next_unit() {
        let lone = JsString::from_code_units(&[0xD83C, 0xE800]);
        let pair = JsString::from_code_units(&[0xD83C, 0xDF89]);
        assert_eq!(lone.cmp_utf16(&pair), Ordering::Greater);
        assert_eq!(pair.cmp_utf16(&lone), Ordering::Less);
        let shorter = JsString::from_code_units(&[0xD83C]);
        assert_eq!(shorter.cmp_utf16(&pair), Ordering::Less);
    }

    #[test]
    fn tail_can_split_a_pair() {
        let s = JsString::from("a🎉");
        let t = s.tail_utf16(1);
        assert_eq!(units(&t), vec![0xDF89]);
        assert_eq!(s.tail_utf16(2), JsString::from("🎉"));
        assert_eq!(s.tail_utf16(9), s);
    }

    #[test]
    fn debug_tells_a_lone_surrogate_from_its_replacement() {
        let lone = JsString::from_code_units(&[0x61, 0xD800, 0x22]);
        assert_eq!(format!("{lone:?}"), "\"a\\u{d800}\\\"\"");
        assert_ne!(format!("{lone:?}"), format!("{:?}", JsString::from("a\u{FFFD}\"")));
    }

    #[test]
    fn push_js_joins_split_halves() {
        let mut s = JsString::from_code_units(&[0xD83C]);
        s.push_js(&JsString::from_code_units(&[0xDF89, 0x62]));
        assert_eq!(s, JsString::from("🎉b"));
    }
}
