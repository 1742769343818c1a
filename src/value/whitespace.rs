//! JavaScript's whitespace set, below the modules that need it.
//!
//! Both the JSON reader (`StringToNumber` trims it) and the text detector
//! (`\s+` normalisation, token boundaries) use the same predicate; it
//! lives here so neither has to import the other.

/// True for the code points JavaScript's `\s` and `String.prototype.trim`
/// treat as whitespace (ECMAScript WhiteSpace and LineTerminator).
///
/// This differs from Rust's [`char::is_whitespace`]: U+FEFF is included and
/// U+0085 is not. U+180E and U+200B are not whitespace either, and neither
/// is any surrogate.
///
/// ```
/// use doom_loop::text::is_js_whitespace;
/// assert!(is_js_whitespace(0xFEFF));
/// assert!(!is_js_whitespace(0x85));
/// ```
pub fn is_js_whitespace(code_point: u32) -> bool {
    matches!(
        code_point,
        0x09..=0x0D
            | 0x20
            | 0xA0
            | 0x1680
            | 0x2000..=0x200A
            | 0x2028
            | 0x2029
            | 0x202F
            | 0x205F
            | 0x3000
            | 0xFEFF
    )
}
