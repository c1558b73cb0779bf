//! Rule 15: only the files that own it signal a process.

use crate::{assert_clean, over_rust_files, rules};
use xtask::tidy_signals;
use xtask::tidy_violation::{Rule, SourceFile};

#[test]
fn workspace_rule_15_only_the_signal_sites_signal() {
    assert_clean("signal-sites", over_rust_files(tidy_signals::check_signal_sites));
}

/// A signalling call, assembled at run time so this file does not look like one.
fn call(name: &str) -> String {
    match name {
        "group" => concat!("kill_process", "_group(pgid, Signal", "::TERM)").to_string(),
        "drop" => concat!("command.kill", "_on_drop(true);").to_string(),
        _ => concat!("child.start", "_kill();").to_string(),
    }
}

#[test]
fn rule_15_fires_on_a_signal_outside_its_sites() {
    let text = format!("//! A child.\nfn stop() {{\n    {}\n}}\n", call("start"));
    let v = tidy_signals::check_signal_sites(&SourceFile::new("adapters/cli-executor/src/base/child.rs", &text));
    assert_eq!(rules(&v), [(3, Rule::SignalSites)]);
    assert!(v[0].message.contains("SIGNAL_SITES"), "{}", v[0].message);
    // Two calls on one line are two findings; the group signal names both of its calls.
    let text = format!("//! A daemon.\nfn f() {{ {} }}\n", call("group"));
    let v = tidy_signals::check_signal_sites(&SourceFile::new("adapters/orchestrator/src/serve.rs", &text));
    assert_eq!(rules(&v), [(2, Rule::SignalSites), (2, Rule::SignalSites)]);
}

#[test]
fn rule_15_allows_each_site_its_own_calls_only() {
    let group = format!("//! Groups.\nfn f() {{ {} }}\n", call("group"));
    assert_eq!(
        tidy_signals::check_signal_sites(&SourceFile::new("adapters/cli-executor/src/base/group.rs", &group)),
        []
    );
    let drop = format!("//! The surface.\nfn f() {{ {} }}\n", call("drop"));
    let surface = "adapters/cli-executor/src/codex/surface.rs";
    assert_eq!(tidy_signals::check_signal_sites(&SourceFile::new(surface, &drop)), []);
    // The surface check may kill its one child on drop, not signal a group.
    let v = tidy_signals::check_signal_sites(&SourceFile::new(surface, &group));
    assert_eq!(rules(&v), [(2, Rule::SignalSites), (2, Rule::SignalSites)]);
}

#[test]
fn rule_15_exempts_tests_examples_benches_and_comments() {
    let text = format!("//! A harness.\nfn f() {{ {} }}\n", call("start"));
    for path in [
        "adapters/orchestrator/tests/support/mod.rs",
        "adapters/cli-executor/examples/cli_bench.rs",
        "adapters/store/benches/commit.rs",
    ] {
        assert_eq!(tidy_signals::check_signal_sites(&SourceFile::new(path, &text)), [], "{path}");
    }
    let comment = format!("//! A child.\n/// Never `{}` here.\nfn f() {{}}\n", call("start"));
    assert_eq!(
        tidy_signals::check_signal_sites(&SourceFile::new("adapters/cli-executor/src/base/child.rs", &comment)),
        []
    );
    let test_module =
        format!("//! A child.\nfn f() {{}}\n#[cfg(test)]\nmod tests {{ fn t() {{ {} }} }}\n", call("start"));
    assert_eq!(
        tidy_signals::check_signal_sites(&SourceFile::new("adapters/cli-executor/src/base/child.rs", &test_module)),
        []
    );
}
