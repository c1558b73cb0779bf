//! `orchestrator notify test`: the running daemon posts one test notification to each of
//! its `--notify` targets (`POST /notify/test`) and this says, per target, whether the
//! receiver took it or why not (docs/notifications.md, "Trying it").

use crate::pair::call_within;
use crate::reach::Target;
use address::notify_target::{NOTIFY_TEST_PATH, NotifyTestAnswer};
use hyper::Method;

/// How long the daemon's posts may take in all, ms: its own per-post timeout (30 s, the
/// posts run side by side) and some.
pub const NOTIFY_TEST_CALL_TIMEOUT_MS: u64 = 40_000;

/// The daemon's answer for `target` in a person's words, and whether every target took it.
pub async fn run(target: &Target) -> anyhow::Result<(String, bool)> {
    let target = &target.leader().await?;
    let (addr, _) = crate::client::parse_url(&target.url)?;
    let token = target.token.as_deref().unwrap_or_default();
    let call =
        call_within(&addr, Method::POST, NOTIFY_TEST_PATH, Some(token), String::new(), NOTIFY_TEST_CALL_TIMEOUT_MS);
    let (status, bytes) = match call.await {
        Ok(answer) => answer,
        Err(crate::pair::PairClientError::Unreachable { .. }) => {
            let dir = target.data_dir.display().to_string();
            return Err(crate::reach::ReachError::NotRunning { url: target.url.clone(), dir }.into());
        }
        Err(e) => return Err(e.into()),
    };
    match status {
        200 => {}
        401 => return Err(target.explain(crate::client::ClientError::Unauthorized.into())),
        404 => anyhow::bail!("this daemon cannot send a test notification (an older version): update it"),
        _ => anyhow::bail!("the daemon refused the test ({status}): {}", String::from_utf8_lossy(&bytes).trim()),
    }
    let answer: NotifyTestAnswer = serde_json::from_slice(&bytes)?;
    Ok((text(&answer), answer.results.iter().all(|r| r.delivered) && !answer.results.is_empty()))
}

/// What `notify test` prints.
pub fn text(answer: &NotifyTestAnswer) -> String {
    if answer.results.is_empty() {
        return "The daemon has no notification target: start it with `--notify URL`, or add the URL to \
                the configuration file's `notify` (orchestrator setup), then restart it.\n"
            .to_string();
    }
    let mut out = String::new();
    for r in &answer.results {
        if r.delivered {
            out.push_str(&format!("  delivered  {}\n", r.target));
        } else {
            out.push_str(&format!("  FAILED     {}: {}\n", r.target, r.detail));
        }
    }
    let delivered = answer.results.iter().filter(|r| r.delivered).count();
    out.push_str(&format!(
        "{delivered} of {} target{} took the test notification.{}\n",
        answer.results.len(),
        if answer.results.len() == 1 { "" } else { "s" },
        if delivered < answer.results.len() {
            " Check the URL and that the receiver is up (docs/notifications.md)."
        } else {
            ""
        }
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use address::notify_target::NotifyTestResult;

    #[test]
    fn each_target_says_what_came_of_it() {
        let answer = NotifyTestAnswer {
            results: vec![
                NotifyTestResult { target: "text:https://ntfy.sh/…".into(), delivered: true, detail: String::new() },
                NotifyTestResult {
                    target: "http://127.0.0.1:9/…".into(),
                    delivered: false,
                    detail: "connection refused".into(),
                },
            ],
        };
        let shown = text(&answer);
        assert!(shown.contains("  delivered  text:https://ntfy.sh/…\n"), "{shown}");
        assert!(shown.contains("  FAILED     http://127.0.0.1:9/…: connection refused\n"), "{shown}");
        assert!(shown.contains("1 of 2 targets took the test notification. Check the URL"), "{shown}");
        assert!(text(&NotifyTestAnswer { results: vec![] }).contains("no notification target"));
    }
}
