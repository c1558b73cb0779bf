//! Notifications on the wire (`--notify`, issue 31, `docs/notifications.md`): the targets
//! as given, the signing secret in `DIR/notify-secret`, the bodies (JSON, plain text,
//! Slack's and Discord's incoming-webhook JSON), and the poster that performs the
//! engine's `Notify` effects and answers each with `Handle::notified`. The engine decides
//! what is sent and when; this room only posts.

pub mod hmac;
mod post;

pub use post::{ChannelSink, poster};

use engine::notify::Notice;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The secret file's name in the data directory.
pub const SECRET_FILE: &str = "notify-secret";
/// Random bytes of a generated secret (written as hex).
const SECRET_BYTES: usize = 32;

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
    /// A target that is not `[json:|text:|slack:|discord:]http://HOST[:PORT]/PATH`.
    #[error("--notify {given}: {why}")]
    BadTarget {
        /// The flag's value.
        given: String,
        /// What is wrong.
        why: &'static str,
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
            NotifyError::BadTarget { .. } => "NOTIFY_BAD_TARGET",
            NotifyError::Secret { .. } => "NOTIFY_SECRET",
        }
    }
}

/// How a body is shaped for its receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `application/json`: `{id, kind, run, worker, title, text, at, until}` (the default).
    Json,
    /// `text/plain`, one line (ntfy takes it as is; the title goes in `Title`).
    Text,
    /// Slack's incoming webhook: `{"text": "..."}`.
    Slack,
    /// Discord's: `{"content": "..."}`.
    Discord,
}

/// One parsed target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The body's shape.
    pub form: Form,
    /// Host name or address to connect to.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// Path and query, from the first `/`.
    pub path: String,
}

/// Parses `[json:|text:|slack:|discord:]http://HOST[:PORT][/PATH]`. Plain HTTP only: the
/// daemon carries no TLS client yet (`docs/notifications.md`, "HTTPS").
pub fn parse_target(given: &str) -> Result<Target, NotifyError> {
    let bad = |why| NotifyError::BadTarget { given: given.to_string(), why };
    let (form, url) = match given.split_once(':') {
        Some(("json", rest)) => (Form::Json, rest),
        Some(("text", rest)) => (Form::Text, rest),
        Some(("slack", rest)) => (Form::Slack, rest),
        Some(("discord", rest)) => (Form::Discord, rest),
        _ => (Form::Json, given),
    };
    if url.starts_with("https://") {
        return Err(bad("https is not supported yet: post to a local relay over http"));
    }
    let rest = url.strip_prefix("http://").ok_or_else(|| bad("expected an http:// URL"))?;
    let (authority, path) = rest.find('/').map_or((rest, "/"), |i| (&rest[..i], &rest[i..]));
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, p.parse::<u16>().map_err(|_| bad("the port is not a number"))?),
        None => (authority, 80),
    };
    if host.is_empty() || host.contains(['@', ' ']) || path.contains([' ', '\r', '\n']) {
        return Err(bad("expected http://HOST[:PORT]/PATH"));
    }
    Ok(Target { form, host: host.to_string(), port, path: path.to_string() })
}

/// Checks every target at start (a mistyped flag stops the start, not the first post).
pub fn check_targets(given: &[String]) -> Result<Vec<Arc<str>>, NotifyError> {
    let max = engine::limits::NOTIFY_TARGETS_COUNT_MAX;
    if given.len() as u64 > max {
        return Err(NotifyError::TooManyTargets { max, given: given.len() });
    }
    given.iter().map(|g| parse_target(g).map(|_| Arc::from(g.as_str()))).collect()
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
            "run": notice.run.to_string(),
            "worker": notice.worker.map(|w| w.to_string()),
            "title": &*notice.title,
            "text": &*notice.text,
            "at": notice.at.0,
            "until": notice.until.map(|t| t.0),
        })),
        Form::Text => ("text/plain; charset=utf-8", line(notice).into_bytes()),
        Form::Slack => json(serde_json::json!({ "text": line(notice) })),
        Form::Discord => json(serde_json::json!({ "content": line(notice) })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_with_their_form() {
        let t = parse_target("text:http://127.0.0.1:8080/topic").expect("parses");
        assert_eq!((t.form, t.host.as_str(), t.port, t.path.as_str()), (Form::Text, "127.0.0.1", 8080, "/topic"));
        assert_eq!(parse_target("http://hooks.local").expect("parses").path, "/");
        assert_eq!(parse_target("slack:http://h/x").expect("parses").form, Form::Slack);
        for bad in ["https://ntfy.sh/x", "ftp://h/", "http://:80/", "http://h:port/"] {
            assert_eq!(parse_target(bad).map_err(|e| e.code()), Err("NOTIFY_BAD_TARGET"), "{bad}");
        }
    }
}
