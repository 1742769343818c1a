//! The one comma loop of the trace crate's hand-written JSON writers
//! (`Timeline::to_json`, `Transcript::to_json`, `Report::to_json`): they
//! write straight into a `String`, key order fixed, with the core's string
//! and number writers, and share this for the lists.

/// Writes `items` separated by commas (the brackets are the caller's).
pub(crate) fn write_list<T>(
    out: &mut String,
    items: impl IntoIterator<Item = T>,
    mut write: impl FnMut(T, &mut String),
) {
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write(item, out);
    }
}
