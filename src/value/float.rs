//! Decimal text to `f64`, for the JSON parser and `Number(string)`.
//!
//! Why a module of its own: Rust's correctly rounded float parser
//! (`str::parse::<f64>`, core's `dec2flt`) is about 15 KB of the gzipped
//! wasm module (its tables of powers of five, its big-decimal slow path,
//! their panic messages), and the detector module every agent loads has a
//! size budget. So the exact fast path (Clinger's: a mantissa of at most
//! 2^53 and a power of ten of at most 10^22 are both exact in an `f64`,
//! and one IEEE multiplication or division of exact operands is correctly
//! rounded) is done here, on every target; what it cannot do goes, in the
//! wasm binding (feature `host-float`, wasm32 only), to the host's own
//! `parseFloat` — the very parser whose answers the reference gets, and
//! as correctly rounded as Rust's — and elsewhere to `str::parse`. Both
//! fallbacks see only text that [`decimal_literal`] accepted, where
//! `parseFloat`, `Number` and Rust's parser agree.

/// Whether `text` is `[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?`:
/// the decimal literals `Number(string)` accepts (after trimming), which
/// Rust's parser accepts too, with the same value.
pub(crate) fn decimal_literal(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while bytes.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let mut mantissa = digits(&mut i);
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        mantissa += digits(&mut i);
    }
    if mantissa == 0 {
        return false;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == bytes.len()
}

/// The value of a literal [`decimal_literal`] accepted, correctly rounded.
pub(crate) fn parse_decimal(text: &str) -> f64 {
    fast_path(text).unwrap_or_else(|| fallback(text))
}

/// 10^0 ..= 10^22, each exact in an `f64`.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// Clinger's fast path; `None` when the value needs more than one exact
/// operation (over 19 significant digits, a mantissa above 2^53, or a
/// power of ten beyond 10^±22).
fn fast_path(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    let negative = bytes.first() == Some(&b'-');
    let mut i = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
    let mut mantissa: u64 = 0;
    let mut significant = 0u32;
    let mut scale: i64 = 0;
    let mut fraction = false;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'0'..=b'9' => {
                if mantissa != 0 || b != b'0' {
                    significant += 1;
                    if significant > 19 {
                        return None;
                    }
                }
                mantissa = mantissa * 10 + u64::from(b - b'0');
                scale -= i64::from(fraction);
            }
            b'.' => fraction = true,
            _ => break,
        }
        i += 1;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        let exponent_negative = bytes.get(i) == Some(&b'-');
        i += usize::from(matches!(bytes.get(i), Some(b'+' | b'-')));
        let mut exponent: i64 = 0;
        while let Some(&b) = bytes.get(i).filter(|b| b.is_ascii_digit()) {
            // Beyond any f64 either way: leave it to the fallback.
            if exponent > 100_000 {
                return None;
            }
            exponent = exponent * 10 + i64::from(b - b'0');
            i += 1;
        }
        scale += if exponent_negative { -exponent } else { exponent };
    }
    let magnitude = if mantissa == 0 {
        0.0
    } else {
        if mantissa > 1 << 53 || scale.unsigned_abs() > 22 {
            return None;
        }
        let power = POW10[scale.unsigned_abs() as usize];
        if scale < 0 {
            mantissa as f64 / power
        } else {
            mantissa as f64 * power
        }
    };
    Some(if negative { -magnitude } else { magnitude })
}

#[cfg(all(feature = "host-float", target_arch = "wasm32"))]
fn fallback(text: &str) -> f64 {
    js_sys::parse_float(text)
}

#[cfg(not(all(feature = "host-float", target_arch = "wasm32")))]
fn fallback(text: &str) -> f64 {
    text.parse().unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::test_rng::XorShift;

    fn rust(text: &str) -> f64 {
        text.parse().unwrap_or(f64::NAN)
    }

    #[test]
    fn literals_are_what_rust_and_number_accept() {
        for text in ["0", "-0", "+1", "1.", ".5", "1.e5", "1e+5", "1E-5", "007", "-.5e-3"] {
            assert!(decimal_literal(text), "{text}");
            assert!(text.parse::<f64>().is_ok(), "{text}");
        }
        for text in [
            "", "+", "-", ".", "+.", "e5", ".e5", "1e", "1e+", "1.5e", "1e5e5", "1-2", "1..2", "1.5.5", "1 ", "inf",
            "NaN",
        ] {
            assert!(!decimal_literal(text), "{text}");
        }
    }

    #[test]
    fn the_fast_path_is_exact_and_the_rest_falls_back() {
        let fixed = [
            "0",
            "-0",
            "-0.0e5",
            "30000",
            "1.25",
            "0.1",
            "-6.35",
            "9007199254740992",
            "9007199254740993",
            "123456789012345678901",
            "1e22",
            "1e23",
            "4.9e-324",
            "1e-400",
            "1e400",
            "0.30000000000000004",
            "2.2250738585072014e-308",
            "1e99999999999999999999",
            "0e99999999999999999999",
            "0.000000000000000000000000001",
        ];
        for text in fixed {
            assert_eq!(parse_decimal(text).to_bits(), rust(text).to_bits(), "{text}");
        }
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..20_000 {
            let digits = 1 + rng.below(20);
            let mut text: String = (0..digits).map(|_| char::from(b'0' + rng.below(10) as u8)).collect();
            if rng.below(2) == 0 {
                let at = rng.below(digits + 1);
                text.insert(at, '.');
            }
            if rng.below(2) == 0 {
                text.push_str(&format!("e{}", rng.below(60) as i64 - 30));
            }
            if rng.below(2) == 0 {
                text.insert(0, '-');
            }
            if !decimal_literal(&text) {
                continue;
            }
            assert_eq!(parse_decimal(&text).to_bits(), rust(&text).to_bits(), "{text}");
        }
    }
}
