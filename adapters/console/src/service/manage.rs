//! The thin side of `orchestrator service`: where this user's files go ([`Context`]),
//! a [`Plan`] printed (`--dry-run`) or carried out (files written or removed, the service
//! manager's commands run), and the [`Status`] asked of `systemctl --user` or `launchctl`.
//! Everything decided here is decided by the pure functions of `mod.rs` and `unit.rs`.

use super::{Answer, LAUNCHD_LABEL, Manager, Plan, SYSTEMD_UNIT, ServiceError, Status, Step, unit};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// This user's side of the service: the manager, the home and config directories, the uid.
#[derive(Clone, Debug)]
pub struct Context {
    /// The platform's service manager.
    pub manager: Manager,
    /// `$HOME`: the unit or agent goes under it.
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME`, when set (systemd looks for user units there).
    pub config_home: Option<PathBuf>,
    /// The user's id, for launchd's `gui/UID` domain (0 where it is not needed).
    pub uid: u32,
}

impl Context {
    /// The context of the user running this command.
    pub fn here() -> Result<Context, ServiceError> {
        let manager = Manager::here().ok_or(ServiceError::Unsupported { os: std::env::consts::OS })?;
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from).ok_or(ServiceError::NoHome)?;
        let config_home = std::env::var_os("XDG_CONFIG_HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        let uid = match manager {
            Manager::Launchd => user_id().unwrap_or(0),
            Manager::Systemd => 0,
        };
        Ok(Context { manager, home, config_home, uid })
    }

    /// The unit or agent file.
    pub fn file(&self) -> PathBuf {
        self.manager.file(&self.home, self.config_home.as_deref())
    }
}

/// `id -u`: the user's id without unsafe code.
fn user_id() -> Option<u32> {
    let out = Command::new("id").arg("-u").output().ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// What `--dry-run` prints: the file with its contents, then each command.
pub fn describe(plan: &Plan) -> String {
    let mut out = String::new();
    for step in &plan.before {
        let _ = writeln!(out, "would run: {}", step.line());
    }
    for dir in &plan.dirs {
        let _ = writeln!(out, "would create: {}", dir.display());
    }
    match &plan.text {
        Some(text) => {
            let _ = writeln!(out, "would write: {}", plan.file.display());
            for line in text.lines() {
                let _ = writeln!(out, "  | {line}");
            }
        }
        None => {
            let _ = writeln!(out, "would remove: {}", plan.file.display());
        }
    }
    for step in &plan.after {
        let _ = writeln!(out, "would run: {}", step.line());
    }
    out
}

/// What running one command gave.
enum Ran {
    Ok,
    /// It ran and failed: its first line of output.
    Failed(String),
    /// It could not be started (not installed).
    Missing(String),
}

fn run(step: &Step) -> Ran {
    let Some((program, args)) = step.argv.split_first() else { return Ran::Ok };
    match Command::new(program).args(args).output() {
        Ok(out) if out.status.success() => Ran::Ok,
        Ok(out) => {
            let said = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
            let first = said.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no output").to_string();
            Ran::Failed(format!("{first} (exit status {})", out.status.code().unwrap_or(-1)))
        }
        Err(e) => Ran::Missing(format!("{program}: {e}")),
    }
}

/// The manager's name in a sentence.
fn manager_name(manager: Manager) -> &'static str {
    match manager {
        Manager::Systemd => "systemd's user manager",
        Manager::Launchd => "launchd",
    }
}

/// Carries out an install plan: the directories and the file, then the commands. The
/// first command failing means the manager is not reachable (the file stays written and
/// the error names the commands to run); a later one failing is a failed command.
pub fn install(ctx: &Context, plan: &Plan) -> Result<(), ServiceError> {
    // Only the `bootout` of an agent loaded from an older file: not loaded is fine.
    for step in &plan.before {
        let _ = run(step);
    }
    for dir in &plan.dirs {
        std::fs::create_dir_all(dir).map_err(|source| ServiceError::Io {
            action: "create",
            path: dir.clone(),
            source,
        })?;
    }
    let text = plan.text.as_deref().unwrap_or_default();
    write_file(&plan.file, text)?;
    for (i, step) in plan.after.iter().enumerate() {
        match run(step) {
            Ran::Ok => {}
            Ran::Failed(_) | Ran::Missing(_) if step.may_fail => {}
            Ran::Missing(detail) => return Err(unreachable(ctx, plan, &plan.after[i..], detail)),
            Ran::Failed(detail) if i == 0 => return Err(unreachable(ctx, plan, &plan.after[i..], detail)),
            Ran::Failed(detail) => {
                return Err(ServiceError::CommandFailed {
                    command: step.line(),
                    detail,
                    logs: ctx.manager.logs(&ctx.home),
                });
            }
        }
    }
    Ok(())
}

fn unreachable(ctx: &Context, plan: &Plan, rest: &[Step], detail: String) -> ServiceError {
    ServiceError::Unreachable {
        file: plan.file.clone(),
        manager: manager_name(ctx.manager),
        detail,
        fix: rest.iter().map(Step::line).collect::<Vec<_>>().join(" && "),
    }
}

/// The file written whole or not at all: a sibling temporary file, then a rename.
fn write_file(path: &Path, text: &str) -> Result<(), ServiceError> {
    let io = |source| ServiceError::Io { action: "write", path: path.to_path_buf(), source };
    let partial = path.with_extension("partial");
    std::fs::write(&partial, text).map_err(io)?;
    std::fs::rename(&partial, path).map_err(io)
}

/// Carries out an uninstall plan: the commands (their failures are notes: a service that
/// was not loaded, no session), the file removed. Returns the notes.
pub fn uninstall(ctx: &Context, plan: &Plan) -> Result<Vec<String>, ServiceError> {
    let mut notes = Vec::new();
    let mut note = |step: &Step, ran: Ran| match ran {
        Ran::Ok => {}
        Ran::Failed(detail) | Ran::Missing(detail) => notes.push(format!("`{}`: {detail}", step.line())),
    };
    for step in &plan.before {
        note(step, run(step));
    }
    match std::fs::remove_file(&plan.file) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => return Err(ServiceError::Io { action: "remove", path: plan.file.clone(), source }),
    }
    for step in &plan.after {
        note(step, run(step));
    }
    if !notes.is_empty() {
        notes.push(format!("{} may not have been running it", manager_name(ctx.manager)));
    }
    Ok(notes)
}

/// What the file and the manager say of the service now.
pub fn status(ctx: &Context) -> Status {
    let file = ctx.file();
    let installed = std::fs::read_to_string(&file).ok().map(|text| match ctx.manager {
        Manager::Systemd => unit::exec_start_words(&text).unwrap_or_default(),
        Manager::Launchd => unit::program_arguments(&text).unwrap_or_default(),
    });
    let manager = match ctx.manager {
        Manager::Systemd => {
            let step = Step {
                argv: ["systemctl", "--user", "show", SYSTEMD_UNIT, "-p", "UnitFileState,ActiveState,SubState"]
                    .map(String::from)
                    .to_vec(),
                may_fail: false,
            };
            match output(&step) {
                Ok(text) => super::parse_systemd_show(&text),
                Err(detail) => Answer::Unreachable(detail),
            }
        }
        Manager::Launchd => {
            let target = format!("gui/{}/{LAUNCHD_LABEL}", ctx.uid);
            let step = Step { argv: vec!["launchctl".into(), "print".into(), target], may_fail: true };
            match output(&step) {
                Ok(text) => super::parse_launchctl_print(true, &text),
                Err(_) => super::parse_launchctl_print(false, ""),
            }
        }
    };
    Status { file, installed, manager }
}

/// A command's stdout when it succeeds, else what it said.
fn output(step: &Step) -> Result<String, String> {
    let Some((program, args)) = step.argv.split_first() else { return Ok(String::new()) };
    match Command::new(program).args(args).output() {
        Ok(out) if out.status.success() => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        Ok(out) => {
            let said = String::from_utf8_lossy(&out.stderr);
            Err(said.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no output").to_string())
        }
        Err(e) => Err(format!("{program}: {e}")),
    }
}

/// Whether systemd keeps this user's services running while they are logged out
/// (`loginctl show-user USER -p Linger`); `None` when it cannot be asked.
pub fn lingers(user: &str) -> Option<bool> {
    let step = Step {
        argv: ["loginctl", "show-user", user, "-p", "Linger", "--value"].map(String::from).to_vec(),
        may_fail: true,
    };
    match output(&step).ok()?.trim() {
        "yes" => Some(true),
        "no" => Some(false),
        _ => None,
    }
}

/// `service status` for a person: the file, what it runs, what the manager says, the log.
pub fn status_text(ctx: &Context, status: &Status) -> String {
    let mut out = String::new();
    match &status.installed {
        None => {
            let _ = writeln!(out, "not installed ({} does not exist)", status.file.display());
            let _ = writeln!(out, "to install: orchestrator service install");
            return out;
        }
        Some(words) => {
            let _ = writeln!(out, "installed: {}", status.file.display());
            let _ = writeln!(out, "runs: {}", words.join(" "));
        }
    }
    match &status.manager {
        Answer::Known { enabled, state, running } => {
            let _ = writeln!(out, "enabled: {}", if *enabled { "yes (starts at login)" } else { "no" });
            let _ = writeln!(out, "state: {state}{}", if *running { " (running)" } else { " (not running)" });
        }
        Answer::Unreachable(why) => {
            let _ = writeln!(out, "state: unknown: {} is not reachable ({why})", manager_name(ctx.manager));
        }
    }
    let _ = writeln!(out, "logs: {}", ctx.manager.logs(&ctx.home));
    out
}
