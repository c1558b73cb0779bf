//! The first-run checks of `doctor`: the configuration file (`orchestrator setup` writes it)
//! valid or its one-line error, each notification URL it names well-formed (not
//! contacted: no network call), what the running daemon's notifications came to (its
//! `/health`), and pairing (the executor token exists; `orchestrator pair` pairs an
//! extension or a remote `executor-cli`).

use super::{Check, Reached, Verdict, fail};
use address::NotificationsView;
use address::config::{Config, ConfigError, load};
use address::notify_target;
use std::path::Path;

/// The configuration check, and the file's settings for the checks after it.
pub(super) fn check_config(file: &Path) -> (Check, Option<Config>) {
    let name = "configuration";
    match load(file, false) {
        Ok(None) => (
            Check {
                name,
                verdict: Verdict::Skip(format!(
                    "no configuration file at {} (flags and defaults apply; `orchestrator setup` writes one)",
                    file.display()
                )),
            },
            None,
        ),
        Ok(Some(config)) => {
            let kinds: Vec<&str> = config.workers.iter().map(|k| k.name()).collect();
            let found = format!(
                "{} is valid (workers: {})",
                file.display(),
                if kinds.is_empty() { "none named".to_string() } else { kinds.join(", ") }
            );
            (Check { name, verdict: Verdict::Pass(found) }, Some(config))
        }
        Err(e) => (fail(name, e.to_string(), fix_for(&e)), None),
    }
}

fn fix_for(error: &ConfigError) -> String {
    let at = error.line.map(|l| format!(" line {l}")).unwrap_or_default();
    match error.code {
        "CONFIG_UNREADABLE" => format!("check the file's owner and permissions: ls -l {}", error.path.display()),
        _ => format!(
            "edit {}{at} (docs/operator.md \"First run\" lists the keys), or write it again: orchestrator setup --force",
            error.path.display()
        ),
    }
}

/// Each notification URL well-formed, shown without its path (a webhook's secret); none is
/// contacted (`orchestrator notify test` does that).
pub(super) fn check_notify(config: Option<&Config>) -> Check {
    let name = "notify";
    let Some(config) = config.filter(|c| !c.notify.is_empty()) else {
        return Check { name, verdict: Verdict::Skip("no notification URL in the configuration file".into()) };
    };
    let mut seen = Vec::new();
    for url in &config.notify {
        match notify_target::parse(url) {
            Ok(target) => seen.push(target.shown()),
            Err(e) => {
                return fail(
                    name,
                    format!("{}: {e}", e.code()),
                    "give [text:|slack:|discord:]http(s)://HOST[:PORT]/PATH in the configuration file's notify list \
                     (docs/notifications.md)",
                );
            }
        }
    }
    let found = format!("{} well-formed (not contacted: `orchestrator notify test` sends a test)", seen.join(", "));
    Check { name, verdict: Verdict::Pass(found) }
}

/// What the running daemon's notifications came to: every notice delivered, or how many
/// wait and why the last post failed.
pub(super) fn check_notifications(reached: &Reached) -> Check {
    let name = "notifications";
    match reached {
        Reached::Answered(health) => match &health.notifications {
            Some(view) => notifications_verdict(view, now_ms()),
            None => Check { name, verdict: Verdict::Skip("the daemon was started without --notify".into()) },
        },
        _ => Check { name, verdict: Verdict::Skip("the daemon check failed first".into()) },
    }
}

/// The verdict on `view` as of `now_ms`: a failure while notices wait fails the check.
fn notifications_verdict(view: &NotificationsView, now_ms: u64) -> Check {
    let name = "notifications";
    let line = view.line(now_ms);
    if view.pending > 0 && view.last_failure.is_some() {
        return fail(
            name,
            line,
            "check that each --notify receiver answers 2xx (the daemon's log names every failed post); for an https \
             receiver with a private CA or a self-signed certificate, give its PEM with --notify-ca FILE",
        );
    }
    Check { name, verdict: Verdict::Pass(line) }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Whether the executor token exists, and how to pair.
pub(super) fn check_pairing(dir: &Path, executor_token_file_name: &str) -> Check {
    let name = "pairing";
    let token = dir.join(executor_token_file_name);
    if token.exists() {
        return Check {
            name,
            verdict: Verdict::Pass(format!(
                "the executor token exists ({}); to pair the extension or a remote executor-cli: orchestrator pair",
                token.display()
            )),
        };
    }
    Check {
        name,
        verdict: Verdict::Skip(format!(
            "no executor token yet ({}): the daemon writes it on its first start; then pair with `orchestrator pair`",
            token.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_valid_file_passes_a_missing_one_is_skipped_a_bad_one_fails_with_its_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("config.toml");
        assert!(matches!(check_config(&file).0.verdict, Verdict::Skip(_)));
        std::fs::write(&file, "workers = [\"codex\"]\nnotify = [\"https://ntfy.sh/t\"]\n").expect("write");
        let (check, config) = check_config(&file);
        assert!(matches!(check.verdict, Verdict::Pass(ref f) if f.contains("workers: codex")), "{check:?}");
        let notify = check_notify(config.as_ref());
        assert!(matches!(notify.verdict, Verdict::Pass(ref f) if f.contains("not contacted")), "{notify:?}");
        std::fs::write(&file, "workers = [\"codex\"]\ncolour = \"blue\"\n").expect("write");
        let (check, config) = check_config(&file);
        let Verdict::Fail { found, fix } = check.verdict else { panic!("{check:?}") };
        assert!(found.contains("line 2 key colour"), "{found}");
        assert!(fix.contains("line 2") && fix.contains("setup --force"), "{fix}");
        assert!(config.is_none());
    }

    #[test]
    fn notify_targets_are_checked_without_a_network_call() {
        assert!(matches!(check_notify(None).verdict, Verdict::Skip(_)));
        // A value the file's reader refuses can still reach this check through a struct.
        let bad = Config { notify: vec!["mailto:ann@example.com".into()], ..Config::default() };
        assert!(
            matches!(check_notify(Some(&bad)).verdict, Verdict::Fail { ref found, .. } if found.starts_with("NOTIFY_BAD_TARGET"))
        );
        let good = Config {
            notify: vec!["text:https://ntfy.sh/t".into(), "http://127.0.0.1:9/x".into()],
            ..Config::default()
        };
        let check = check_notify(Some(&good));
        assert!(
            matches!(check.verdict, Verdict::Pass(ref f) if f.starts_with("text:https://ntfy.sh/…, http://127.0.0.1:9/…")),
            "{check:?}"
        );
    }

    #[test]
    fn notifications_pass_when_settled_and_fail_while_a_failure_keeps_them_waiting() {
        let mut view = NotificationsView { targets: 1, delivered: 6, ..NotificationsView::default() };
        let check = notifications_verdict(&view, 0);
        assert_eq!(check.verdict, Verdict::Pass("6 delivered, 0 pending, 0 abandoned (1 target)".into()));
        view.pending = 2;
        view.last_failure = Some(address::NotificationFailureView {
            notification_id: "ntf-4-0".into(),
            detail: "the receiver's certificate is not trusted".into(),
            at_ms: 0,
        });
        let Verdict::Fail { found, fix } = notifications_verdict(&view, 5_000).verdict else { panic!("fails") };
        assert!(
            found.contains("2 pending") && found.contains("5 s ago (ntf-4-0): the receiver's certificate"),
            "{found}"
        );
        assert!(fix.contains("--notify-ca"), "{fix}");
    }

    #[test]
    fn pairing_says_whether_the_token_exists_and_how_to_pair() {
        let dir = tempfile::tempdir().expect("tempdir");
        let check = check_pairing(dir.path(), "executor-token");
        assert!(matches!(check.verdict, Verdict::Skip(ref w) if w.contains("orchestrator pair")), "{check:?}");
        std::fs::write(dir.path().join("executor-token"), "t\n").expect("token");
        let check = check_pairing(dir.path(), "executor-token");
        assert!(matches!(check.verdict, Verdict::Pass(ref w) if w.contains("orchestrator pair")), "{check:?}");
    }
}
