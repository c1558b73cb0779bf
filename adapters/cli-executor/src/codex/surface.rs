//! The check at executor start that the codex on hand is the one this executor was built
//! against: `codex --version` names the pinned version, and the JSON schema its app-server
//! generates (`codex app-server generate-json-schema --out DIR`) still has every method,
//! field and value the core relies on ([`SURFACE`], `surface.txt`: the one list the code and
//! the tests share). Otherwise the executor refuses to run Codex workers, with one line
//! naming what moved ([`Error::CodexSurface`]): a CLI update that renames a field fails
//! loudly at start, not silently in a worker's third turn. And `codex features list` still
//! offers every feature the session config turns off (`codex::home::FEATURES_OFF`: the goal
//! loop, hooks, plugins; [`features_gone`]): one that disappears fails closed.
//!
//! The version is pinned exactly, not a range: app-server calls itself experimental, and
//! between releases weeks apart its flags and methods came and went (the research notes:
//! `--full-auto`, `mcp-server`); a new version is taken on by recording it again and moving
//! the pin, the schema check then still guards that build.

use crate::Error;
use crate::base::limits::{SURFACE_CHECK_MS_MAX, SURFACE_SCHEMA_BYTES_MAX};
use crate::codex::home::FEATURES_OFF;
use serde_json::Value;
use std::collections::BTreeSet;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// The codex-cli version this executor was built and recorded against.
pub const CODEX_VERSION: &str = "0.169.0";

/// What the core relies on, one requirement a line (the format is in the file's header).
pub const SURFACE: &str = include_str!("surface.txt");

/// The schema files the requirements are looked up in.
const FILES: [&str; 5] = [
    "ClientRequest.json",
    "ClientNotification.json",
    "ServerRequest.json",
    "ServerNotification.json",
    "codex_app_server_protocol.v2.schemas.json",
];

/// Runs `program` (with `prefix` before its own arguments: a stand-in's script) for its
/// version and its schema, in `scratch` (emptied first; the schema is written there), and
/// checks both. The child gets `scratch/home` as its `CODEX_HOME`, so no config of the
/// person's is read.
pub async fn check(program: &Path, prefix: &[String], scratch: &Path) -> Result<(), Error> {
    let moved = |detail: String| Error::CodexSurface { detail };
    let _ = std::fs::remove_dir_all(scratch);
    let home = scratch.join("home");
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&home).map_err(|e| Error::io("create", &home, &e))?;
    let version = run(program, prefix, &["--version"], &home).await?;
    let found = version.split_whitespace().nth(1).unwrap_or_default();
    if !version.starts_with("codex-cli ") || found != CODEX_VERSION {
        return Err(moved(format!(
            "{} --version says {:?}, not the pinned codex-cli {CODEX_VERSION} (npm install @openai/codex@{CODEX_VERSION}, or pass --codex PATH)",
            program.display(),
            version.trim()
        )));
    }
    let out = scratch.join("schema");
    let out_arg = out.display().to_string();
    run(program, prefix, &["app-server", "generate-json-schema", "--out", &out_arg], &home).await?;
    let lacking = missing(&out, SURFACE)?;
    if !lacking.is_empty() {
        return Err(moved(format!("codex-cli {CODEX_VERSION}'s app-server schema lacks: {}", lacking.join("; "))));
    }
    let listing = run(program, prefix, &["features", "list"], &home).await?;
    let gone = features_gone(&listing, &FEATURES_OFF);
    if gone.is_empty() {
        return Ok(());
    }
    Err(moved(format!(
        "codex-cli {CODEX_VERSION}'s `features list` no longer offers {} (each session turns it off so that only the daemon starts turns)",
        gone.join(", ")
    )))
}

/// The names of `wanted` that `listing` (`codex features list`: a feature a line, its name,
/// stage and default) lacks or marks `removed`: a feature the session config turns off
/// that the binary no longer has, so turning it off would prove nothing.
pub fn features_gone(listing: &str, wanted: &[&str]) -> Vec<String> {
    let offered = |name: &str| {
        listing.lines().any(|line| {
            let mut words = line.split_whitespace();
            words.next() == Some(name) && words.next().is_some_and(|stage| stage != "removed")
        })
    };
    wanted.iter().filter(|name| !offered(name)).map(|name| name.to_string()).collect()
}

/// The requirements of `surface` that the schema in `dir` does not meet, each as its line.
pub fn missing(dir: &Path, surface: &str) -> Result<Vec<String>, Error> {
    let [requests, client_notes, server_requests, notes, types] = FILES;
    let (requests, client_notes, server_requests, notes, types) = (
        &read_json(&dir.join(requests))?,
        &read_json(&dir.join(client_notes))?,
        &read_json(&dir.join(server_requests))?,
        &read_json(&dir.join(notes))?,
        &read_json(&dir.join(types))?,
    );
    let mut lacking = Vec::new();
    for line in surface.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let met = match words.as_slice() {
            ["request", method, props @ ..] => method_has(requests, method, props),
            ["notification", method, props @ ..] => method_has(notes, method, props),
            ["server-request", method] => method_has(server_requests, method, &[]),
            ["client-notification", method] => method_has(client_notes, method, &[]),
            ["type", name, props @ ..] => definition(types, name).is_some_and(|d| has_props(d, props)),
            ["variant", name, tag, props @ ..] => definition(types, name).is_some_and(|d| variant_has(d, tag, props)),
            ["enum", name, values @ ..] => definition(types, name).is_some_and(|d| enum_has(d, values)),
            _ => return Err(Error::CodexSurface { detail: format!("surface.txt: cannot read {line:?}") }),
        };
        if !met {
            lacking.push(line.to_string());
        }
    }
    Ok(lacking)
}

/// The file's JSON, at most [`SURFACE_SCHEMA_BYTES_MAX`] bytes.
fn read_json(path: &Path) -> Result<Value, Error> {
    let lacks = |why: String| Error::CodexSurface { detail: format!("the generated schema {}: {why}", path.display()) };
    let size = std::fs::metadata(path).map_err(|e| lacks(e.to_string()))?.len();
    if size > SURFACE_SCHEMA_BYTES_MAX {
        return Err(lacks(format!("{size} bytes, over {SURFACE_SCHEMA_BYTES_MAX}")));
    }
    let text = std::fs::read_to_string(path).map_err(|e| lacks(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| lacks(e.to_string()))
}

/// The `oneOf` member of a message file for `method`, and its params' properties.
fn method_has(file: &Value, method: &str, props: &[&str]) -> bool {
    let members = file.get("oneOf").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let Some(member) = members.iter().find(|m| {
        m.pointer("/properties/method/enum").and_then(Value::as_array).is_some_and(|e| e.iter().any(|v| v == method))
    }) else {
        return false;
    };
    if props.is_empty() {
        return true;
    }
    let params = member.pointer("/properties/params");
    let resolved = match params.and_then(|p| p.get("$ref")).and_then(Value::as_str) {
        Some(reference) => reference.strip_prefix("#/definitions/").and_then(|name| definition(file, name)),
        None => params,
    };
    resolved.is_some_and(|p| has_props(p, props))
}

fn definition<'a>(file: &'a Value, name: &str) -> Option<&'a Value> {
    file.get("definitions")?.get(name)
}

fn has_props(definition: &Value, props: &[&str]) -> bool {
    let properties = definition.get("properties");
    props.iter().all(|p| properties.is_some_and(|all| all.get(p).is_some()))
}

fn variant_has(definition: &Value, tag: &str, props: &[&str]) -> bool {
    let members = definition.get("oneOf").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    members.iter().any(|m| {
        let tagged =
            m.pointer("/properties/type/enum").and_then(Value::as_array).is_some_and(|e| e.iter().any(|v| v == tag));
        tagged && has_props(m, props)
    })
}

fn enum_has(definition: &Value, values: &[&str]) -> bool {
    let mut found = BTreeSet::new();
    collect_enums(definition, &mut found);
    values.iter().all(|v| found.contains(*v))
}

/// Every string of every `enum` in `value`, nested ones too (`$ref`s are not followed).
fn collect_enums<'a>(value: &'a Value, found: &mut BTreeSet<&'a str>) {
    match value {
        Value::Object(object) => {
            if let Some(list) = object.get("enum").and_then(Value::as_array) {
                found.extend(list.iter().filter_map(Value::as_str));
            }
            object.values().for_each(|v| collect_enums(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_enums(v, found)),
        _ => {}
    }
}

/// Runs `program prefix.. args..` with `CODEX_HOME=home`, within [`SURFACE_CHECK_MS_MAX`];
/// its stdout when it exits 0.
async fn run(program: &Path, prefix: &[String], args: &[&str], home: &Path) -> Result<String, Error> {
    let what = format!("{} {}", program.display(), args.join(" "));
    let failed = |detail: String| Error::CodexSurface { detail: format!("{what}: {detail}") };
    let mut command = tokio::process::Command::new(program);
    command.args(prefix).args(args).env("CODEX_HOME", home).stdin(Stdio::null()).kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_millis(SURFACE_CHECK_MS_MAX), command.output())
        .await
        .map_err(|_| failed(format!("no answer within {SURFACE_CHECK_MS_MAX} ms")))?
        .map_err(|e| failed(e.to_string()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
        return Err(failed(format!("{} ({last})", output.status)));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(dir: &Path, name: &str, value: &Value) {
        std::fs::write(dir.join(name), value.to_string()).expect("write");
    }

    #[test]
    fn a_feature_turned_off_must_be_listed_and_not_removed() {
        let listing = "goals                  stable             true\nhooks   stable true\nplugin_hooks  removed  false\nplugins removed false\n";
        assert_eq!(features_gone(listing, &["goals", "hooks"]), Vec::<String>::new());
        assert_eq!(features_gone(listing, &["plugins", "hook", "goals"]), ["plugins", "hook"]);
        assert_eq!(features_gone("", &FEATURES_OFF), FEATURES_OFF.map(str::to_string));
    }

    #[test]
    fn each_kind_of_requirement_is_looked_up_and_a_missing_one_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let message = |method: &str, params: Option<&str>| {
            let mut props = json!({"method": {"enum": [method]}});
            if let Some(p) = params {
                props["params"] = json!({"$ref": format!("#/definitions/{p}")});
            }
            json!({"properties": props})
        };
        write(
            d,
            "ClientRequest.json",
            &json!({"oneOf": [message("turn/start", Some("TurnStartParams"))],
                    "definitions": {"TurnStartParams": {"properties": {"threadId": {}, "input": {}}}}}),
        );
        write(d, "ClientNotification.json", &json!({"oneOf": [message("initialized", None)]}));
        write(d, "ServerRequest.json", &json!({"oneOf": []}));
        write(d, "ServerNotification.json", &json!({"oneOf": [message("turn/started", None)]}));
        write(
            d,
            "codex_app_server_protocol.v2.schemas.json",
            &json!({"definitions": {
                "Turn": {"properties": {"id": {}}},
                "ThreadItem": {"oneOf": [{"properties": {"type": {"enum": ["userMessage"]}, "clientId": {}}}]},
                "CodexErrorInfo": {"anyOf": [{"enum": ["usageLimitExceeded"]}, {"enum": ["unauthorized"]}]},
            }}),
        );
        let surface = "# a comment\nrequest turn/start threadId input\nclient-notification initialized\n\
                       notification turn/started\ntype Turn id\nvariant ThreadItem userMessage clientId\n\
                       enum CodexErrorInfo usageLimitExceeded unauthorized\n";
        assert_eq!(missing(d, surface).expect("read"), Vec::<String>::new());
        let lacking = "request turn/start clientUserMessageId\nserver-request item/fileChange/requestApproval\n\
                       notification turn/completed\ntype Turn status\nvariant ThreadItem agentMessage\n\
                       enum CodexErrorInfo rateLimitExceeded\n";
        assert_eq!(missing(d, lacking).expect("read"), lacking.lines().collect::<Vec<_>>());
        assert_eq!(missing(d, "field turn/start\n").map_err(|e| e.code()), Err("CODEX_SURFACE"));
        std::fs::remove_file(d.join("ServerRequest.json")).expect("remove");
        assert_eq!(missing(d, surface).map_err(|e| e.code()), Err("CODEX_SURFACE"));
    }
}
