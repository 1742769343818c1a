//! `doomloop eval --html FILE`: one self-contained page (no network, no
//! external fonts or scripts) that shows where a detector would have
//! stepped in across a user's sessions.
//!
//! On top, per option, the totals: sessions, sessions with a loop caught
//! (a block or a stop), calls, calls a stop would have saved and — where the
//! logs record usage — tokens. Below, one row per session that reached any
//! verdict, worst first: a timeline with one cell per tool call, coloured by
//! the rung its call reached, and the calls after a stop shown as "would not
//! have run". Sessions without a verdict are counted, not drawn. The page
//! carries its data as one JSON object and draws it with a few lines of
//! inline script, so a history of thousands of sessions stays one small
//! file.

use doom_loop::json::{js_number, write_json_string};
use doom_loop::JsString;

use crate::eval::{Report, SessionRow};

fn push_string(s: &str, out: &mut String) {
    write_json_string(&JsString::from(s), out);
}

/// The page's data: option labels and totals, and the sessions with a
/// verdict (worst first, at most `limit`), plus how many had none.
fn data_json(report: &Report, sessions: &[SessionRow], limit: usize) -> String {
    let mut out = String::from("{\"options\":[");
    for (i, option) in report.options.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let m = &option.total;
        let tokens: f64 = sessions.iter().filter_map(|s| s.tracks.get(i)?.saved_tokens).sum();
        let with_tokens = sessions
            .iter()
            .any(|s| s.tracks.get(i).is_some_and(|t| t.saved_tokens.is_some()));
        out.push_str("{\"label\":");
        push_string(&option.label, &mut out);
        out.push_str(&format!(
            ",\"sessions\":{},\"failed\":{},\"intervened\":{},\"stopped\":{},\"unchanged\":{},\"changing\":{},\"calls\":{},\"saved\":{},\"tokens\":{}}}",
            m.runs,
            m.failed,
            m.intervened(),
            m.stopped,
            m.first.unchanged,
            m.first.changing,
            m.calls,
            m.saved,
            if with_tokens { js_number(tokens) } else { "null".to_string() }
        ));
    }
    let mut shown: Vec<&SessionRow> = sessions.iter().filter(|s| s.severity() > 0).collect();
    shown.sort_by(|a, b| {
        b.severity()
            .cmp(&a.severity())
            .then_with(|| a.source.cmp(&b.source))
            .then_with(|| a.id.cmp(&b.id))
    });
    let quiet = sessions.len() - shown.len();
    let hidden = shown.len().saturating_sub(limit);
    shown.truncate(limit);
    out.push_str(&format!("],\"quiet\":{quiet},\"hidden\":{hidden},\"sessions\":["));
    for (i, session) in shown.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"source\":");
        push_string(&session.source, &mut out);
        out.push_str(",\"id\":");
        push_string(&session.id, &mut out);
        out.push_str(",\"resolved\":");
        out.push_str(match session.resolved {
            Some(true) => "true",
            Some(false) => "false",
            None => "null",
        });
        out.push_str(",\"tracks\":[");
        for (j, track) in session.tracks.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            out.push_str("{\"rungs\":");
            push_string(&track.rungs, &mut out);
            out.push_str(&format!(",\"saved\":{},\"tokens\":", track.saved_calls));
            out.push_str(&track.saved_tokens.map_or("null".to_string(), js_number));
            out.push_str(",\"first\":");
            match &track.first {
                Some((round, message)) => {
                    out.push_str(&format!("{{\"round\":{round},\"message\":"));
                    push_string(message, &mut out);
                    out.push('}');
                }
                None => out.push_str("null"),
            }
            out.push('}');
        }
        out.push_str("]}");
    }
    out.push_str("]}");
    out
}

/// `json` as the text of a `<script type="application/json">` element that
/// every state of the HTML tokenizer reads as plain text: no `<` (a `</script>`
/// would end the element early, a `<!--<script>` would keep it from ending
/// at its own `</script>` and swallow the drawing script), `>` or `&`, and no
/// U+2028 / U+2029 (line terminators to older JavaScript parsers). Each is
/// written as its JSON escape, which `JSON.parse` reads back as the same
/// character; outside strings JSON text holds none of them.
pub fn inert(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Sessions drawn at most; the rest are counted.
pub const MAX_SESSIONS_DRAWN: usize = 2000;

/// The whole page.
pub fn render(report: &Report, sessions: &[SessionRow]) -> String {
    let data = inert(&data_json(report, sessions, MAX_SESSIONS_DRAWN));
    format!("{HEAD}<script id=\"data\" type=\"application/json\">{data}</script>\n<script>{SCRIPT}</script>\n</body>\n</html>\n")
}

const HEAD: &str = r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>doomloop eval</title>
<style>
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --bg: #ffffff; --card: #f6f8fa; --line: #d1d9e0;
  --none: #d0d7de; --observe: #d4a72c; --steer: #fb8f44; --escalate: #e16f24; --block: #cf222e; --stop: #6e011a; --skip: transparent; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --bg: #0d1117; --card: #151b23; --line: #3d444d;
  --none: #3d444d; --observe: #bb8009; --steer: #db6d28; --escalate: #f0883e; --block: #f85149; --stop: #ff7b72; } }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); margin: 24px; }
h1 { font-size: 20px; margin: 0 0 4px; } p.sub { color: var(--muted); margin: 0 0 16px; }
.totals { display: flex; flex-wrap: wrap; gap: 12px; margin-bottom: 20px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; min-width: 260px; }
.card h2 { font-size: 15px; margin: 0 0 8px; } .card table { border-collapse: collapse; }
.card td { padding: 1px 10px 1px 0; } .card td.n { text-align: right; font-variant-numeric: tabular-nums; font-weight: 600; }
.legend { display: flex; gap: 14px; flex-wrap: wrap; color: var(--muted); margin: 8px 0 14px; }
.legend i, .cells i { display: inline-block; width: 10px; height: 14px; border-radius: 2px; margin-right: 1px; vertical-align: middle; }
.legend i { margin-right: 4px; }
.r { border-top: 1px solid var(--line); padding: 8px 0; } .r .name { font-weight: 600; word-break: break-all; }
.r .meta { color: var(--muted); font-size: 12px; } .track { display: flex; gap: 8px; align-items: center; margin-top: 3px; }
.track .label { width: 96px; flex: none; color: var(--muted); font-size: 12px; } .cells { line-height: 0; }
.k-none { background: var(--none); } .k-o { background: var(--observe); } .k-s { background: var(--steer); }
.k-e { background: var(--escalate); } .k-b { background: var(--block); } .k-S { background: var(--stop); }
.k-x { background: var(--skip); outline: 1px dashed var(--none); outline-offset: -1px; }
.msg { color: var(--muted); font-size: 12px; margin-left: 104px; }
</style>
</head>
<body>
<h1>Doom loops in these sessions</h1>
<p class="sub">Each session replayed through the detector, as <code>doomloop eval</code> does: one cell per tool call, coloured by the rung it reached.</p>
<div class="totals" id="totals"></div>
<div class="legend"><span><i class="k-none"></i>no verdict</span><span><i class="k-o"></i>observe</span><span><i class="k-s"></i>steer</span><span><i class="k-e"></i>escalate</span><span><i class="k-b"></i>block (refused)</span><span><i class="k-S"></i>stop</span><span><i class="k-x"></i>would not have run</span></div>
<div id="sessions"></div>
"#;

const SCRIPT: &str = r#"
(function () {
  var data = JSON.parse(document.getElementById('data').textContent);
  function el(tag, cls, text) { var e = document.createElement(tag); if (cls) e.className = cls; if (text != null) e.textContent = text; return e; }
  function fmt(n) { return n == null ? '–' : Math.round(n).toLocaleString('en-US'); }
  var totals = document.getElementById('totals');
  data.options.forEach(function (o) {
    var card = el('div', 'card'); card.appendChild(el('h2', null, o.label));
    var t = el('table');
    [['sessions', o.sessions + (o.failed ? ' (+' + o.failed + ' unreadable)' : '')], ['loops caught (block or stop)', o.intervened],
     ['… on unchanged output', o.unchanged], ['… on changing output', o.changing], ['stopped', o.stopped],
     ['tool calls', fmt(o.calls)], ['calls a stop would have saved', fmt(o.saved)], ['tokens a stop would have saved', fmt(o.tokens)]]
      .forEach(function (row) { var tr = el('tr'); tr.appendChild(el('td', null, row[0])); tr.appendChild(el('td', 'n', String(row[1]))); t.appendChild(tr); });
    card.appendChild(t); totals.appendChild(card);
  });
  var list = document.getElementById('sessions');
  data.sessions.forEach(function (s) {
    var row = el('div', 'r');
    row.appendChild(el('div', 'name', s.id));
    row.appendChild(el('div', 'meta', s.source + (s.resolved === true ? ' · successful' : s.resolved === false ? ' · unsuccessful' : '')));
    s.tracks.forEach(function (t, i) {
      var line = el('div', 'track'); line.appendChild(el('span', 'label', data.options[i].label));
      var cells = el('span', 'cells');
      for (var c = 0; c < t.rungs.length; c++) { var k = t.rungs[c]; cells.appendChild(el('i', k === '.' ? 'k-none' : 'k-' + k)); }
      line.appendChild(cells); row.appendChild(line);
      if (t.first) {
        var note = 'round ' + t.first.round + ': ' + t.first.message;
        if (t.saved) note += ' — ' + t.saved + ' later calls' + (t.tokens != null ? ', ' + fmt(t.tokens) + ' tokens' : '') + ' would not have run';
        row.appendChild(el('div', 'msg', note));
      }
    });
    list.appendChild(row);
  });
  var tail = [];
  if (data.hidden) tail.push(data.hidden + ' more sessions with a verdict are not drawn');
  tail.push(data.quiet + ' sessions reached no verdict');
  list.appendChild(el('p', 'sub', tail.join('; ') + '.'));
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use doom_loop::json::{parse, to_json, Value};

    #[test]
    fn inert_data_holds_no_character_the_tokenizer_reads_and_parses_back_the_same() {
        let hostile = "<!--<script></script>&amp;]]>\u{2028}\u{2029}\\<\"";
        let json = to_json(&Value::Array(vec![Value::String(hostile.into())]));
        let data = inert(&json);
        assert!(!data.contains(['<', '>', '&', '\u{2028}', '\u{2029}']), "{data}");
        assert_eq!(parse(&data).unwrap(), parse(&json).unwrap());
    }
}
