//! The operator documentation cannot drift from the binary: every `orchestrator ...`
//! command that README.md, docs/operator.md, docs/connect.md, docs/cli-agents.md, docs/install.md and docs/scale-out.md show (in shell blocks and
//! inline code) names subcommands that exist and flags that their `--help` lists.

mod support;

use std::collections::BTreeSet;
use std::process::Command;
use support::orchestrator_bin;

const DOCS: [&str; 6] =
    ["README.md", "docs/operator.md", "docs/connect.md", "docs/cli-agents.md", "docs/install.md", "docs/scale-out.md"];

/// The `orchestrator` commands a Markdown text shows, as the words after `orchestrator`.
fn commands(markdown: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut in_shell = false;
    for line in markdown.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_shell = !in_shell && trimmed.len() > 3;
            continue;
        }
        let mut candidates: Vec<String> = Vec::new();
        if in_shell {
            candidates.push(trimmed.to_string());
        }
        // Inline code spans: the text between pairs of backticks.
        candidates.extend(line.split('`').skip(1).step_by(2).map(String::from));
        for text in candidates {
            let rest = if let Some((_, after)) = text.split_once("--bin orchestrator -- ") {
                after.to_string()
            } else if let Some(after) = text.strip_prefix("orchestrator ") {
                after.to_string()
            } else {
                continue;
            };
            found.push(rest.split_whitespace().map(String::from).collect());
        }
    }
    found
}

#[test]
fn every_documented_command_exists_with_its_flags() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut checked = BTreeSet::new();
    for doc in DOCS {
        let text = std::fs::read_to_string(root.join(doc)).unwrap_or_else(|e| panic!("{doc}: {e}"));
        for words in commands(&text) {
            let subcommands: Vec<&str> = words
                .iter()
                .map(String::as_str)
                .take_while(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !w.starts_with('-'))
                .collect();
            if subcommands.is_empty() {
                continue;
            }
            let out = Command::new(orchestrator_bin()).args(&subcommands).arg("--help").output().expect("run --help");
            let help = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{doc}: `orchestrator {}` is not a command", subcommands.join(" "));
            for flag in words.iter().filter(|w| w.starts_with("--")) {
                let flag = flag.split('=').next().unwrap_or_default().trim_end_matches([',', '.', ')']);
                assert!(
                    help.contains(&format!("{flag} "))
                        || help.contains(&format!("{flag}\n"))
                        || help.contains(&format!("{flag}=")),
                    "{doc}: `orchestrator {}` has no flag {flag}:\n{help}",
                    subcommands.join(" ")
                );
            }
            checked.insert(words.join(" "));
        }
    }
    // The guide shows at least serve, doctor, status, oauth and store commands.
    for needed in ["serve", "doctor", "status", "oauth approve", "store verify"] {
        assert!(
            checked.iter().any(|c| c.starts_with(needed)),
            "no documented `orchestrator {needed}` among {checked:?}"
        );
    }
}
