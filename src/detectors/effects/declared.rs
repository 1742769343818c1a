//! Where a tool's effect is declared outside the host's own `loopEffects`:
//! an MCP server's tool annotations, and the coding agents' built-in
//! file-editing tools.
//!
//! Both the coding-agent hooks (`doomloop hook`) and the log importers
//! (`doomloop replay` / `doomloop eval`) read these, so a replayed log of
//! an agent is scored as the hook scores the live agent: one table, one
//! annotation rule, here in the core that both depend on. The npm
//! package's `doom-loop-wasm/mcp` applies the same annotation rule
//! (`annotatedLoopEffect` in `js/adapters/mcp.js`); the shared cases in
//! `tests/fixtures/mcp-annotations.json` hold the two to it.

use super::Effect;
use crate::js_string::JsString;
use crate::json::{Object, Value};

/// Claude Code's file-editing tools.
pub const CLAUDE_CODE_WRITES: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];
/// Gemini CLI's file-editing tools.
pub const GEMINI_CLI_WRITES: &[&str] = &["replace", "write_file"];
/// Codex CLI's file-editing tool.
pub const CODEX_WRITES: &[&str] = &["apply_patch"];
/// GitHub Copilot CLI's file-editing tools: as the model calls them `edit`
/// and `create` (1.0.102 offers these to a Responses-API model), which its
/// PascalCase hook payloads name `Edit` and `Write` (measured with the
/// real CLI).
pub const COPILOT_WRITES: &[&str] = &["Edit", "Write", "edit", "create"];

/// `loopEffects` declaring each of `tools` a write (the built-in tables
/// above, as the session takes them). Shell tools are never declared: a
/// command may write or not, and nothing measured says which to trust.
pub fn writes(tools: &[&str]) -> Object {
    Object::from_entries(
        tools
            .iter()
            .map(|tool| (JsString::from(*tool), Value::String(JsString::from("write"))))
            .collect(),
    )
}

/// The MCP hints the rule reads, in the order it reads them.
pub const HINTS: &[&str] = &["readOnlyHint", "destructiveHint", "idempotentHint"];

/// A tool's effect from its MCP `annotations`: [`Effect::Read`] when
/// `readOnlyHint` is `true`; [`Effect::Write`] when `readOnlyHint` is
/// `false` or `destructiveHint` is `true` (it modifies its environment);
/// `None` otherwise (unknown). `idempotentHint` adds nothing: a write
/// repeated with the same arguments is never counted as a change anyway.
/// A hint that is present but not a boolean is ignored, and `invalid` is
/// called with its name (the caller says so once).
pub fn from_annotations(annotations: &Value, invalid: &mut dyn FnMut(&'static str)) -> Option<Effect> {
    let object = annotations.as_object()?;
    let mut hint = |name: &'static str| match object.get(name) {
        None | Some(Value::Undefined) => None,
        Some(Value::Bool(value)) => Some(*value),
        Some(_) => {
            invalid(name);
            None
        }
    };
    let read_only = hint("readOnlyHint");
    let destructive = hint("destructiveHint");
    hint("idempotentHint");
    match (read_only, destructive) {
        (Some(true), _) => Some(Effect::Read),
        (Some(false), _) | (_, Some(true)) => Some(Effect::Write),
        _ => None,
    }
}

/// The one warning for hints that were not booleans (`names`: `tool.hint`,
/// as `doom-loop-wasm/mcp` words it).
pub fn invalid_hints_warning(names: &[String]) -> String {
    format!(
        "[DoomLoop] MCP tool annotations that are not booleans were ignored ({}); those tools' effects are unknown unless another hint says.",
        names.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    /// The cases `doom-loop-wasm/mcp` is held to as well
    /// (tests/js/effects.test.mjs).
    #[test]
    fn annotations_map_to_the_effect_the_mcp_entry_maps_them_to() {
        let fixture = parse(include_str!("../../../tests/fixtures/mcp-annotations.json")).unwrap();
        let Some(Value::Array(cases)) = fixture.as_object().and_then(|o| o.get("cases")) else {
            panic!("no cases");
        };
        assert!(cases.len() >= 10);
        for case in cases {
            let case = case.as_object().unwrap();
            let mut invalid = Vec::new();
            let effect = from_annotations(case.get("annotations").unwrap(), &mut |hint| invalid.push(hint));
            let expected = match case.get("effect").unwrap() {
                Value::Null => None,
                declared => Effect::from_declaration(declared),
            };
            assert_eq!(effect, expected, "{case:?}");
            let Some(Value::Array(names)) = case.get("invalid") else {
                panic!("no invalid list");
            };
            let names: Vec<String> = names.iter().map(|n| n.as_js_string().unwrap().to_string()).collect();
            assert_eq!(invalid, names, "{case:?}");
        }
    }
}
