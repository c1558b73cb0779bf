//! `orchestrator service install|uninstall|status`: the daemon as a user service that
//! starts at login, restarts on failure and logs where the platform's log reader finds it.
//! Linux: a systemd user unit, `~/.config/systemd/user/orchestrator.service`, driven with
//! `systemctl --user`. macOS: a launchd agent, `~/Library/LaunchAgents/orchestrator.plist`,
//! driven with `launchctl`.
//!
//! What to write and run is a [`Plan`], built by pure functions ([`install_plan`],
//! [`uninstall_plan`]; the texts in `unit.rs`); `manage.rs` carries a plan out (or prints
//! it for `--dry-run`) and asks the service manager for the [`Status`], which `doctor`
//! reads too. Errors are [`ServiceError`]s with stable codes, each saying what to do.

pub mod manage;
pub mod unit;

use std::path::{Path, PathBuf};

/// The systemd unit's name (`journalctl --user -u orchestrator` finds its logs).
pub const SYSTEMD_UNIT: &str = "orchestrator.service";
/// The launchd agent's label, and its property list's file name without `.plist`.
pub const LAUNCHD_LABEL: &str = "orchestrator";
/// Seconds between a failed exit and the next start (systemd `RestartSec`, launchd
/// `ThrottleInterval`).
pub const RESTART_SEC: u32 = 5;
/// The window, in seconds, over which systemd counts starts ([`STARTS_IN_INTERVAL_MAX`]).
pub const START_INTERVAL_SEC: u32 = 300;
/// Starts within [`START_INTERVAL_SEC`] after which systemd gives up and marks the unit
/// failed: a daemon that cannot start (a locked store, a port in use) stops looping and
/// `doctor` shows it with the command that reads its log.
pub const STARTS_IN_INTERVAL_MAX: u32 = 5;

/// What the service runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// The absolute path of the `orchestrator` binary the service starts.
    pub binary: PathBuf,
    /// The absolute data directory passed as `--data-dir`.
    pub data_dir: PathBuf,
    /// `--listen`, when the person gave one (else the daemon's default).
    pub listen: Option<String>,
}

/// Which service manager this platform has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Manager {
    /// systemd's per-user manager (Linux).
    Systemd,
    /// launchd's per-user agents (macOS).
    Launchd,
}

impl Manager {
    /// This platform's manager, or `None` where neither is supported.
    pub fn here() -> Option<Manager> {
        if cfg!(target_os = "macos") {
            Some(Manager::Launchd)
        } else if cfg!(target_os = "linux") {
            Some(Manager::Systemd)
        } else {
            None
        }
    }

    /// Where the unit or agent file goes under a home directory (`config_home` is
    /// `$XDG_CONFIG_HOME` when set, systemd's own rule).
    pub fn file(self, home: &Path, config_home: Option<&Path>) -> PathBuf {
        match self {
            Manager::Systemd => config_home
                .map_or_else(|| home.join(".config"), Path::to_path_buf)
                .join("systemd/user")
                .join(SYSTEMD_UNIT),
            Manager::Launchd => home.join("Library/LaunchAgents").join(format!("{LAUNCHD_LABEL}.plist")),
        }
    }

    /// Where a person reads the daemon's log.
    pub fn logs(self, home: &Path) -> String {
        match self {
            Manager::Systemd => "journalctl --user -u orchestrator".to_string(),
            Manager::Launchd => format!("{} (Console: Log Reports)", launchd_log_file(home).display()),
        }
    }
}

/// The launchd agent's log file (stdout and stderr), under `~/Library/Logs/orchestrator/`.
pub fn launchd_log_file(home: &Path) -> PathBuf {
    home.join("Library/Logs/orchestrator/orchestrator.log")
}

/// What a command will write and run, in order; printed as it is by `--dry-run`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The unit or agent file.
    pub file: PathBuf,
    /// Its contents (`None`: the file is removed).
    pub text: Option<String>,
    /// Directories to create before the file is written (the launchd log directory).
    pub dirs: Vec<PathBuf>,
    /// The service manager's commands before the file is written or removed.
    pub before: Vec<Step>,
    /// The service manager's commands after it.
    pub after: Vec<Step>,
}

/// One service manager command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// Its failure is expected and harmless (stopping a service that is not loaded).
    pub may_fail: bool,
}

impl Step {
    fn new(argv: &[&str], may_fail: bool) -> Step {
        Step { argv: argv.iter().map(|s| s.to_string()).collect(), may_fail }
    }

    /// The command line as a person types it.
    pub fn line(&self) -> String {
        self.argv.join(" ")
    }
}

/// The plan of `service install` for `spec` on `manager`, in `home`; `uid` is the user's
/// id (launchd's `gui/UID` domain).
pub fn install_plan(
    manager: Manager,
    spec: &Spec,
    home: &Path,
    config_home: Option<&Path>,
    uid: u32,
) -> Result<Plan, ServiceError> {
    let file = manager.file(home, config_home);
    let parent = file.parent().map(Path::to_path_buf).unwrap_or_default();
    match manager {
        Manager::Systemd => Ok(Plan {
            text: Some(unit::systemd_unit(spec)?),
            dirs: vec![parent],
            file,
            before: Vec::new(),
            after: vec![
                Step::new(&["systemctl", "--user", "daemon-reload"], false),
                Step::new(&["systemctl", "--user", "enable", SYSTEMD_UNIT], false),
                // `restart`, not `start`: a reinstall with another binary or data directory
                // takes effect now.
                Step::new(&["systemctl", "--user", "restart", SYSTEMD_UNIT], false),
            ],
        }),
        Manager::Launchd => {
            let log = launchd_log_file(home);
            let text = unit::launchd_plist(spec, &log)?;
            let domain = format!("gui/{uid}");
            let target = format!("{domain}/{LAUNCHD_LABEL}");
            let path = file.display().to_string();
            Ok(Plan {
                text: Some(text),
                dirs: vec![parent, log.parent().map(Path::to_path_buf).unwrap_or_default()],
                // An agent loaded from an older file is booted out first (not loaded: fine).
                before: vec![Step::new(&["launchctl", "bootout", &target], true)],
                after: vec![
                    Step::new(&["launchctl", "enable", &target], false),
                    Step::new(&["launchctl", "bootstrap", &domain, &path], false),
                ],
                file,
            })
        }
    }
}

/// The plan of `service uninstall`: stop and disable, remove the file, forget it. Every
/// command may fail (a service that was never loaded, no session): the file goes anyway.
pub fn uninstall_plan(manager: Manager, home: &Path, config_home: Option<&Path>, uid: u32) -> Plan {
    let file = manager.file(home, config_home);
    let (before, after) = match manager {
        Manager::Systemd => (
            vec![Step::new(&["systemctl", "--user", "disable", "--now", SYSTEMD_UNIT], true)],
            vec![Step::new(&["systemctl", "--user", "daemon-reload"], true)],
        ),
        Manager::Launchd => {
            (vec![Step::new(&["launchctl", "bootout", &format!("gui/{uid}/{LAUNCHD_LABEL}")], true)], Vec::new())
        }
    };
    Plan { file, text: None, dirs: Vec::new(), before, after }
}

/// What the service manager says of the service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// The unit or agent file.
    pub file: PathBuf,
    /// The file's `ExecStart`/`ProgramArguments` words, when it exists.
    pub installed: Option<Vec<String>>,
    /// What the manager said, or why it could not be asked.
    pub manager: Answer,
}

/// The service manager's answer about the service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// It answered.
    Known {
        /// Starts at login (systemd `enabled`; launchd: loaded and not disabled).
        enabled: bool,
        /// Its state word: `active`, `inactive`, `failed`, `activating` (systemd) or
        /// `running`, `not running` (launchd).
        state: String,
        /// True when the daemon process runs now.
        running: bool,
    },
    /// The manager could not be asked (no user session, no bus): why.
    Unreachable(String),
}

/// The systemd answer from `systemctl --user show orchestrator.service -p
/// UnitFileState,ActiveState,SubState` (`Key=Value` lines).
pub fn parse_systemd_show(text: &str) -> Answer {
    let value = |key: &str| {
        text.lines().find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix('='))).unwrap_or("").trim()
    };
    let active = value("ActiveState");
    Answer::Known {
        enabled: matches!(value("UnitFileState"), "enabled" | "enabled-runtime" | "linked" | "alias"),
        state: if active.is_empty() { "unknown".to_string() } else { active.to_string() },
        running: matches!(active, "active" | "reloading" | "deactivating"),
    }
}

/// The launchd answer from `launchctl print gui/UID/orchestrator` (exit status 0: loaded);
/// `state = running` and `pid = N` while the daemon runs.
pub fn parse_launchctl_print(loaded: bool, text: &str) -> Answer {
    if !loaded {
        return Answer::Known { enabled: false, state: "not loaded".to_string(), running: false };
    }
    let state =
        text.lines().find_map(|l| l.trim().strip_prefix("state = ")).map(str::trim).unwrap_or("unknown").to_string();
    Answer::Known { enabled: true, running: state == "running", state }
}

/// Why a service command failed; each says what to do, and has a stable code.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// Neither systemd nor launchd: nothing to install into.
    #[error(
        "SERVICE_UNSUPPORTED: user services are supported on Linux (systemd) and macOS (launchd), not {os}; run `orchestrator serve` under your own supervisor"
    )]
    Unsupported {
        /// This platform.
        os: &'static str,
    },
    /// No home directory to put the unit under.
    #[error("SERVICE_NO_HOME: HOME is not set; set it to your home directory and run the command again")]
    NoHome,
    /// A path the service would run with cannot go into a unit (not UTF-8, a control character).
    #[error(
        "SERVICE_BAD_PATH: {path:?} cannot go into a service definition (not UTF-8 or a control character in it); use a plain path (--data-dir)"
    )]
    BadPath {
        /// The path, as far as it prints.
        path: String,
    },
    /// A file or directory could not be written or removed.
    #[error("SERVICE_IO: cannot {action} {}: {source}; check its permissions", path.display())]
    Io {
        /// What was being done ("write", "remove", "create").
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The service manager is not reachable (no user session, no D-Bus): the file is
    /// written, the commands were not run.
    #[error("SERVICE_MANAGER_UNREACHABLE: wrote {}, but {manager} is not reachable here ({detail}); in a login session run: {fix}", file.display())]
    Unreachable {
        /// The unit or agent file, written.
        file: PathBuf,
        /// Which manager ("systemd's user manager", "launchd").
        manager: &'static str,
        /// What the manager's command said.
        detail: String,
        /// The command line to run once it is reachable.
        fix: String,
    },
    /// A manager command failed.
    #[error("SERVICE_COMMAND_FAILED: `{command}` failed: {detail}; the log: {logs}")]
    CommandFailed {
        /// The command line.
        command: String,
        /// What it said.
        detail: String,
        /// Where the daemon's log is read.
        logs: String,
    },
}

impl ServiceError {
    /// The stable code, as the message starts with it.
    pub fn code(&self) -> &'static str {
        match self {
            ServiceError::Unsupported { .. } => "SERVICE_UNSUPPORTED",
            ServiceError::NoHome => "SERVICE_NO_HOME",
            ServiceError::BadPath { .. } => "SERVICE_BAD_PATH",
            ServiceError::Io { .. } => "SERVICE_IO",
            ServiceError::Unreachable { .. } => "SERVICE_MANAGER_UNREACHABLE",
            ServiceError::CommandFailed { .. } => "SERVICE_COMMAND_FAILED",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        Spec { binary: "/usr/local/bin/orchestrator".into(), data_dir: "/home/ann/data".into(), listen: None }
    }

    #[test]
    fn the_unit_goes_where_systemd_looks_for_user_units() {
        let home = Path::new("/home/ann");
        assert_eq!(Manager::Systemd.file(home, None), Path::new("/home/ann/.config/systemd/user/orchestrator.service"));
        assert_eq!(
            Manager::Systemd.file(home, Some(Path::new("/cfg"))),
            Path::new("/cfg/systemd/user/orchestrator.service")
        );
        assert_eq!(Manager::Launchd.file(home, None), Path::new("/home/ann/Library/LaunchAgents/orchestrator.plist"));
        assert_eq!(Manager::Systemd.logs(home), "journalctl --user -u orchestrator");
    }

    #[test]
    fn install_reloads_enables_and_starts_and_uninstall_undoes_it() {
        let plan = install_plan(Manager::Systemd, &spec(), Path::new("/h"), None, 501).expect("plan");
        let commands: Vec<String> = plan.after.iter().map(Step::line).collect();
        assert!(plan.before.is_empty());
        assert_eq!(
            commands,
            [
                "systemctl --user daemon-reload",
                "systemctl --user enable orchestrator.service",
                "systemctl --user restart orchestrator.service"
            ]
        );
        let plan = uninstall_plan(Manager::Systemd, Path::new("/h"), None, 501);
        assert_eq!(plan.before[0].line(), "systemctl --user disable --now orchestrator.service");
        assert_eq!(plan.after[0].line(), "systemctl --user daemon-reload");
        assert_eq!(plan.text, None);
    }

    #[test]
    fn launchd_boots_the_agent_into_the_user_s_gui_domain() {
        let plan = install_plan(Manager::Launchd, &spec(), Path::new("/Users/ann"), None, 501).expect("plan");
        let commands: Vec<String> = plan.before.iter().chain(&plan.after).map(Step::line).collect();
        assert_eq!(
            commands,
            [
                "launchctl bootout gui/501/orchestrator",
                "launchctl enable gui/501/orchestrator",
                "launchctl bootstrap gui/501 /Users/ann/Library/LaunchAgents/orchestrator.plist"
            ]
        );
        assert!(plan.before[0].may_fail, "booting out an agent that was not loaded is fine");
        assert!(plan.dirs.contains(&PathBuf::from("/Users/ann/Library/Logs/orchestrator")));
        let plan = uninstall_plan(Manager::Launchd, Path::new("/Users/ann"), None, 501);
        assert_eq!(plan.before[0].line(), "launchctl bootout gui/501/orchestrator");
    }

    #[test]
    fn systemctl_s_answer_is_read() {
        let up = parse_systemd_show("UnitFileState=enabled\nActiveState=active\nSubState=running\n");
        assert_eq!(up, Answer::Known { enabled: true, state: "active".into(), running: true });
        let down = parse_systemd_show("UnitFileState=disabled\nActiveState=failed\nSubState=failed\n");
        assert_eq!(down, Answer::Known { enabled: false, state: "failed".into(), running: false });
    }

    #[test]
    fn launchctl_s_answer_is_read() {
        let text = "gui/501/orchestrator = {\n\tactive count = 1\n\tstate = running\n\tpid = 812\n}\n";
        assert_eq!(
            parse_launchctl_print(true, text),
            Answer::Known { enabled: true, state: "running".into(), running: true }
        );
        assert_eq!(
            parse_launchctl_print(false, ""),
            Answer::Known { enabled: false, state: "not loaded".into(), running: false }
        );
    }
}
