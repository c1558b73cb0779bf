//! The service check of `doctor`: is the daemon installed as a user service
//! (`orchestrator service install`), enabled, running; a hint when it is not installed,
//! the command that reads its log when it is installed but not running.

use super::{Check, Verdict, fail};
use crate::service::manage::{self, Context};
use crate::service::{Answer, Manager, Status, unit};
use std::path::Path;

/// The check, asking this user's service manager.
pub(super) fn check_service(dir: &Path) -> Check {
    match Context::here() {
        Ok(ctx) => verdict(&ctx, &manage::status(&ctx), dir),
        Err(e) => Check { name: NAME, verdict: Verdict::Skip(e.to_string()) },
    }
}

const NAME: &str = "service";

/// The verdict on what the file and the manager said (pure, for the tests below).
fn verdict(ctx: &Context, status: &Status, dir: &Path) -> Check {
    let skip = |why: String| Check { name: NAME, verdict: Verdict::Skip(why) };
    let Some(words) = &status.installed else {
        return skip(
            "not installed as a user service: to keep the daemon running after this terminal closes and start it at \
             login, run `orchestrator service install`"
                .into(),
        );
    };
    if let Some(served) = unit::data_dir_of(words).filter(|served| Path::new(served) != dir) {
        return skip(format!(
            "the installed service ({}) serves {served}, not this data directory",
            status.file.display()
        ));
    }
    if let Some(binary) = words.first().filter(|b| !Path::new(b).exists()) {
        return fail(
            NAME,
            format!("the service ({}) runs {binary}, which does not exist any more", status.file.display()),
            "install it again from the binary you use now: orchestrator service install",
        );
    }
    let logs = ctx.manager.logs(&ctx.home);
    let (start, enable) = match ctx.manager {
        Manager::Systemd => (
            "systemctl --user restart orchestrator.service".to_string(),
            "systemctl --user enable orchestrator.service".to_string(),
        ),
        Manager::Launchd => {
            (format!("launchctl kickstart gui/{}/orchestrator", ctx.uid), "orchestrator service install".to_string())
        }
    };
    match &status.manager {
        Answer::Unreachable(why) => {
            skip(format!("installed ({}), but the service manager cannot be asked here ({why})", status.file.display()))
        }
        Answer::Known { running: false, state, .. } => fail(
            NAME,
            format!("installed ({}) but {state}, not running", status.file.display()),
            format!("read why: {logs}; then start it: {start}"),
        ),
        Answer::Known { enabled: false, .. } => {
            fail(NAME, "running, but not enabled: it will not start at your next login", enable)
        }
        Answer::Known { .. } => {
            Check { name: NAME, verdict: Verdict::Pass(format!("installed, enabled and running (logs: {logs})")) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn ctx() -> Context {
        Context { manager: Manager::Systemd, home: "/home/ann".into(), config_home: None, uid: 0 }
    }

    /// A status whose unit runs `binary` on `/data`.
    fn status(binary: &str, manager: Answer) -> Status {
        Status {
            file: PathBuf::from("/home/ann/.config/systemd/user/orchestrator.service"),
            installed: Some(["serve", "--data-dir", "/data"].iter().fold(vec![binary.to_string()], |mut w, s| {
                w.push(s.to_string());
                w
            })),
            manager,
        }
    }

    fn known(enabled: bool, state: &str, running: bool) -> Answer {
        Answer::Known { enabled, state: state.into(), running }
    }

    /// A binary that exists on every test machine.
    fn real_binary() -> String {
        std::env::current_exe().expect("exe").display().to_string()
    }

    #[test]
    fn not_installed_is_a_hint_not_a_failure() {
        let none = Status { file: "/f".into(), installed: None, manager: known(false, "inactive", false) };
        let check = verdict(&ctx(), &none, Path::new("/data"));
        let Verdict::Skip(why) = check.verdict else { panic!("{check:?}") };
        assert!(why.contains("orchestrator service install"), "{why}");
    }

    #[test]
    fn installed_but_stopped_fails_with_the_command_that_reads_the_log() {
        let check = verdict(&ctx(), &status(&real_binary(), known(true, "failed", false)), Path::new("/data"));
        let Verdict::Fail { found, fix } = check.verdict else { panic!("{check:?}") };
        assert!(found.contains("failed, not running"), "{found}");
        assert!(fix.contains("journalctl --user -u orchestrator"), "{fix}");
    }

    #[test]
    fn running_and_enabled_passes_and_not_enabled_fails() {
        let up = verdict(&ctx(), &status(&real_binary(), known(true, "active", true)), Path::new("/data"));
        assert!(matches!(up.verdict, Verdict::Pass(_)), "{up:?}");
        let once = verdict(&ctx(), &status(&real_binary(), known(false, "active", true)), Path::new("/data"));
        let Verdict::Fail { fix, .. } = once.verdict else { panic!("{once:?}") };
        assert_eq!(fix, "systemctl --user enable orchestrator.service");
    }

    #[test]
    fn a_vanished_binary_fails_and_another_data_directory_is_not_judged() {
        let gone = verdict(&ctx(), &status("/nowhere/orchestrator", known(true, "active", true)), Path::new("/data"));
        let Verdict::Fail { found, .. } = gone.verdict else { panic!("{gone:?}") };
        assert!(found.contains("/nowhere/orchestrator"), "{found}");
        let other = verdict(&ctx(), &status(&real_binary(), known(true, "failed", false)), Path::new("/elsewhere"));
        assert!(matches!(other.verdict, Verdict::Skip(ref why) if why.contains("serves /data")), "{other:?}");
    }
}
