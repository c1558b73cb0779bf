//! `orchestrator service install|uninstall|status` as a person runs it, each in a fresh
//! `HOME` with no way to reach a real service manager (`DBUS_SESSION_BUS_ADDRESS` and
//! `XDG_RUNTIME_DIR` point nowhere, so a developer's own user services are never touched):
//!
//! - without a user manager (a container, an SSH session without one): the unit is written
//!   and accepted by `systemd-analyze verify`, the error is one line naming the commands
//!   to run, `status`, `doctor` and `uninstall` say what they can;
//! - with a stand-in `systemctl` and `loginctl` first on `PATH` (shell scripts that record
//!   their arguments and answer as systemd does): the commands install, status, doctor and
//!   uninstall run, in order, and what they print.
//!
//! A real systemd user manager cannot run in this project's containers (PID 1 is not
//! systemd), so `enable`/`restart` against a live manager is not run here. `systemd-analyze`
//! comes from Debian's `systemd` package (`.ci/run` installs it); without it the verify step
//! prints a skip line, unless `ORCH_REAL_TOOLS=required` (set by `test.sh`) makes it fail.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{Daemon, orchestrator_bin};

/// A fresh home, a runtime directory and a stand-in bin directory.
struct Home {
    root: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let root = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(root.path().join("home")).expect("home");
        std::fs::create_dir_all(root.path().join("run")).expect("runtime dir");
        Home { root }
    }

    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    fn unit(&self) -> PathBuf {
        self.home().join(".config/systemd/user/orchestrator.service")
    }

    /// `orchestrator ARGS` in this home; `stand_ins` puts `bin/` first on `PATH`.
    fn run(&self, args: &[&str], stand_ins: bool) -> Output {
        let path = std::env::var("PATH").unwrap_or_default();
        let path = if stand_ins { format!("{}:{path}", self.root.path().join("bin").display()) } else { path };
        Command::new(orchestrator_bin())
            .args(args)
            .env("HOME", self.home())
            .env("USER", "ann")
            .env("PATH", path)
            .env("XDG_RUNTIME_DIR", self.root.path().join("run"))
            .env("DBUS_SESSION_BUS_ADDRESS", format!("unix:path={}", self.root.path().join("no-bus").display()))
            .env("STAND_IN_LOG", self.root.path().join("calls.log"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("ORCHESTRATOR_DATA_DIR")
            .env_remove("ORCHESTRATOR_MCP_TOKEN")
            .output()
            .expect("run orchestrator")
    }

    /// Stand-in `systemctl` and `loginctl`: each call appended to `calls.log`; `show`
    /// answers `show_answer`, `loginctl` says linger is off.
    fn stand_ins(&self, show_answer: &str) {
        let bin = self.root.path().join("bin");
        std::fs::create_dir_all(&bin).expect("bin");
        let systemctl = format!(
            "#!/bin/sh\necho \"systemctl $*\" >> \"$STAND_IN_LOG\"\n\
             case \"$*\" in *\" show \"*) printf '{show_answer}' ;; esac\nexit 0\n"
        );
        let loginctl = "#!/bin/sh\necho \"loginctl $*\" >> \"$STAND_IN_LOG\"\necho no\n";
        for (name, text) in [("systemctl", systemctl.as_str()), ("loginctl", loginctl)] {
            let file = bin.join(name);
            std::fs::write(&file, text).expect("stand-in");
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }

    fn calls(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.root.path().join("calls.log")).unwrap_or_default();
        text.lines().map(str::to_string).collect()
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `systemd-analyze verify --user UNIT`: no complaint at all (it exits 0 on warnings, so
/// its stderr must be empty too). `None` when the tool is missing and not required.
fn verify(home: &Home, unit: &Path) -> Option<()> {
    let out = Command::new("systemd-analyze")
        .args(["verify", "--user"])
        .arg(unit)
        .env("HOME", home.home())
        .env("XDG_RUNTIME_DIR", home.root.path().join("run"))
        .output();
    match out {
        Ok(out) => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success() && stderr.trim().is_empty(), "systemd-analyze verify: {stderr}");
            Some(())
        }
        Err(e) if std::env::var("ORCH_REAL_TOOLS").as_deref() == Ok("required") => {
            panic!("ORCH_REAL_TOOLS=required but systemd-analyze cannot run ({e}): apt-get install systemd")
        }
        Err(e) => {
            eprintln!("service: systemd-analyze verify skipped: {e} (Debian's systemd package has it)");
            None
        }
    }
}

#[test]
fn without_a_user_manager_the_unit_is_written_and_the_one_command_to_run_is_said() {
    let home = Home::new();
    // A data directory systemd's quoting must survive: a space, a specifier, a variable.
    let data = home.root.path().join("my data 100% $HOME");
    let data_arg = data.to_str().expect("utf-8");

    let out = home.run(&["service", "install", "--data-dir", data_arg], false);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("orchestrator: SERVICE_MANAGER_UNREACHABLE: wrote "), "{stderr}");
    assert!(
        stderr.contains(
            "run: systemctl --user daemon-reload && systemctl --user enable orchestrator.service && \
             systemctl --user restart orchestrator.service"
        ),
        "{stderr}"
    );

    let unit = std::fs::read_to_string(home.unit()).expect("the unit is written");
    let binary = orchestrator_bin().canonicalize().expect("binary");
    assert!(unit.contains(&format!("ExecStart=\"{}\" \"serve\" \"--data-dir\"", binary.display())), "{unit}");
    assert!(unit.contains("100%% $$HOME"), "{unit}");
    assert!(unit.contains("Restart=on-failure") && unit.contains("WantedBy=default.target"), "{unit}");
    for token in ["mcp-token", "executor-token"] {
        let secret = std::fs::read_to_string(data.join(token)).expect("token written before the first start");
        assert!(!unit.contains(secret.trim()), "no secret in the unit");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.join(token)).expect("token").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{token}");
    }
    verify(&home, &home.unit());

    let status = stdout(&home.run(&["service", "status"], false));
    assert!(status.contains(&format!("installed: {}", home.unit().display())), "{status}");
    assert!(status.contains(&format!("runs: {} serve --data-dir {data_arg}", binary.display())), "{status}");
    assert!(status.contains("state: unknown: systemd's user manager is not reachable"), "{status}");

    let doctor = stdout(&home.run(&["doctor", "--data-dir", data_arg], false));
    assert!(doctor.contains("skip  service: installed ("), "{doctor}");

    let out = home.run(&["service", "uninstall"], false);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(stdout(&out).contains("the user service is removed"), "{}", stdout(&out));
    assert!(!home.unit().exists(), "the unit is gone");
    assert!(data.join("mcp-token").exists(), "the data directory stays");
    let status = stdout(&home.run(&["service", "status"], false));
    assert!(status.starts_with("not installed") && status.contains("orchestrator service install"), "{status}");
}

#[test]
fn with_systemctl_install_enables_and_restarts_and_doctor_reads_a_failed_unit() {
    let home = Home::new();
    home.stand_ins("UnitFileState=enabled\\nActiveState=failed\\nSubState=failed\\n");
    let data = home.root.path().join("data");
    let data_arg = data.to_str().expect("utf-8");

    let out = home.run(&["service", "install", "--data-dir", data_arg, "--listen", "127.0.0.1:7499"], true);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let said = stdout(&out);
    assert!(said.contains("installed and started the user service"), "{said}");
    assert!(said.contains("logs: journalctl --user -u orchestrator"), "{said}");
    assert!(said.contains("loginctl enable-linger ann"), "linger is off, so the advice: {said}");
    let systemctl: Vec<String> = home.calls().into_iter().filter(|c| c.starts_with("systemctl")).collect();
    assert_eq!(
        systemctl,
        [
            "systemctl --user show orchestrator.service -p UnitFileState,ActiveState,SubState",
            "systemctl --user daemon-reload",
            "systemctl --user enable orchestrator.service",
            "systemctl --user restart orchestrator.service"
        ]
    );
    let unit = std::fs::read_to_string(home.unit()).expect("unit");
    assert!(unit.contains("\"--listen\" \"127.0.0.1:7499\""), "{unit}");
    verify(&home, &home.unit());

    let status = stdout(&home.run(&["service", "status"], true));
    assert!(status.contains("enabled: yes") && status.contains("state: failed (not running)"), "{status}");

    let doctor = home.run(&["doctor", "--data-dir", data_arg], true);
    let report = stdout(&doctor);
    assert_eq!(doctor.status.code(), Some(1), "{report}");
    let fail = report.lines().position(|l| l.starts_with("  FAIL  service: installed")).expect(&report);
    let fix = report.lines().nth(fail + 1).unwrap_or_default();
    assert!(fix.contains("read why: journalctl --user -u orchestrator"), "{report}");

    let before = home.calls().len();
    let out = home.run(&["service", "uninstall"], true);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(stdout(&out).contains("stopped, disabled and removed"), "{}", stdout(&out));
    assert_eq!(
        home.calls()[before..],
        ["systemctl --user disable --now orchestrator.service", "systemctl --user daemon-reload"]
    );
    assert!(!home.unit().exists());
}

#[test]
fn dry_run_prints_the_unit_and_the_commands_and_changes_nothing() {
    let home = Home::new();
    home.stand_ins("");
    let out = home.run(&["service", "install", "--dry-run"], true);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let said = stdout(&out);
    assert!(said.contains(&format!("would write: {}", home.unit().display())), "{said}");
    assert!(said.contains("  | Restart=on-failure"), "{said}");
    assert!(said.contains("would run: systemctl --user enable orchestrator.service"), "{said}");
    let default_data = home.home().join(".local/share/orchestrator");
    assert!(said.contains(&format!("\"--data-dir\" \"{}\"", default_data.display())), "the default: {said}");
    assert!(!home.unit().exists() && !default_data.exists(), "nothing written");
    assert!(home.calls().iter().all(|c| !c.starts_with("systemctl")), "nothing run: {:?}", home.calls());

    let out = home.run(&["service", "uninstall", "--dry-run"], true);
    assert!(stdout(&out).contains("would run: systemctl --user disable --now orchestrator.service"), "{out:?}");
    assert!(home.calls().iter().all(|c| !c.starts_with("systemctl")), "nothing run: {:?}", home.calls());
}

#[test]
fn a_daemon_started_by_hand_on_the_data_directory_is_named_before_anything_is_written() {
    let home = Home::new();
    home.stand_ins("UnitFileState=\\nActiveState=inactive\\nSubState=dead\\n");
    let data = home.root.path().join("data");
    let _by_hand = Daemon::serve(&data, &[]);
    let out = home.run(&["service", "install", "--data-dir", data.to_str().expect("utf-8")], true);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("orchestrator: SERVICE_DATA_DIR_IN_USE: another orchestrator holds "), "{stderr}");
    assert!(stderr.contains("stop it first"), "{stderr}");
    assert!(!home.unit().exists(), "nothing written");
    assert!(home.calls().iter().all(|c| !c.contains("enable")), "nothing enabled: {:?}", home.calls());
}
