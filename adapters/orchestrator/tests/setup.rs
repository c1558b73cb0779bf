//! The first run (`orchestrator setup`) and the configuration file under `serve`'s flags:
//! flag > environment > file > default, a bad file as one line naming the file, the line
//! and the key (and no daemon started), `setup` answered by flags writing a private file
//! and printing the next steps, refusing to ask without a terminal or to overwrite.

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `orchestrator ARGS` with a home and configuration directory of its own under `home`,
/// stdin not a terminal, and `env` set.
fn orchestrator(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_orchestrator"));
    command
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("RUST_BACKTRACE", "full")
        .env_remove("ORCHESTRATOR_DATA_DIR")
        .env_remove("ORCHESTRATOR_CONFIG")
        .env_remove("ORCHESTRATOR_MCP_TOKEN")
        .stdin(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("run orchestrator")
}

fn stdout(out: &Output) -> String {
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The stderr of a failed command, checked to be one `orchestrator: ...` line.
fn one_error_line(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "one line, got:\n{stderr}");
    assert!(stderr.starts_with("orchestrator: ") && !stderr.contains("panicked"), "{stderr}");
    stderr.trim_end().to_string()
}

/// The default configuration file under `home`.
fn default_file(home: &Path) -> std::path::PathBuf {
    home.join("config").join("orchestrator").join("config.toml")
}

fn write_default(home: &Path, text: &str) {
    let file = default_file(home);
    std::fs::create_dir_all(file.parent().expect("dir")).expect("config dir");
    std::fs::write(file, text).expect("config");
}

#[test]
fn a_flag_beats_the_environment_which_beats_the_file_which_beats_the_default() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    let resolved = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = vec!["serve", "--print-config"];
        all.extend_from_slice(args);
        stdout(&orchestrator(home, &all, env))
    };
    let default_dir = format!("data_dir = {}\n", home.join("data").join("orchestrator").display());
    let none = resolved(&[], &[]);
    assert!(none.contains("config = none\n") && none.contains(&default_dir), "{none}");
    assert!(none.contains("listen = 127.0.0.1:7411\n") && none.contains("public_url = none\n"), "{none}");

    write_default(
        home,
        "data_dir = \"/from/file\"\nlisten = \"127.0.0.1:7500\"\npublic_url = \"https://file.example\"\n\
         workers = [\"codex\"]\nnotify = [\"https://ntfy.sh/topic\"]\n",
    );
    let file = resolved(&[], &[]);
    for line in ["data_dir = /from/file\n", "listen = 127.0.0.1:7500\n", "public_url = https://file.example\n"] {
        assert!(file.contains(line), "{line} from the file: {file}");
    }
    assert!(file.contains("workers = [codex]\n") && file.contains("notify = [https://ntfy.sh/topic]\n"), "{file}");

    let env = resolved(&[], &[("ORCHESTRATOR_DATA_DIR", "/from/env")]);
    assert!(env.contains("data_dir = /from/env\n") && env.contains("listen = 127.0.0.1:7500\n"), "{env}");

    let flag = resolved(
        &["--data-dir", "/from/flag", "--listen", "127.0.0.1:7600"],
        &[("ORCHESTRATOR_DATA_DIR", "/from/env")],
    );
    assert!(flag.contains("data_dir = /from/flag\n") && flag.contains("listen = 127.0.0.1:7600\n"), "{flag}");

    // `--config FILE` (or ORCHESTRATOR_CONFIG) reads another file instead of the default one.
    let other = home.join("other.toml");
    std::fs::write(&other, "listen = \"127.0.0.1:7700\"\n").expect("other");
    let named = resolved(&["--config", other.to_str().expect("utf-8")], &[]);
    assert!(named.contains("listen = 127.0.0.1:7700\n") && named.contains(&default_dir), "{named}");
    let named = resolved(&[], &[("ORCHESTRATOR_CONFIG", other.to_str().expect("utf-8"))]);
    assert!(named.contains("listen = 127.0.0.1:7700\n"), "{named}");
}

#[test]
fn a_bad_file_is_one_line_naming_the_file_the_line_and_the_key_and_no_daemon_starts() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    let file = default_file(home);
    let cases = [
        ("listen = \"127.0.0.1:0\"\nlisen = \"x\"\n", "CONFIG_UNKNOWN_KEY", "line 2 key lisen"),
        ("workers = \"codex\"\n", "CONFIG_BAD_VALUE", "line 1 key workers"),
        ("# notes\nnotify = [\"ntfy.sh/topic\"]\n", "CONFIG_BAD_VALUE", "line 2 key notify"),
        ("listen = 7411\n", "CONFIG_SYNTAX", "line 1 key listen"),
    ];
    for (text, code, place) in cases {
        write_default(home, text);
        let data = home.join("never");
        let out =
            orchestrator(home, &["serve", "--data-dir", data.to_str().expect("utf-8"), "--listen", "127.0.0.1:0"], &[]);
        let line = one_error_line(&out);
        assert!(line.contains(code) && line.contains(&format!("{} {place}", file.display())), "{text:?}: {line}");
        assert!(!data.exists(), "the daemon started on a bad file: {text:?}");
    }
    let missing = home.join("missing.toml");
    let line = one_error_line(&orchestrator(home, &["serve", "--config", missing.to_str().expect("utf-8")], &[]));
    assert!(line.contains("CONFIG_UNREADABLE") && line.contains("missing.toml"), "{line}");
}

#[test]
fn setup_answered_by_flags_writes_a_private_file_serve_reads_and_prints_three_steps() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    let data = home.join("d");
    let args = [
        "setup",
        "--yes",
        "--data-dir",
        data.to_str().expect("utf-8"),
        "--workers",
        "chatgpt,codex",
        "--public-url",
        "https://orch.example.com",
        "--notify",
        "https://ntfy.sh/topic",
    ];
    let text = stdout(&orchestrator(home, &args, &[]));
    let file = default_file(home);
    assert!(text.contains(&format!("wrote {}", file.display())), "{text}");
    assert!(text.contains("+ workers = [\"chatgpt\", \"codex\"]"), "the summary: {text}");
    for step in
        ["1. Start the daemon: orchestrator service install", "orchestrator pair", "executor-cli", "--kinds codex"]
    {
        assert!(text.contains(step), "{step}: {text}");
    }
    assert!(
        text.contains("https://orch.example.com/mcp") && text.contains("3. Check everything: orchestrator doctor"),
        "{text}"
    );
    let written = std::fs::read_to_string(&file).expect("file");
    let expected = format!(
        "data_dir = \"{}\"\npublic_url = \"https://orch.example.com\"\nworkers = [\"chatgpt\", \"codex\"]\n\
         notify = [\"https://ntfy.sh/topic\"]\n",
        data.display()
    );
    assert!(written.ends_with(&expected), "{written}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{mode:o}");
    }
    let resolved = stdout(&orchestrator(home, &["serve", "--print-config"], &[]));
    assert!(resolved.contains(&format!("data_dir = {}\n", data.display())), "serve reads it: {resolved}");

    // Once written, it is not replaced without --force; with it, the changes are shown.
    let line = one_error_line(&orchestrator(home, &["setup", "--yes"], &[]));
    assert!(line.contains("SETUP_EXISTS") && line.contains("--force"), "{line}");
    assert_eq!(std::fs::read_to_string(&file).expect("file"), written, "left as it was");
    let text = stdout(&orchestrator(home, &["setup", "--yes", "--force", "--workers", "claude"], &[]));
    assert!(
        text.contains("- workers = [\"chatgpt\", \"codex\"]") && text.contains("+ workers = [\"claude\"]"),
        "{text}"
    );
    assert!(text.contains("--kinds claude") && !text.contains("orchestrator pair"), "{text}");
}

#[test]
fn setup_without_a_terminal_or_answers_says_which_flags_to_pass() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    let line = one_error_line(&orchestrator(home, &["setup", "--workers", "codex"], &[]));
    assert!(line.contains("SETUP_NO_TERMINAL"), "{line}");
    assert!(line.contains("--data-dir") && line.contains("--public-url") && line.contains("--notify"), "{line}");
    assert!(line.contains("--yes") && !line.contains("--workers"), "only what is missing: {line}");
    assert!(!default_file(home).exists(), "nothing written");
    let line = one_error_line(&orchestrator(home, &["setup", "--yes", "--notify", "ftp://x"], &[]));
    assert!(line.contains("--notify") && line.contains("not an http:// or https:// URL"), "{line}");
    let all = ["setup", "--data-dir", "/d", "--workers", "codex", "--public-url", "none", "--notify", "none"];
    let text = stdout(&orchestrator(home, &all, &[]));
    assert!(text.contains("+ workers = [\"codex\"]") && text.contains("+ notify = []"), "{text}");
}
