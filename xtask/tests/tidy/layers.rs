//! Rule 12: the CLI executor's layers import only downwards.

use crate::{assert_clean, workspace};
use xtask::tidy_layers;
use xtask::tidy_violation::{Rule, SourceFile};

#[test]
fn workspace_rule_12_the_cli_executor_imports_only_downwards() {
    let ws = workspace();
    let files: Vec<&SourceFile> =
        ws.rust_files.iter().filter(|f| f.path.starts_with(tidy_layers::CLI_EXECUTOR_SRC)).collect();
    for (folder, _) in tidy_layers::CLI_EXECUTOR_LAYERS {
        let prefix = format!("{}{folder}/", tidy_layers::CLI_EXECUTOR_SRC);
        assert!(files.iter().any(|f| f.path.starts_with(&prefix)), "no file read under {prefix}");
    }
    assert_clean("cli-executor-layers", files.into_iter().flat_map(tidy_layers::check_cli_executor_layers).collect());
}

/// The rule's findings for `text` at `path` under the CLI executor's `src/`, as lines.
fn layers(path: &str, text: &str) -> Vec<usize> {
    let file = SourceFile::new(&format!("{}{path}", tidy_layers::CLI_EXECUTOR_SRC), text);
    let found = tidy_layers::check_cli_executor_layers(&file);
    assert!(found.iter().all(|v| v.rule == Rule::CliExecutorLayers), "{found:?}");
    found.iter().map(|v| v.line).collect()
}

#[test]
fn rule_12_the_base_imports_neither_a_room_nor_the_loop() {
    let text = "//! B.\nuse crate::Error;\nuse crate::base::limits::X;\nuse crate::codex::home;\nfn f() { crate::claude::g(); crate::run::h(); }\n";
    assert_eq!(layers("base/child.rs", text), [4, 5, 5]);
    assert_eq!(layers("base/journal/tests.rs", "//! T.\nuse crate::run::router::Router;\n"), [2]);
}

#[test]
fn rule_12_a_room_imports_the_base_and_itself_only() {
    let text = "//! C.\nuse crate::base::pump::Pump;\nuse crate::codex::jsonrpc;\nuse super::record::ThreadRecord;\n\
                use crate::claude::Claude;\nuse crate::run::supervise::serve;\n";
    assert_eq!(layers("codex/core/effect.rs", text), [5, 6]);
    let other = "//! C.\nuse crate::codex::Report;\nuse crate::claude::tz::Zones;\n";
    assert_eq!(layers("claude/core/limit.rs", other), [2]);
    let found = tidy_layers::check_cli_executor_layers(&SourceFile::new(
        &format!("{}claude/task.rs", tidy_layers::CLI_EXECUTOR_SRC),
        "//! C.\nuse crate::codex::reconcile::ABSENT;\n",
    ));
    assert!(found[0].message.contains("never the other room"), "{found:?}");
}

#[test]
fn rule_12_the_loop_may_import_every_layer() {
    let text = "//! R.\nuse crate::base::worker::In;\nuse crate::codex::task::CodexTask;\nuse crate::claude::task::ClaudeTask;\nuse crate::run::supervise::serve;\n";
    assert_eq!(layers("run/router.rs", text), Vec::<usize>::new());
}

#[test]
fn rule_12_groups_lines_and_super_paths_are_read() {
    let grouped = "//! G.\nuse crate::{\n    Error,\n    base::report::Report,\n    run::connection,\n};\n";
    assert_eq!(layers("claude/cli.rs", grouped), [2]);
    // `super` climbs from the file's module: out of `codex/` from `codex/core/x.rs` takes three.
    let climbing = "//! S.\nuse super::super::jsonrpc;\nuse super::super::super::run::router;\nuse super::super::super::base::x;\n";
    assert_eq!(layers("codex/core/x.rs", climbing), [3]);
    // Inside an inline module, `super` is the file's own module (`base`); two climb to the root.
    let inline = "//! I.\nfn f() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use super::limits::X;\n    \
                  use super::super::run::router;\n}\nuse super::codex::Codex;\n";
    assert_eq!(layers("base/mod.rs", inline), [7, 9]);
}

#[test]
fn rule_12_comments_strings_and_characters_are_not_imports() {
    let text = "//! See `crate::run::router`.\n/// A [`crate::codex::Codex`] link.\nfn f() {\n    /* crate::run::x /* nested */ crate::claude::y */\n    \
                let s = \"crate::run::z\";\n    let r = r#\"crate::codex::\"q\"# ;\n    let c = '\"';\n    let d = '\\'';\n    \
                let l: &'static str = \"\";\n    crate::run::after_all();\n}\n";
    assert_eq!(layers("base/x.rs", text), [10]);
}

#[test]
fn rule_12_every_file_sits_in_a_layer_folder_and_names_layers() {
    assert_eq!(layers("helpers.rs", "//! H.\nuse crate::base::x;\n"), [0]);
    assert_eq!(layers("util/x.rs", "//! U.\n"), [0]);
    assert_eq!(layers("lib.rs", "//! L.\npub mod run;\npub use run::connection;\n"), Vec::<usize>::new());
    // A root alias hides a layer: inside the crate, paths go through the folders.
    assert_eq!(layers("codex/task.rs", "//! T.\nuse crate::connection::run;\nuse crate::Error;\n"), [2]);
    // Other crates are not this rule's business.
    let elsewhere = SourceFile::new("adapters/bridge/src/x.rs", "//! X.\nuse crate::server::y;\n");
    assert!(tidy_layers::check_cli_executor_layers(&elsewhere).is_empty());
}
