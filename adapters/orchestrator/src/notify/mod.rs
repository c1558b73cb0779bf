//! Notifications on the wire (`--notify`, issue 31, `docs/notifications.md`): the targets
//! as given, the signing secret in `DIR/notify-secret`, the bodies (JSON, plain text,
//! Slack's and Discord's incoming-webhook JSON), the poster that performs the
//! engine's `Notify` effects and answers each with `Handle::notified`, and what they came
//! to for a person (`status.rs`). The engine decides
//! what is sent and when; this room only posts.

pub mod hmac;
pub(crate) mod post;
pub mod status;
pub mod tls;

pub use post::{ChannelSink, poster};
pub use status::NotifyStatus;

use address::notify_target::{self, Form, TargetError};
use engine::notify::Notice;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The secret file's name in the data directory.
pub const SECRET_FILE: &str = "notify-secret";
/// Random bytes of a generated secret (written as hex).
const SECRET_BYTES: usize = 32;
/// The longest `content` Discord's Execute Webhook takes, in characters (its
/// documentation; a title and a text of `NOTIFY_TEXT_CHARS_MAX` each can exceed it).
pub const DISCORD_CONTENT_CHARS_MAX: usize = 2_000;

/// Why notifications cannot be set up, with a stable code.
#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    /// More `--notify` flags than a daemon posts to.
    #[error("at most {max} --notify targets are accepted, {given} were given")]
    TooManyTargets {
        /// The limit.
        max: u64,
        /// How many were given.
        given: usize,
    },
    /// A target that is not `[json:|text:|slack:|discord:]http(s)://HOST[:PORT][/PATH]`
    /// (`address::notify_target`, the one parser of a target).
    #[error("--notify {0}")]
    BadTarget(#[from] TargetError),
    /// The `--notify-ca` file cannot be used.
    #[error("--notify-ca {}: {problem}", path.display())]
    Ca {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: address::tls::CaProblem,
    },
    /// The TLS client could not be set up.
    #[error("cannot set up TLS for https targets: {why}")]
    Tls {
        /// What rustls said.
        why: String,
    },
    /// The secret could not be read or created.
    #[error("cannot read or create {path}: {source}")]
    Secret {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl NotifyError {
    /// The stable code.
    pub fn code(&self) -> &'static str {
        match self {
            NotifyError::TooManyTargets { .. } => "NOTIFY_TOO_MANY_TARGETS",
            NotifyError::BadTarget(e) => e.code(),
            NotifyError::Ca { .. } => "NOTIFY_CA",
            NotifyError::Tls { .. } => "NOTIFY_TLS",
            NotifyError::Secret { .. } => "NOTIFY_SECRET",
        }
    }
}

/// Checks every target at start (a mistyped flag stops the start, not the first post).
pub fn check_targets(given: &[String]) -> Result<Vec<Arc<str>>, NotifyError> {
    let max = engine::limits::NOTIFY_TARGETS_COUNT_MAX;
    if given.len() as u64 > max {
        return Err(NotifyError::TooManyTargets { max, given: given.len() });
    }
    given.iter().map(|g| Ok(notify_target::parse(g).map(|_| Arc::from(g.as_str()))?)).collect()
}

/// The signing secret: `DIR/notify-secret`, created `0600` with fresh random bytes at
/// first use, read back after. Never logged.
pub fn secret(data_dir: &Path) -> Result<Vec<u8>, NotifyError> {
    let path = data_dir.join(SECRET_FILE);
    let err = |source| NotifyError::Secret { path: path.clone(), source };
    match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => return Ok(text.trim().as_bytes().to_vec()),
        Ok(_) => return Err(err(std::io::Error::other("the file is empty"))),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(err(e)),
        Err(_) => {}
    }
    let mut bytes = [0u8; SECRET_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| err(std::io::Error::other(e.to_string())))?;
    let text = hmac::hex(&bytes);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&path).map_err(err)?;
    file.write_all(format!("{text}\n").as_bytes()).and_then(|()| file.sync_all()).map_err(err)?;
    Ok(text.into_bytes())
}

/// One line for a person: the title, then the worker's words, on one line.
pub fn line(notice: &Notice) -> String {
    let mut s = notice.title.to_string();
    if !notice.text.is_empty() {
        s.push_str(": ");
        s.push_str(&notice.text);
    }
    s.replace(['\r', '\n'], " ")
}

/// The body and its content type, in the target's form.
pub fn body(notice: &Notice, form: Form) -> (&'static str, Vec<u8>) {
    let json = |v: serde_json::Value| ("application/json", v.to_string().into_bytes());
    match form {
        Form::Json => json(serde_json::json!({
            "id": notice.id.to_string(),
            "kind": notice.kind.as_str(),
            // A test (`orchestrator notify test`) concerns no run.
            "run": (notice.kind != engine::notify::NoticeKind::Test).then(|| notice.run.to_string()),
            "worker": notice.worker.map(|w| w.to_string()),
            "title": &*notice.title,
            "text": &*notice.text,
            "at": notice.at.0,
            "until": notice.until.map(|t| t.0),
        })),
        Form::Text => ("text/plain; charset=utf-8", line(notice).into_bytes()),
        Form::Slack => json(serde_json::json!({ "text": line(notice) })),
        Form::Discord => {
            let content: String = line(notice).chars().take(DISCORD_CONTENT_CHARS_MAX).collect();
            json(serde_json::json!({ "content": content }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_form_says_one_line_and_discord_s_is_cut_to_its_limit() {
        let notice = Notice {
            id: engine::notify::NoticeId::new(engine::ids::Cursor(7), 0),
            target: Arc::from("discord:https://discord.com/api/webhooks/1/t"),
            kind: engine::notify::NoticeKind::HumanQuestion,
            run: engine::ids::RunId(1),
            worker: None,
            title: Arc::from("Root asks you"),
            text: Arc::from("x".repeat(1_000).as_str()),
            until: None,
            at: engine::Timestamp(0),
            failures: 0,
            next_at: engine::Timestamp(0),
            status: engine::notify::NoticeStatus::Pending,
        };
        let (_, slack) = body(&notice, Form::Slack);
        let slack: serde_json::Value = serde_json::from_slice(&slack).expect("json");
        assert_eq!(slack["text"].as_str().map(str::len), Some(1_015));
        let mut long = notice.clone();
        long.title = Arc::from("t".repeat(1_000).as_str());
        let (kind, discord) = body(&long, Form::Discord);
        let discord: serde_json::Value = serde_json::from_slice(&discord).expect("json");
        assert_eq!(
            (kind, discord["content"].as_str().map(str::len)),
            ("application/json", Some(DISCORD_CONTENT_CHARS_MAX))
        );
        let (kind, text) = body(&notice, Form::Text);
        assert_eq!((kind, text.starts_with(b"Root asks you: x")), ("text/plain; charset=utf-8", true));
    }

    #[test]
    fn a_bad_target_keeps_the_parser_s_code() {
        let e = check_targets(&["ftp://h/".into()]).expect_err("refused");
        assert_eq!(e.code(), "NOTIFY_BAD_TARGET");
        assert!(e.to_string().starts_with("--notify \"ftp://h/\" not an http://"), "{e}");
        let many: Vec<String> = (0..17).map(|i| format!("http://h/{i}")).collect();
        assert_eq!(check_targets(&many).map_err(|e| e.code()).err(), Some("NOTIFY_TOO_MANY_TARGETS"));
    }
}
