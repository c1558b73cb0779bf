//! The texts `orchestrator service install` writes, as pure functions of a [`Spec`]: the
//! systemd user unit (Linux) and the launchd agent's property list (macOS), with the
//! quoting each format needs. Nothing here touches a file or runs a program, so every
//! line is unit-tested here and the unit is checked by `systemd-analyze verify` in
//! `adapters/orchestrator/tests/service.rs`.

use super::{LAUNCHD_LABEL, RESTART_SEC, START_INTERVAL_SEC, STARTS_IN_INTERVAL_MAX, ServiceError, Spec};
use std::fmt::Write;
use std::path::Path;

/// The daemon's command line in the service: the binary, `serve`, the data directory and
/// the listen address when one was given (the token files stay in the data directory: no
/// secret is ever written into a unit or a property list).
pub fn arguments(spec: &Spec) -> Result<Vec<String>, ServiceError> {
    let mut args = vec![text(&spec.binary)?, "serve".to_string(), "--data-dir".to_string(), text(&spec.data_dir)?];
    if let Some(listen) = &spec.listen {
        args.push("--listen".to_string());
        args.push(listen.clone());
    }
    if let Some(bad) = args.iter().find(|a| a.chars().any(char::is_control)) {
        return Err(ServiceError::BadPath { path: bad.clone() });
    }
    Ok(args)
}

/// A path as UTF-8 text, or the error naming it.
fn text(path: &Path) -> Result<String, ServiceError> {
    path.to_str().map(str::to_string).ok_or_else(|| ServiceError::BadPath { path: path.display().to_string() })
}

/// The systemd user unit `orchestrator.service`: restarted on failure (and given up after
/// [`STARTS_IN_INTERVAL_MAX`] starts within [`START_INTERVAL_SEC`], so a daemon that
/// cannot start shows as failed instead of looping), logs to the journal (stdout and
/// stderr), wanted by `default.target` so `enable` starts it with the user's manager.
pub fn systemd_unit(spec: &Spec) -> Result<String, ServiceError> {
    let exec = arguments(spec)?.iter().map(|a| systemd_quote(a)).collect::<Vec<_>>().join(" ");
    let mut unit = String::new();
    let _ = writeln!(unit, "# Written by `orchestrator service install`; `orchestrator service uninstall` removes it.");
    let _ = writeln!(unit, "# Logs: journalctl --user -u orchestrator. No secret is kept here: the tokens stay in");
    let _ = writeln!(unit, "# the data directory (mcp-token, executor-token).");
    let _ = writeln!(unit, "[Unit]");
    let _ = writeln!(unit, "Description=orchestrator daemon: keeps AI workers going until their job is done");
    let _ = writeln!(unit, "StartLimitIntervalSec={START_INTERVAL_SEC}");
    let _ = writeln!(unit, "StartLimitBurst={STARTS_IN_INTERVAL_MAX}");
    let _ = writeln!(unit);
    let _ = writeln!(unit, "[Service]");
    let _ = writeln!(unit, "Type=simple");
    let _ = writeln!(unit, "ExecStart={exec}");
    let _ = writeln!(unit, "Restart=on-failure");
    let _ = writeln!(unit, "RestartSec={RESTART_SEC}");
    // The daemon drains on SIGTERM (its graceful shutdown) well within this.
    let _ = writeln!(unit, "TimeoutStopSec=30");
    let _ = writeln!(unit, "UMask=0077");
    let _ = writeln!(unit);
    let _ = writeln!(unit, "[Install]");
    let _ = writeln!(unit, "WantedBy=default.target");
    Ok(unit)
}

/// One `ExecStart=` word: double-quoted, with `\` and `"` escaped for systemd's parser,
/// `%` doubled (specifiers) and `$` doubled (variable expansion).
pub fn systemd_quote(word: &str) -> String {
    let mut out = String::with_capacity(word.len() + 2);
    out.push('"');
    for c in word.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '%' => out.push_str("%%"),
            '$' => out.push_str("$$"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The launchd agent `~/Library/LaunchAgents/orchestrator.plist`: started at load,
/// started again after a failed exit (`KeepAlive` `SuccessfulExit` false) no more often
/// than every [`RESTART_SEC`] seconds, stdout and stderr appended to `log_file` (under
/// `~/Library/Logs/orchestrator/`, where Console finds it).
pub fn launchd_plist(spec: &Spec, log_file: &Path) -> Result<String, ServiceError> {
    let args = arguments(spec)?;
    let log = xml_escape(&text(log_file)?);
    let mut plist = String::new();
    let _ = writeln!(plist, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        plist,
        r#"<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">"#
    );
    let _ = writeln!(
        plist,
        "<!-- Written by `orchestrator service install`; `orchestrator service uninstall` removes it. -->"
    );
    let _ = writeln!(plist, r#"<plist version="1.0">"#);
    let _ = writeln!(plist, "<dict>");
    let _ = writeln!(plist, "  <key>Label</key>\n  <string>{LAUNCHD_LABEL}</string>");
    let _ = writeln!(plist, "  <key>ProgramArguments</key>\n  <array>");
    for arg in &args {
        let _ = writeln!(plist, "    <string>{}</string>", xml_escape(arg));
    }
    let _ = writeln!(plist, "  </array>");
    let _ = writeln!(plist, "  <key>RunAtLoad</key>\n  <true/>");
    let _ = writeln!(plist, "  <key>KeepAlive</key>\n  <dict>\n    <key>SuccessfulExit</key>\n    <false/>\n  </dict>");
    let _ = writeln!(plist, "  <key>ThrottleInterval</key>\n  <integer>{RESTART_SEC}</integer>");
    let _ = writeln!(plist, "  <key>ProcessType</key>\n  <string>Background</string>");
    let _ = writeln!(plist, "  <key>Umask</key>\n  <integer>63</integer>");
    let _ = writeln!(plist, "  <key>StandardOutPath</key>\n  <string>{log}</string>");
    let _ = writeln!(plist, "  <key>StandardErrorPath</key>\n  <string>{log}</string>");
    let _ = writeln!(plist, "</dict>");
    let _ = writeln!(plist, "</plist>");
    Ok(plist)
}

/// Text for an XML element: the five predefined entities.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// The `ExecStart=` words of a unit this command wrote, unquoted (for `doctor` and
/// `status`: which binary and data directory the installed service runs); `None` when the
/// unit has no such line.
pub fn exec_start_words(unit: &str) -> Option<Vec<String>> {
    let line = unit.lines().find_map(|l| l.strip_prefix("ExecStart="))?;
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                let mut word = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        '%' | '$' if chars.peek() == Some(&c) => {
                            chars.next();
                            word.push(c);
                        }
                        c => word.push(c),
                    }
                }
                words.push(word);
            }
            c if c.is_whitespace() => {}
            c => {
                let mut word = String::from(c);
                while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                    word.push(c);
                }
                words.push(word);
            }
        }
    }
    Some(words)
}

/// The `ProgramArguments` strings of a property list this command wrote, unescaped;
/// `None` when it has none.
pub fn program_arguments(plist: &str) -> Option<Vec<String>> {
    let after_key = plist.split("<key>ProgramArguments</key>").nth(1)?;
    let array = after_key.split("<array>").nth(1)?.split("</array>").next()?;
    let words = array
        .split("<string>")
        .skip(1)
        .filter_map(|s| s.split("</string>").next())
        .map(|s| {
            s.replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&apos;", "'")
                .replace("&amp;", "&")
        })
        .collect();
    Some(words)
}

/// The data directory a service command line serves (`--data-dir`'s value).
pub fn data_dir_of(words: &[String]) -> Option<&str> {
    words.iter().position(|w| w == "--data-dir").and_then(|i| words.get(i + 1)).map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn spec() -> Spec {
        Spec {
            binary: PathBuf::from("/home/ann/.cargo/bin/orchestrator"),
            data_dir: PathBuf::from("/home/ann/.local/share/orchestrator"),
            listen: None,
        }
    }

    #[test]
    fn the_unit_runs_this_binary_s_serve_on_the_data_directory_and_restarts_on_failure() {
        let unit = systemd_unit(&spec()).expect("unit");
        let line =
            |start: &str| unit.lines().find(|l| l.starts_with(start)).unwrap_or_else(|| panic!("{start}: {unit}"));
        assert_eq!(
            line("ExecStart="),
            r#"ExecStart="/home/ann/.cargo/bin/orchestrator" "serve" "--data-dir" "/home/ann/.local/share/orchestrator""#
        );
        assert_eq!(line("Restart="), "Restart=on-failure");
        assert_eq!(line("RestartSec="), format!("RestartSec={RESTART_SEC}"));
        assert_eq!(line("WantedBy="), "WantedBy=default.target");
        assert_eq!(line("StartLimitBurst="), format!("StartLimitBurst={STARTS_IN_INTERVAL_MAX}"));
        assert!(!unit.contains("Environment"), "no environment, so no secret: {unit}");
        let sections: Vec<&str> = unit.lines().filter(|l| l.starts_with('[')).collect();
        assert_eq!(sections, ["[Unit]", "[Service]", "[Install]"]);
    }

    #[test]
    fn a_listen_address_is_passed_on() {
        let mut spec = spec();
        spec.listen = Some("127.0.0.1:7500".into());
        let words = arguments(&spec).expect("arguments");
        assert_eq!(&words[4..], ["--listen", "127.0.0.1:7500"]);
    }

    #[test]
    fn odd_paths_are_quoted_and_read_back_the_same() {
        let mut spec = spec();
        spec.binary = PathBuf::from("/opt/my tools/100%/$bin/\"orch\"\\x/orchestrator");
        let unit = systemd_unit(&spec).expect("unit");
        assert!(unit.contains(r#""/opt/my tools/100%%/$$bin/\"orch\"\\x/orchestrator""#), "{unit}");
        let words = exec_start_words(&unit).expect("ExecStart");
        assert_eq!(words[0], spec.binary.to_str().expect("utf-8"));
        assert_eq!(data_dir_of(&words), Some("/home/ann/.local/share/orchestrator"));
    }

    #[test]
    fn a_newline_in_a_path_is_refused() {
        let mut spec = spec();
        spec.data_dir = PathBuf::from("/tmp/a\nExecStartPre=/bin/evil");
        let err = systemd_unit(&spec).expect_err("refused");
        assert_eq!(err.code(), "SERVICE_BAD_PATH");
        assert!(launchd_plist(&spec, Path::new("/l")).is_err());
    }

    #[test]
    fn the_agent_keeps_alive_after_a_failure_and_logs_where_console_finds_it() {
        let mut spec = spec();
        spec.data_dir = PathBuf::from("/Users/ann/data & <more>");
        let plist =
            launchd_plist(&spec, Path::new("/Users/ann/Library/Logs/orchestrator/orchestrator.log")).expect("plist");
        assert!(plist.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist"), "{plist}");
        assert!(plist.contains("<key>Label</key>\n  <string>orchestrator</string>"), "{plist}");
        assert!(
            plist.contains("<key>KeepAlive</key>\n  <dict>\n    <key>SuccessfulExit</key>\n    <false/>\n  </dict>"),
            "{plist}"
        );
        assert!(plist.contains("<key>RunAtLoad</key>\n  <true/>"), "{plist}");
        assert!(plist.contains("<string>/Users/ann/data &amp; &lt;more&gt;</string>"), "{plist}");
        for key in ["StandardOutPath", "StandardErrorPath"] {
            assert!(
                plist.contains(&format!(
                    "<key>{key}</key>\n  <string>/Users/ann/Library/Logs/orchestrator/orchestrator.log</string>"
                )),
                "{key}: {plist}"
            );
        }
        let args = plist.split("<array>").nth(1).and_then(|s| s.split("</array>").next()).expect("array");
        assert_eq!(args.matches("<string>").count(), 4, "binary, serve, --data-dir, DIR: {args}");
        assert_eq!(plist.matches("<dict>").count(), plist.matches("</dict>").count());
        let words = program_arguments(&plist).expect("ProgramArguments");
        assert_eq!(data_dir_of(&words), Some("/Users/ann/data & <more>"), "read back unescaped");
        python_reads_the_plist_as_meant(&plist);
    }

    /// launchd cannot run here, so an independent reader checks the property list: Python's
    /// `plistlib` (skipped with a line where `python3` is missing).
    fn python_reads_the_plist_as_meant(plist: &str) {
        use std::io::Write as _;
        use std::process::{Command, Stdio};
        let script = "import plistlib, sys, json; print(json.dumps(plistlib.loads(sys.stdin.buffer.read())))";
        let child = Command::new("python3").args(["-c", script]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn();
        let Ok(mut child) = child else {
            eprintln!("plist: python3 not found, plistlib check skipped");
            return;
        };
        child.stdin.take().expect("stdin").write_all(plist.as_bytes()).expect("write plist");
        let out = child.wait_with_output().expect("python3");
        assert!(out.status.success(), "plistlib refused it: {}", String::from_utf8_lossy(&out.stderr));
        let read: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(read["Label"], "orchestrator");
        assert_eq!(read["ProgramArguments"][3], "/Users/ann/data & <more>");
        assert_eq!(read["KeepAlive"]["SuccessfulExit"], false);
        assert_eq!(read["RunAtLoad"], true);
        assert_eq!(read["ThrottleInterval"], RESTART_SEC);
        assert_eq!(read["StandardErrorPath"], "/Users/ann/Library/Logs/orchestrator/orchestrator.log");
    }
}
