//! A naive transcription of the reference's text detection, on UTF-16
//! code units, written straight from the TS: the oracle that the unit
//! tests and the `text` fuzz target compare [`super::detect_text_repetition`]
//! and [`super::normalize_whitespace`] against. Compiled for tests and,
//! for the fuzz workspace, as the hidden `doom_loop::text::naive`; not
//! part of the crate's API.

use super::RepetitionThresholds;

/// A repetition: repeats, period in tokens, covered tokens, sample.
pub type Hit = (usize, usize, usize, Vec<u16>);

const JS_WS_UNITS: [u16; 25] = [
    0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007,
    0x2008, 0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF,
];

fn naive_ws(u: u16) -> bool {
    JS_WS_UNITS.contains(&u)
}

fn naive_to_int(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x.trunc()
    }
}

/// `array.slice(start)` per ECMA-262.
fn naive_slice<T: Clone>(v: &[T], start: f64) -> Vec<T> {
    let len = v.len() as f64;
    let rel = naive_to_int(start);
    let from = if rel == f64::NEG_INFINITY {
        0.0
    } else if rel < 0.0 {
        (len + rel).max(0.0)
    } else {
        rel.min(len)
    };
    v[from as usize..].to_vec()
}

fn naive_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a > b {
        a
    } else {
        b
    }
}

fn naive_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a < b {
        a
    } else {
        b
    }
}

/// The last `mw` whitespace-separated tokens of the last `64 × mw` code
/// units, as the reference cuts them.
pub fn tokens(text: &[u16], mw: f64) -> Vec<Vec<u16>> {
    let budget = mw * 64.0;
    let tail = if (text.len() as f64) > budget {
        naive_slice(text, -budget)
    } else {
        text.to_vec()
    };
    let mut all: Vec<Vec<u16>> = Vec::new();
    let mut cur = Vec::new();
    for &u in &tail {
        if naive_ws(u) {
            if !cur.is_empty() {
                all.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(u);
        }
    }
    if !cur.is_empty() {
        all.push(cur);
    }
    naive_slice(&all, -mw)
}

/// The reference's `detectTextRepetition`, quadratic: `(repeats, period,
/// covered tokens, sample)` of the best repetition, if one qualifies.
pub fn detect(text: &[u16], t: &RepetitionThresholds) -> Option<Hit> {
    let tokens = tokens(text, t.max_window_tokens);
    let n = tokens.len();
    if (n as f64) < naive_max(t.min_covered_tokens, 2.0) {
        return None;
    }
    let max_period = naive_min(t.max_period_tokens, (n as f64 / 2.0).floor());
    let mut best: Option<Hit> = None;
    let mut period = 1.0f64;
    while period <= max_period {
        let p = period as usize;
        let mut repeats = 1usize;
        let mut start = n as isize - 2 * p as isize;
        'outer: while start >= 0 {
            for i in 0..p {
                if tokens[start as usize + i] != tokens[n - p + i] {
                    break 'outer;
                }
            }
            repeats += 1;
            start -= p as isize;
        }
        let covered = repeats * p;
        let better = match &best {
            None => true,
            Some(b) => covered > b.2,
        };
        if repeats as f64 >= t.min_repeats && covered as f64 >= t.min_covered_tokens && better {
            let sample = tokens[n - p..].join(&0x20u16);
            best = Some((repeats, p, covered, sample));
        }
        period += 1.0;
    }
    best
}

/// `text.replace(/\s+/g, ' ').trim()` on code units.
pub fn normalize(text: &[u16]) -> Vec<u16> {
    let mut replaced = Vec::new();
    let mut in_ws = false;
    for &u in text {
        if naive_ws(u) {
            if !in_ws {
                replaced.push(0x20);
            }
            in_ws = true;
        } else {
            replaced.push(u);
            in_ws = false;
        }
    }
    let start = replaced.iter().position(|&u| !naive_ws(u)).unwrap_or(replaced.len());
    let end = replaced.iter().rposition(|&u| !naive_ws(u)).map_or(start, |e| e + 1);
    replaced[start..end].to_vec()
}
