//! Whitespace normalisation and tail-repetition detection for assistant text.
//!
//! This module owns the two places where the reference treats prose with
//! JavaScript regular expressions: the `text.replace(/\s+/g, ' ').trim()`
//! normalisation applied before a text streak is fingerprinted, and
//! `detectTextRepetition`, which looks for a block of whitespace-separated
//! tokens repeating at the very end of a response.
//!
//! The contract kept here is byte-for-byte agreement with the reference, so
//! JavaScript semantics are the spec even where they are surprising:
//!
//! * "Whitespace" is ECMAScript's `\s` / `trim()` set ([`is_js_whitespace`]),
//!   not Unicode `White_Space`: U+FEFF splits tokens, U+0085 does not.
//! * Lengths and the character budget count UTF-16 code units, so the budget
//!   cut may split a surrogate pair and leave a lone low surrogate at the
//!   start of the tail; that half is part of the first token.
//! * Thresholds are JS numbers. Fractions, zero, negatives, NaN and
//!   infinities go through the same `ToIntegerOrInfinity`, `Math.min/max` and
//!   NaN-is-never-comparable rules the reference applies, because a caller
//!   may pass any of them and the verdict must not change in the port.
//!
//! Assistant text can be megabytes long and is re-examined on every record,
//! so both operations work directly on the WTF-8 bytes of
//! [`JsString`]: normalisation is one linear pass that copies runs of
//! non-whitespace bytes in bulk, and detection walks backwards from the end
//! and never touches text before the budget cut (or before the last window
//! of tokens). Tokens are compared as byte slices, which is exact because a
//! `JsString` stores equal code-unit sequences as equal bytes.

use crate::js_string::JsString;

/// Numeric thresholds of `detectTextRepetition`, as JS numbers.
///
/// Any `f64` is accepted — fractional, zero, negative, NaN or infinite —
/// and is interpreted exactly as the reference's JavaScript would.
/// The default is `16, 4, 12, 400`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RepetitionThresholds {
    /// Longest repeating block considered, in tokens (`maxPeriodTokens`).
    pub max_period_tokens: f64,
    /// Fewest consecutive copies of the block that count (`minRepeats`).
    pub min_repeats: f64,
    /// Fewest tokens the copies must cover together (`minCoveredTokens`).
    pub min_covered_tokens: f64,
    /// How many trailing tokens are examined (`maxWindowTokens`); the text is
    /// first cut to `64 ×` this many UTF-16 code units from the end.
    pub max_window_tokens: f64,
}

impl Default for RepetitionThresholds {
    fn default() -> Self {
        RepetitionThresholds {
            max_period_tokens: 16.0,
            min_repeats: 4.0,
            min_covered_tokens: 12.0,
            max_window_tokens: 400.0,
        }
    }
}

/// A repeating block found at the tail of a response.
#[derive(Clone, Debug, PartialEq)]
pub struct TextRepetition {
    /// How many consecutive copies of the block end the text.
    pub repeats: usize,
    /// Length of the block, in tokens.
    pub period_tokens: usize,
    /// `repeats × period_tokens`.
    pub covered_tokens: usize,
    /// The last copy of the block, its tokens joined by single spaces.
    pub sample: JsString,
}

pub use crate::whitespace::is_js_whitespace;

/// `text.replace(/\s+/g, ' ').trim()`: every run of JS whitespace becomes a
/// single space and none is left at either end.
///
/// ```
/// use doom_loop::text::normalize_whitespace;
/// use doom_loop::JsString;
/// let s = JsString::from("\u{FEFF} a\t\u{2028} b\u{85} ");
/// assert_eq!(normalize_whitespace(&s), JsString::from("a b\u{85}"));
/// ```
pub fn normalize_whitespace(text: &JsString) -> JsString {
    // Replacing runs and then trimming is the same as joining the maximal
    // non-whitespace runs with one space. Where the input already has exactly
    // one ASCII space between two runs, the output is byte-identical, so such
    // stretches are copied in one piece: ordinary prose becomes a handful of
    // large copies instead of one per word.
    let bytes = text.as_bytes();
    let len = bytes.len();
    let mut out = JsString::with_capacity(len);
    let mut i = skip_whitespace(bytes, 0);
    let mut span_start = i;
    while i < len {
        if let Some(chunk) = bytes.get(i..i + 8).and_then(|c| <[u8; 8]>::try_from(c).ok()) {
            if is_plain_ascii_chunk(chunk) {
                i += 8;
                continue;
            }
        }
        // Most bytes cannot begin a whitespace character, and a table lookup
        // rejects them without decoding anything.
        let byte = bytes[i];
        if !MAY_START_WHITESPACE[usize::from(byte)] {
            i += 1;
            continue;
        }
        // A lone space before a byte that cannot start whitespace (the common
        // case in prose) stays as it is; both bytes are done.
        if byte == b' ' && i + 1 < len && !MAY_START_WHITESPACE[usize::from(bytes[i + 1])] {
            i += 2;
            continue;
        }
        let width = whitespace_len_at(bytes, i);
        if width == 0 {
            i += 1;
            continue;
        }
        if byte == b' ' && i + 1 < len && whitespace_len_at(bytes, i + 1) == 0 {
            i += 1;
            continue;
        }
        let next = skip_whitespace(bytes, i + width);
        // `out` is empty or ends in a space here, so the span (which starts
        // with a non-whitespace character) can never pair a lone low
        // surrogate with a lone high one: its bytes are copied as they are.
        out.extend_wtf8(&bytes[span_start..i]);
        if next < len {
            out.push_str(" ");
        }
        i = next;
        span_start = next;
    }
    out.extend_wtf8(&bytes[span_start..]);
    out
}

/// True when eight bytes need no change: ASCII without control characters,
/// and every space followed by a non-space inside the chunk. (A space
/// opening the chunk always follows a non-whitespace byte, because the byte
/// loop never stops just after a space it has not dealt with.) Checking a
/// word at a time keeps prose, a space every few bytes, off the byte loop.
fn is_plain_ascii_chunk(chunk: [u8; 8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    let x = u64::from_le_bytes(chunk);
    if x & HIGH != 0 {
        return false;
    }
    // Some byte below 0x20 (exact when no byte has its high bit set).
    if x.wrapping_sub(ONES * 0x20) & !x & HIGH != 0 {
        return false;
    }
    // High bit set exactly in the bytes equal to 0x20 (no borrows between
    // bytes, unlike the subtraction trick).
    let y = x ^ (ONES * 0x20);
    let spaces = !(((y & LOW7).wrapping_add(LOW7)) | y | LOW7);
    spaces & (spaces >> 8) == 0 && spaces >> 63 == 0
}

/// The first byte offset at or after `pos` that does not begin whitespace.
fn skip_whitespace(bytes: &[u8], mut pos: usize) -> usize {
    loop {
        match whitespace_len_at(bytes, pos) {
            0 => return pos,
            width => pos += width,
        }
    }
}

impl RepetitionThresholds {
    /// Thresholds from a JS options object as `detectTextRepetition` reads
    /// it: each option `?? default`, then compared as a JS number.
    pub fn from_js_options(options: Option<&crate::json::Value>) -> Self {
        use crate::json::Value;
        let defaults = RepetitionThresholds::default();
        let pick = |name: &str, fallback: f64| match options.and_then(Value::as_object).and_then(|o| o.get(name)) {
            None | Some(Value::Null | Value::Undefined) => fallback,
            Some(v) => v.to_number(),
        };
        RepetitionThresholds {
            max_period_tokens: pick("maxPeriodTokens", defaults.max_period_tokens),
            min_repeats: pick("minRepeats", defaults.min_repeats),
            min_covered_tokens: pick("minCoveredTokens", defaults.min_covered_tokens),
            max_window_tokens: pick("maxWindowTokens", defaults.max_window_tokens),
        }
    }
}

impl TextRepetition {
    /// The result as the reference's JSON object.
    pub fn to_json(&self) -> String {
        let mut out = format!(
            "{{\"repeats\":{},\"periodTokens\":{},\"coveredTokens\":{},\"sample\":",
            self.repeats, self.period_tokens, self.covered_tokens
        );
        crate::json::write_json_string(&self.sample, &mut out);
        out.push('}');
        out
    }
}

/// The reference's `detectTextRepetition`: the block of at most
/// `max_period_tokens` tokens that repeats most (by tokens covered) at the
/// end of `text`, or `None` when no block meets the thresholds.
///
/// Tokens are maximal runs of non-whitespace (see [`is_js_whitespace`])
/// within the last `64 × max_window_tokens` UTF-16 code units, of which the
/// last `max_window_tokens` are examined. Among equally covering blocks the
/// shortest period wins.
///
/// ```
/// use doom_loop::text::{detect_text_repetition, RepetitionThresholds};
/// use doom_loop::JsString;
/// let text = JsString::from("I am stuck. I am stuck. I am stuck. I am stuck. I am stuck.");
/// let hit = detect_text_repetition(&text, &RepetitionThresholds::default()).unwrap();
/// assert_eq!((hit.repeats, hit.period_tokens, hit.covered_tokens), (5, 3, 15));
/// assert_eq!(hit.sample, JsString::from("I am stuck."));
/// ```
pub fn detect_text_repetition(text: &JsString, thresholds: &RepetitionThresholds) -> Option<TextRepetition> {
    detect_with(text, thresholds, None)
}

/// How the repeat count of each period is computed. Both give identical
/// answers; the choice is only about cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Strategy {
    /// The reference's own block-by-block comparison: cheapest when few
    /// periods are tried over few tokens (the default thresholds).
    Direct,
    /// Z-function over the reversed token sequence: linear however large the
    /// thresholds, where the direct loop would be quadratic.
    ZFunction,
}

/// Above this many (period × token) steps the direct loop could get
/// expensive; the defaults (16 × 400) stay well below it.
const DIRECT_STEP_LIMIT: usize = 1 << 16;

fn detect_with(text: &JsString, thresholds: &RepetitionThresholds, forced: Option<Strategy>) -> Option<TextRepetition> {
    let tail = TailTokens::collect(text.as_bytes(), thresholds.max_window_tokens);
    let tokens = tail.slices();
    let n = tokens.len();

    // `tokens.length < Math.max(minCoveredTokens, 2)`; with NaN the
    // comparison is false and the reference carries on.
    if (n as f64) < js_max(thresholds.min_covered_tokens, 2.0) {
        return None;
    }
    let half = n / 2;
    let max_period = js_min(thresholds.max_period_tokens, half as f64);
    // `period <= maxPeriod` over integers from 1: the last period tried is
    // floor(maxPeriod); NaN and anything below 1 try none.
    let last_period = if max_period >= 1.0 {
        float_to_count(max_period.floor()).min(half)
    } else {
        0
    };
    if last_period == 0 {
        return None;
    }

    let strategy = forced.unwrap_or(if last_period.saturating_mul(n) <= DIRECT_STEP_LIMIT {
        Strategy::Direct
    } else {
        Strategy::ZFunction
    });
    let suffix_match = match strategy {
        Strategy::Direct => Vec::new(),
        Strategy::ZFunction => reversed_z_function(&tokens, last_period),
    };

    let mut best: Option<(usize, usize)> = None; // (repeats, period)
    let mut best_covered = 0usize;
    for period in 1..=last_period {
        let repeats = match strategy {
            Strategy::Direct => direct_repeats(&tokens, period),
            // Copies ending the text are exactly the stretch where the
            // sequence agrees with itself shifted by `period`.
            Strategy::ZFunction => 1 + suffix_match.get(period).copied().unwrap_or(0) / period,
        };
        let covered = repeats * period;
        if repeats as f64 >= thresholds.min_repeats
            && covered as f64 >= thresholds.min_covered_tokens
            // Strictly greater: on a tie the shorter period found first stays.
            && (best.is_none() || covered > best_covered)
        {
            best = Some((repeats, period));
            best_covered = covered;
        }
    }

    best.map(|(repeats, period)| {
        let block = &tokens[n - period..];
        let mut sample = JsString::with_capacity(block.iter().map(|t| t.len() + 1).sum());
        for (i, token) in block.iter().enumerate() {
            if i > 0 {
                sample.push_str(" ");
            }
            // Whole tokens separated by spaces: no surrogate halves meet.
            sample.extend_wtf8(token);
        }
        TextRepetition {
            repeats,
            period_tokens: period,
            covered_tokens: repeats * period,
            sample,
        }
    })
}

/// Repeat count for one period, compared block by block as the reference
/// does, stopping at the first block that differs from the last one.
fn direct_repeats(tokens: &[&[u8]], period: usize) -> usize {
    let n = tokens.len();
    let last = &tokens[n - period..];
    let mut repeats = 1;
    let mut end = n - period;
    while end >= period {
        let start = end - period;
        if tokens[start..end] != *last {
            break;
        }
        repeats += 1;
        end = start;
    }
    repeats
}

/// `z[p]` (for `p <= last_period`) is how many tokens the sequence and the
/// sequence shifted back by `p` agree on, counting from the end.
fn reversed_z_function(tokens: &[&[u8]], last_period: usize) -> Vec<usize> {
    // Interning first makes every comparison O(1); comparing long tokens
    // directly could repeat the same long comparison many times.
    let reversed = intern(tokens.iter().rev().copied());
    let n = reversed.len();
    let limit = (last_period + 1).min(n);
    let mut z = vec![0usize; limit];
    let (mut box_start, mut box_end) = (0usize, 0usize);
    // z[i] only depends on z[j] for j < i, so stopping at the last period
    // needed is exact.
    for i in 1..limit {
        let mut len = 0;
        if i < box_end {
            len = (box_end - i).min(z[i - box_start]);
        }
        while i + len < n && reversed[len] == reversed[i + len] {
            len += 1;
        }
        z[i] = len;
        if i + len > box_end {
            box_start = i;
            box_end = i + len;
        }
    }
    z
}

/// Maps each token to a small id, equal ids for equal tokens (by sorting,
/// which keeps a hash table out of the wasm build).
fn intern<'a>(tokens: impl Iterator<Item = &'a [u8]>) -> Vec<usize> {
    let tokens: Vec<&[u8]> = tokens.collect();
    let order = crate::sort::sorted_indices(tokens.len(), &|a, b| tokens[a].cmp(tokens[b]));
    let mut ids = vec![0usize; tokens.len()];
    let mut id = 0;
    for (rank, &index) in order.iter().enumerate() {
        if rank > 0 && tokens[order[rank - 1]] != tokens[index] {
            id += 1;
        }
        ids[index] = id;
    }
    ids
}

/// The tokens of the tail after the budget cut and the token window.
struct TailTokens<'a> {
    text: &'a [u8],
    /// Byte ranges of the collected tokens, in text order.
    ranges: Vec<(usize, usize)>,
    /// The bytes of `ranges[0]` when the budget cut split a surrogate pair:
    /// the lone low half followed by the rest of the token.
    split_first: Option<Vec<u8>>,
    /// Leading tokens dropped by `tokens.slice(-maxWindowTokens)` with a
    /// non-negative start.
    skip: usize,
}

impl<'a> TailTokens<'a> {
    fn collect(text: &'a [u8], max_window_tokens: f64) -> Self {
        let budget = max_window_tokens * 64.0;
        let (floor, floor_low, unit_limit) = match budget_cut(budget) {
            Cut::Whole => (0, None, usize::MAX),
            Cut::KeepLast(units) => (0, None, units),
            Cut::DropFirst(units) => {
                let (floor, low) = skip_code_units(text, units);
                (floor, low, usize::MAX)
            }
        };
        let (token_limit, skip) = match slice_from_end(max_window_tokens) {
            Slice::KeepLast(count) => (count, 0),
            Slice::DropFirst(count) => (usize::MAX, count),
        };

        let scan = scan_backwards(text, floor, floor_low, unit_limit, token_limit);
        let mut ranges = scan.ranges;
        ranges.reverse();
        let split_first = match (scan.low, ranges.first()) {
            (Some(low), Some(&(start, end))) => {
                let mut first = Vec::with_capacity(3 + end.saturating_sub(start));
                first.extend_from_slice(&encode_lone_surrogate(low));
                first.extend_from_slice(text.get(start..end).unwrap_or_default());
                Some(first)
            }
            _ => None,
        };
        let skip = skip.min(ranges.len());
        TailTokens {
            text,
            ranges,
            split_first,
            skip,
        }
    }

    fn slices(&self) -> Vec<&[u8]> {
        self.ranges
            .iter()
            .enumerate()
            .skip(self.skip)
            .map(|(i, &(start, end))| match (&self.split_first, i) {
                (Some(first), 0) => first.as_slice(),
                _ => self.text.get(start..end).unwrap_or_default(),
            })
            .collect()
    }
}

/// Where `text.length > charBudget ? text.slice(-charBudget) : text` starts,
/// in code units.
#[derive(Debug, PartialEq)]
enum Cut {
    Whole,
    KeepLast(usize),
    DropFirst(usize),
}

fn budget_cut(budget: f64) -> Cut {
    if budget.is_nan() {
        // `length > NaN` is false.
        return Cut::Whole;
    }
    if budget >= 0.0 {
        // For an integer length, `length > budget` iff `length > floor(budget)`,
        // and then `slice(-budget)` keeps floor(budget) units — except that a
        // budget below 1 gives `slice(-0)`, which keeps everything.
        let keep = budget.floor();
        if keep < 1.0 || keep.is_infinite() {
            return Cut::Whole;
        }
        return Cut::KeepLast(float_to_count(keep));
    }
    // A negative budget is always exceeded, and `slice` of a positive start
    // drops that many leading units (everything when it is infinite).
    let drop = (-budget).trunc();
    if drop < 1.0 {
        return Cut::Whole;
    }
    Cut::DropFirst(float_to_count(drop))
}

/// Which part of an array `array.slice(-x)` keeps.
#[derive(Debug, PartialEq)]
enum Slice {
    KeepLast(usize),
    DropFirst(usize),
}

fn slice_from_end(x: f64) -> Slice {
    let start = to_integer_or_infinity(-x);
    if start < 0.0 {
        Slice::KeepLast(float_to_count(-start))
    } else {
        // Also NaN and -0: `slice(0)` keeps everything.
        Slice::DropFirst(float_to_count(start))
    }
}

/// ECMAScript ToIntegerOrInfinity on a number.
fn to_integer_or_infinity(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x.trunc()
    }
}

/// A non-negative integral (or infinite) double as a count; saturating,
/// because any count beyond the text is the same as the whole text.
fn float_to_count(x: f64) -> usize {
    if x >= usize::MAX as f64 {
        usize::MAX
    } else if x > 0.0 {
        x as usize
    } else {
        0
    }
}

/// `Math.max` for two numbers: NaN wins, unlike `f64::max`.
fn js_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// `Math.min` for two numbers: NaN wins, unlike `f64::min`.
fn js_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

/// Byte offset after the first `units` UTF-16 code units, and the low
/// surrogate left over when that offset falls inside a pair.
fn skip_code_units(bytes: &[u8], units: usize) -> (usize, Option<u16>) {
    let mut pos = 0;
    let mut taken = 0;
    while taken < units && pos < bytes.len() {
        let lead = bytes[pos];
        if lead < 0x80 {
            pos += 1;
            taken += 1;
            continue;
        }
        let width = match lead {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xFF => 4,
            _ => 1,
        };
        let next = (pos + width).min(bytes.len());
        if lead >= 0xF0 {
            if taken + 1 == units {
                return (next, Some(low_surrogate_of(bytes, pos)));
            }
            taken += 2;
        } else {
            taken += 1;
        }
        pos = next;
    }
    (pos, None)
}

struct BackwardScan {
    /// Token byte ranges, last token first.
    ranges: Vec<(usize, usize)>,
    /// A lone low surrogate that begins the earliest collected token.
    low: Option<u16>,
}

/// Collects up to `token_limit` tokens walking back from the end, stopping
/// at byte `floor` (which `floor_low` precedes, if set) or once
/// `unit_limit` code units have been consumed, whichever comes first.
///
/// Walking backwards means the default thresholds read a few kilobytes at
/// the end of the text, however long it is.
fn scan_backwards(
    bytes: &[u8],
    floor: usize,
    floor_low: Option<u16>,
    unit_limit: usize,
    token_limit: usize,
) -> BackwardScan {
    let mut ranges = Vec::new();
    let mut pos = bytes.len();
    let mut units = 0usize;
    let mut token_end: Option<usize> = None;
    let mut low = None;
    loop {
        if ranges.len() >= token_limit {
            return BackwardScan { ranges, low: None };
        }
        if pos <= floor {
            low = floor_low;
            break;
        }
        let last = bytes[pos - 1];
        let (start, width_units, is_space) = if last < 0x80 {
            (pos - 1, 1, is_ascii_js_whitespace(last))
        } else {
            let mut start = pos - 1;
            while start > floor && (0x80..=0xBF).contains(&bytes[start]) {
                start -= 1;
            }
            let width_units = if bytes[start] >= 0xF0 { 2 } else { 1 };
            (start, width_units, whitespace_len_at(bytes, start) == pos - start)
        };
        if units.saturating_add(width_units) > unit_limit {
            if units < unit_limit {
                // Only the low half of this pair is inside the budget.
                low = Some(low_surrogate_of(bytes, start));
            }
            break;
        }
        units += width_units;
        if is_space {
            if let Some(end) = token_end.take() {
                ranges.push((pos, end));
            }
        } else if token_end.is_none() {
            token_end = Some(pos);
        }
        pos = start;
    }
    // The tail begins at `pos`, possibly preceded by a lone low surrogate,
    // which is not whitespace and so belongs to the token starting there.
    match (low, token_end) {
        (Some(_), end) => ranges.push((pos, end.unwrap_or(pos))),
        (None, Some(end)) => ranges.push((pos, end)),
        (None, None) => {}
    }
    BackwardScan { ranges, low }
}

/// The low surrogate of the 4-byte sequence at `pos`. The low ten bits of a
/// supplementary code point are the last 4 + 6 payload bits.
fn low_surrogate_of(bytes: &[u8], pos: usize) -> u16 {
    let third = u16::from(bytes.get(pos + 2).copied().unwrap_or(0x80));
    let fourth = u16::from(bytes.get(pos + 3).copied().unwrap_or(0x80));
    0xDC00 | ((third & 0x0F) << 6) | (fourth & 0x3F)
}

/// Generalized UTF-8 of a lone surrogate, the form `JsString` stores it in.
fn encode_lone_surrogate(unit: u16) -> [u8; 3] {
    [
        0xE0 | (unit >> 12) as u8,
        0x80 | ((unit >> 6) & 0x3F) as u8,
        0x80 | (unit & 0x3F) as u8,
    ]
}

fn is_ascii_js_whitespace(byte: u8) -> bool {
    matches!(byte, 0x09..=0x0D | 0x20)
}

/// Bytes that can begin a JS whitespace character in UTF-8: the ASCII ones
/// and the lead bytes of U+00A0, U+1680, U+2000–U+205F, U+3000 and U+FEFF.
static MAY_START_WHITESPACE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0x09;
    while b <= 0x0D {
        table[b] = true;
        b += 1;
    }
    table[0x20] = true;
    table[0xC2] = true;
    table[0xE1] = true;
    table[0xE2] = true;
    table[0xE3] = true;
    table[0xEF] = true;
    table
};

/// Byte length of the JS whitespace character starting at `pos`, or 0.
/// Matching the encoded forms directly avoids decoding every character;
/// a test checks this against [`is_js_whitespace`] for every code point.
fn whitespace_len_at(bytes: &[u8], pos: usize) -> usize {
    let at = |i: usize| bytes.get(pos + i).copied();
    match at(0) {
        Some(b) if is_ascii_js_whitespace(b) => 1,
        Some(0xC2) if at(1) == Some(0xA0) => 2,
        Some(0xE1) if at(1) == Some(0x9A) && at(2) == Some(0x80) => 3,
        Some(0xE2) => match (at(1), at(2)) {
            (Some(0x80), Some(0x80..=0x8A | 0xA8 | 0xA9 | 0xAF)) | (Some(0x81), Some(0x9F)) => 3,
            _ => 0,
        },
        Some(0xE3) if at(1) == Some(0x80) && at(2) == Some(0x80) => 3,
        Some(0xEF) if at(1) == Some(0xBB) && at(2) == Some(0xBF) => 3,
        _ => 0,
    }
}

// Hidden, not an API: the test oracle, public only because the fuzz
// workspace (another crate) compares against it too.
#[doc(hidden)]
pub mod naive;

#[cfg(test)]
mod tests {
    use super::naive::{detect as naive_detect, normalize as naive_normalize, tokens as naive_tokens};
    use super::*;
    use crate::test_rng::XorShift;

    fn th(mp: f64, mr: f64, mc: f64, mw: f64) -> RepetitionThresholds {
        RepetitionThresholds {
            max_period_tokens: mp,
            min_repeats: mr,
            min_covered_tokens: mc,
            max_window_tokens: mw,
        }
    }

    fn detect(text: &str, t: &RepetitionThresholds) -> Option<(usize, usize, usize, String)> {
        detect_text_repetition(&JsString::from(text), t).map(|r| {
            (
                r.repeats,
                r.period_tokens,
                r.covered_tokens,
                r.sample.to_utf8_lossy().into_owned(),
            )
        })
    }

    fn units(s: &JsString) -> Vec<u16> {
        s.code_units().collect()
    }

    fn tail_token_units(text: &JsString, mw: f64) -> Vec<Vec<u16>> {
        let tail = TailTokens::collect(text.as_bytes(), mw);
        tail.slices()
            .into_iter()
            .map(|t| {
                let mut s = JsString::new();
                s.extend_wtf8(t);
                units(&s)
            })
            .collect()
    }

    const PIECES: &[&[u16]] = &[
        &[0x20],
        &[0x20],
        &[0x20, 0x20],
        &[0x09],
        &[0x0A],
        &[0xA0],
        &[0x2028],
        &[0xFEFF],
        &[0x3000],
        &[0x85],
        &[0x180E],
        &[0x200B],
        &[0x61],
        &[0x61],
        &[0x62],
        &[0x61, 0x62],
        &[0xE9],
        &[0xD83C, 0xDF89], // 🎉
        &[0xD83C],
        &[0xDF89],
        &[0xDC00],
        &[0xD800],
    ];

    const WORDS: &[&[u16]] = &[
        &[0x61],
        &[0x62],
        &[0x61, 0x62],
        &[0xD83C, 0xDF89],
        &[0xDF89],
        &[0xD83C],
        &[0x61, 0xDC00],
        &[0x85],
        &[0xE9, 0x200B],
    ];

    const SEPARATORS: &[&[u16]] = &[
        &[0x20],
        &[0x20],
        &[0x20],
        &[0x0A],
        &[0xA0],
        &[0x2028],
        &[0xFEFF],
        &[0x20, 0x09],
    ];

    fn random_text(rng: &mut XorShift) -> Vec<u16> {
        let mut out = Vec::new();
        match rng.below(3) {
            0 => {
                for _ in 0..rng.below(80) {
                    out.extend_from_slice(rng.pick(PIECES));
                }
            }
            _ => {
                // A noisy prefix, then a block repeated, so hits are common.
                for _ in 0..rng.below(12) {
                    out.extend_from_slice(rng.pick(PIECES));
                }
                let block: Vec<&[u16]> = (0..1 + rng.below(4)).map(|_| rng.pick(WORDS)).collect();
                for _ in 0..1 + rng.below(14) {
                    for word in &block {
                        out.extend_from_slice(rng.pick(SEPARATORS));
                        out.extend_from_slice(word);
                    }
                }
                for _ in 0..rng.below(3) {
                    out.extend_from_slice(rng.pick(PIECES));
                }
            }
        }
        out
    }

    const MAX_PERIODS: &[f64] = &[
        16.0,
        1.0,
        2.0,
        3.0,
        0.0,
        -0.0,
        -1.0,
        1.5,
        2.5,
        0.5,
        100.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    const MIN_REPEATS: &[f64] = &[
        4.0,
        0.0,
        1.0,
        2.0,
        3.0,
        2.5,
        5.0,
        -1.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    const MIN_COVERED: &[f64] = &[
        12.0,
        0.0,
        1.0,
        2.0,
        3.0,
        4.0,
        6.0,
        2.5,
        -5.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    const MAX_WINDOWS: &[f64] = &[
        400.0,
        1.0,
        2.0,
        3.0,
        5.0,
        7.5,
        0.5,
        0.3,
        0.25,
        0.2,
        0.1,
        0.05,
        1.0 / 64.0,
        3.0 / 64.0,
        0.0,
        -0.0,
        -0.01,
        -0.03,
        -0.1,
        -0.5,
        -1.0,
        -1.5,
        -2.0,
        -3.0,
        1e300,
        -1e300,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];

    #[test]
    fn matches_naive_reference_on_random_inputs() {
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let mut hits = 0;
        for case in 0..12_000 {
            let raw = random_text(&mut rng);
            let text = JsString::from_code_units(&raw);
            assert_eq!(units(&text), raw);
            let t = if case % 5 == 0 {
                RepetitionThresholds::default()
            } else {
                th(
                    rng.pick(MAX_PERIODS),
                    rng.pick(MIN_REPEATS),
                    rng.pick(MIN_COVERED),
                    rng.pick(MAX_WINDOWS),
                )
            };
            assert_eq!(
                tail_token_units(&text, t.max_window_tokens),
                naive_tokens(&raw, t.max_window_tokens),
                "tokens of {raw:04X?} with {t:?}"
            );
            let expected = naive_detect(&raw, &t);
            hits += usize::from(expected.is_some());
            for forced in [None, Some(Strategy::Direct), Some(Strategy::ZFunction)] {
                let got = detect_with(&text, &t, forced)
                    .map(|r| (r.repeats, r.period_tokens, r.covered_tokens, units(&r.sample)));
                assert_eq!(got, expected, "{raw:04X?} with {t:?} via {forced:?}");
            }
            assert_eq!(units(&normalize_whitespace(&text)), naive_normalize(&raw), "{raw:04X?}");
        }
        // Guard against a generator that never exercises the hit path.
        assert!(hits > 1000, "only {hits} hits");
    }

    #[test]
    fn normalisation_matches_naive_on_mostly_ascii_text() {
        // Long ASCII stretches exercise the eight-byte fast path at every
        // alignment, with the occasional byte that forces it to stop.
        const ASCII_PIECES: &[&[u16]] = &[
            &[0x61],
            &[0x61],
            &[0x62],
            &[0x63],
            &[0x20],
            &[0x20],
            &[0x20, 0x20],
            &[0x09],
            &[0x0A],
            &[0x1F],
            &[0x7F],
            &[0xA0],
            &[0xE9],
            &[0x3000],
            &[0xDC00],
        ];
        let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
        for _ in 0..20_000 {
            let mut raw = Vec::new();
            let pieces = if rng.below(4) == 0 {
                &ASCII_PIECES[..6]
            } else {
                ASCII_PIECES
            };
            for _ in 0..rng.below(60) {
                raw.extend_from_slice(rng.pick(pieces));
            }
            let text = JsString::from_code_units(&raw);
            assert_eq!(units(&normalize_whitespace(&text)), naive_normalize(&raw), "{raw:04X?}");
        }
    }

    #[test]
    fn plain_chunk_detection() {
        assert!(is_plain_ascii_chunk(*b"abcdefgh"));
        assert!(is_plain_ascii_chunk(*b" bc de f"));
        assert!(!is_plain_ascii_chunk(*b"abc  fgh"));
        assert!(!is_plain_ascii_chunk(*b"abcdefg "));
        assert!(!is_plain_ascii_chunk(*b"abc\tefgh"));
        assert!(!is_plain_ascii_chunk(*b"abc\x1Fefgh"));
        assert!(!is_plain_ascii_chunk([b'a', 0xC2, 0xA0, b'b', b'c', b'd', b'e', b'f']));
        for b in 0u8..=0xFF {
            let mut chunk = *b"abcdefgh";
            chunk[3] = b;
            let plain = (0x20..0x80).contains(&b);
            assert_eq!(is_plain_ascii_chunk(chunk), plain, "{b:#04X}");
        }
    }

    #[test]
    fn whitespace_bytes_agree_with_code_points() {
        for cp in 0..=0x10FFFFu32 {
            let s = match char::from_u32(cp) {
                Some(c) => JsString::from(c.to_string()),
                None => JsString::from_code_units(&[cp as u16]),
            };
            let expected = if is_js_whitespace(cp) { s.as_bytes().len() } else { 0 };
            assert_eq!(whitespace_len_at(s.as_bytes(), 0), expected, "U+{cp:04X}");
            if expected > 0 {
                assert!(MAY_START_WHITESPACE[usize::from(s.as_bytes()[0])], "U+{cp:04X}");
            }
        }
    }

    #[test]
    fn js_whitespace_is_unicode_white_space_minus_nel_plus_bom() {
        for cp in 0..=0x10FFFFu32 {
            let unicode = char::from_u32(cp).is_some_and(char::is_whitespace);
            let js = (unicode && cp != 0x85) || cp == 0xFEFF;
            assert_eq!(is_js_whitespace(cp), js, "U+{cp:04X}");
        }
        for cp in [0x85, 0x180E, 0x200B, 0xD800, 0xDC00] {
            assert!(!is_js_whitespace(cp));
        }
    }

    #[test]
    fn single_token_repeated_prefers_the_smallest_period() {
        let t = RepetitionThresholds {
            min_covered_tokens: 6.0,
            ..Default::default()
        };
        assert_eq!(detect("no no no no no no", &t), Some((6, 1, 6, "no".into())));
        // Default needs 12 tokens.
        assert_eq!(detect("no no no no no no", &RepetitionThresholds::default()), None);
        let twelve = "no ".repeat(12);
        assert_eq!(
            detect(&twelve, &RepetitionThresholds::default()),
            Some((12, 1, 12, "no".into()))
        );
    }

    #[test]
    fn stuck_sentence_patterns() {
        let d = RepetitionThresholds::default();
        let five = "I am stuck. ".repeat(5);
        assert_eq!(detect(&five, &d), Some((5, 3, 15, "I am stuck.".into())));
        let four = "I am stuck. ".repeat(4);
        assert_eq!(detect(&four, &d), Some((4, 3, 12, "I am stuck.".into())));
        assert_eq!(detect(&"I am stuck. ".repeat(3), &d), None);
        // Noise before the loop does not matter; noise after it does.
        let prefixed = format!("Let me think.\n\n{five}");
        assert_eq!(detect(&prefixed, &d), Some((5, 3, 15, "I am stuck.".into())));
        assert_eq!(detect(&format!("{five} Done."), &d), None);
        // Whitespace variety between copies is irrelevant.
        let mixed = "I\tam\u{A0}stuck.\u{2028}".repeat(5);
        assert_eq!(detect(&mixed, &d), Some((5, 3, 15, "I am stuck.".into())));
    }

    #[test]
    fn only_js_whitespace_splits_tokens() {
        let t = th(16.0, 4.0, 4.0, 400.0);
        assert_eq!(detect("x\u{FEFF}x\u{2028}x\u{3000}x", &t), Some((4, 1, 4, "x".into())));
        for glue in ['\u{85}', '\u{180E}', '\u{200B}'] {
            let text = format!("x{glue}x{glue}x{glue}x");
            assert_eq!(detect(&text, &t), None, "U+{:04X}", glue as u32);
            let spaced = format!("x{glue} x{glue} x{glue} x{glue}");
            assert_eq!(detect(&spaced, &t), Some((4, 1, 4, format!("x{glue}"))));
        }
    }

    #[test]
    fn normalisation_examples() {
        let n = |s: &str| normalize_whitespace(&JsString::from(s));
        assert_eq!(n(""), JsString::from(""));
        assert_eq!(n(" \t\n "), JsString::from(""));
        assert_eq!(n("  a  b  "), JsString::from("a b"));
        assert_eq!(n("a\u{FEFF}\u{2029}b\u{3000}"), JsString::from("a b"));
        assert_eq!(
            n("a\u{85}b\u{180E}c\u{200B}d"),
            JsString::from("a\u{85}b\u{180E}c\u{200B}d")
        );
        assert_eq!(n("é  🎉\r\nx"), JsString::from("é 🎉 x"));
        // Lone surrogates on either side of a run stay apart.
        let s = JsString::from_code_units(&[0xD800, 0x20, 0x20, 0xDC00, 0x20]);
        assert_eq!(units(&normalize_whitespace(&s)), vec![0xD800, 0x20, 0xDC00]);
    }

    #[test]
    fn budget_cut_can_leave_a_lone_low_surrogate() {
        // maxWindowTokens 1: budget 64 code units, of which the first is the
        // low half of the emoji.
        let text = JsString::from(format!("🎉{}", "x".repeat(63)).as_str());
        let tokens = tail_token_units(&text, 1.0);
        let mut expected = vec![0xDF89u16];
        expected.extend([0x78; 63]);
        assert_eq!(tokens, vec![expected]);
        // ... and the half token compares equal to genuine lone halves.
        let mut raw = vec![0xD83C, 0xDF89];
        for _ in 0..16 {
            raw.extend_from_slice(&[0x20, 0xDF89]);
        }
        let text = JsString::from_code_units(&raw); // 34 units, budget 33
        let t = th(16.0, 4.0, 12.0, 33.0 / 64.0);
        let hit = detect_text_repetition(&text, &t).unwrap();
        assert_eq!((hit.repeats, hit.period_tokens, hit.covered_tokens), (17, 1, 17));
        assert_eq!(hit.sample.as_bytes(), &[0xED, 0xBE, 0x89]);
        // A negative budget drops leading units and can split a pair too.
        let t = th(16.0, 4.0, 12.0, -1.0 / 64.0); // slice(1)
        assert_eq!(tail_token_units(&text, t.max_window_tokens).len(), 17);
        assert_eq!(detect_text_repetition(&text, &t).unwrap().repeats, 17);
    }

    #[test]
    fn odd_options_follow_js() {
        let d = RepetitionThresholds::default();
        let text = "no ".repeat(1000);
        let with = |mp: f64, mr: f64, mc: f64, mw: f64| detect(&text, &th(mp, mr, mc, mw));
        assert_eq!(with(16.0, 4.0, 12.0, 400.0), Some((400, 1, 400, "no".into())));
        // NaN or zero window: the whole text, every token.
        assert_eq!(with(16.0, 4.0, 12.0, f64::NAN), Some((1000, 1, 1000, "no".into())));
        assert_eq!(with(16.0, 4.0, 12.0, 0.0), Some((1000, 1, 1000, "no".into())));
        assert_eq!(with(16.0, 4.0, 12.0, -0.0), Some((1000, 1, 1000, "no".into())));
        assert_eq!(with(16.0, 4.0, 12.0, f64::INFINITY), Some((1000, 1, 1000, "no".into())));
        // Negative: slice(64) drops 64 units ("o" is left of the 22nd "no"),
        // then tokens.slice(1) drops that "o".
        assert_eq!(with(16.0, 4.0, 12.0, -1.0), Some((978, 1, 978, "no".into())));
        assert_eq!(with(16.0, 4.0, 12.0, f64::NEG_INFINITY), None);
        // Fractional: budget 32 keeps "o no no ... no " (11 tokens), all kept.
        assert_eq!(with(16.0, 4.0, 12.0, 0.5), None);
        assert_eq!(with(16.0, 4.0, 4.0, 0.5), Some((10, 1, 10, "no".into())));
        // NaN thresholds never compare true.
        assert_eq!(with(f64::NAN, 4.0, 12.0, 400.0), None);
        assert_eq!(with(16.0, f64::NAN, 12.0, 400.0), None);
        assert_eq!(with(16.0, 4.0, f64::NAN, 400.0), None);
        assert_eq!(with(0.5, 4.0, 12.0, 400.0), None);
        assert_eq!(with(-3.0, 4.0, 12.0, 400.0), None);
        // Zero thresholds accept any block; the widest coverage wins.
        let abcd = detect("a b c d", &th(16.0, 0.0, 0.0, 400.0));
        assert_eq!(abcd, Some((1, 2, 2, "c d".into())));
        let frac = detect("a b a b a b a b a b a b", &th(1.9, 0.0, 0.0, 400.0));
        assert_eq!(frac, Some((1, 1, 1, "b".into())));
        assert_eq!(detect("a", &th(16.0, 0.0, f64::NEG_INFINITY, 400.0)), None);
        assert_eq!(detect("", &d), None);
        assert_eq!(detect(" \u{FEFF} ", &d), None);
    }

    #[test]
    fn large_thresholds_stay_linear() {
        let text = JsString::from("ab ".repeat(200_000).as_str());
        let t = th(f64::INFINITY, 4.0, 12.0, f64::INFINITY);
        let hit = detect_text_repetition(&text, &t).unwrap();
        assert_eq!(
            (hit.repeats, hit.period_tokens, hit.covered_tokens),
            (200_000, 1, 200_000)
        );
    }

    #[test]
    fn helpers_follow_ecmascript() {
        assert_eq!(budget_cut(f64::NAN), Cut::Whole);
        assert_eq!(budget_cut(0.9), Cut::Whole);
        assert_eq!(budget_cut(64.7), Cut::KeepLast(64));
        assert_eq!(budget_cut(-0.9), Cut::Whole);
        assert_eq!(budget_cut(-2.7), Cut::DropFirst(2));
        assert_eq!(budget_cut(f64::NEG_INFINITY), Cut::DropFirst(usize::MAX));
        assert_eq!(slice_from_end(400.0), Slice::KeepLast(400));
        assert_eq!(slice_from_end(0.5), Slice::DropFirst(0));
        assert_eq!(slice_from_end(-2.5), Slice::DropFirst(2));
        assert_eq!(slice_from_end(f64::NAN), Slice::DropFirst(0));
        assert!(js_max(f64::NAN, 2.0).is_nan());
        assert!(js_min(3.0, f64::NAN).is_nan());
    }
}
