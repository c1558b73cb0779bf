//! The configuration file (`orchestrator setup` writes it, `serve` and `doctor` read it):
//! `$XDG_CONFIG_HOME/orchestrator/config.toml` or `~/.config/orchestrator/config.toml`,
//! or `--config FILE`. A small flat subset of TOML: `key = "string"` and
//! `key = ["string", ...]` on one line each, `#` comments; every key is known, every value
//! checked, and a mistake is one [`ConfigError`] naming the file, the line and the key
//! (never a panic). Command-line flags and environment variables override what it says.

use crate::PublicUrl;
use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

/// The file's name inside the configuration directory.
pub const CONFIG_FILE_NAME: &str = "config.toml";

/// The largest configuration file read, in bytes (a hand-written file is far smaller).
pub const CONFIG_BYTES_MAX: u64 = 64 * 1024;

/// The default configuration file: `$XDG_CONFIG_HOME/orchestrator/config.toml`, else
/// `~/.config/orchestrator/config.toml`.
pub fn default_config_path() -> PathBuf {
    let dir = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(xdg) => PathBuf::from(xdg),
        None => match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
            Some(home) => PathBuf::from(home).join(".config"),
            None => PathBuf::from("."),
        },
    };
    dir.join("orchestrator").join(CONFIG_FILE_NAME)
}

/// A kind of worker the person wants, which decides the next steps `setup` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum WorkerKind {
    /// ChatGPT conversations, driven by the browser extension.
    Chatgpt,
    /// Codex CLI sessions, driven by `orchestrator executor-cli`.
    Codex,
    /// Claude Code sessions, driven by `orchestrator executor-cli`.
    Claude,
}

impl WorkerKind {
    /// The kind's name in the file and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            WorkerKind::Chatgpt => "chatgpt",
            WorkerKind::Codex => "codex",
            WorkerKind::Claude => "claude",
        }
    }

    /// The kind a name stands for.
    pub fn parse(text: &str) -> Option<WorkerKind> {
        match text.trim() {
            "chatgpt" => Some(WorkerKind::Chatgpt),
            "codex" => Some(WorkerKind::Codex),
            "claude" => Some(WorkerKind::Claude),
            _ => None,
        }
    }
}

/// What the file says; an absent key is `None` or empty (the flag's default applies).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// `data_dir`: the daemon's data directory (`serve --data-dir`).
    pub data_dir: Option<PathBuf>,
    /// `listen`: the address and port the daemon listens on (`serve --listen`).
    pub listen: Option<SocketAddr>,
    /// `public_url`: the public address OAuth serves (`serve --public-url`), checked as the flag is.
    pub public_url: Option<String>,
    /// `allow_hosts`: host names accepted besides loopback, e.g. a tunnel's (`serve --allow-host`).
    pub allow_hosts: Vec<String>,
    /// `trusted_proxies`: addresses of proxies or tunnel clients (`serve --trusted-proxy`).
    pub trusted_proxies: Vec<IpAddr>,
    /// `workers`: the worker kinds wanted; decides `setup`'s next steps and what `doctor` expects.
    pub workers: Vec<WorkerKind>,
    /// `notify`: the targets the daemon notifies (`serve --notify`), each checked by
    /// [`crate::notify_target::parse`].
    pub notify: Vec<String>,
    /// `notify_ca`: a PEM file of extra roots trusted for `https://` targets (`serve --notify-ca`).
    pub notify_ca: Option<PathBuf>,
}

/// Every key the file may hold, in the order `render` writes them.
pub const KEYS: [&str; 8] =
    ["data_dir", "listen", "public_url", "allow_hosts", "trusted_proxies", "workers", "notify", "notify_ca"];

/// What is wrong with a configuration file: the file, the line and the key when known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {where_}: {message}", code = self.code, where_ = self.place())]
pub struct ConfigError {
    /// The stable code: `CONFIG_UNREADABLE`, `CONFIG_SYNTAX`, `CONFIG_UNKNOWN_KEY`, `CONFIG_BAD_VALUE`.
    pub code: &'static str,
    /// The file.
    pub path: PathBuf,
    /// The line, from 1, when the mistake is on one.
    pub line: Option<usize>,
    /// The key, when the mistake is in a value or a name.
    pub key: Option<String>,
    /// What is wrong and what is expected.
    pub message: String,
}

impl ConfigError {
    /// `FILE:LINE: key KEY` as far as known.
    fn place(&self) -> String {
        let mut out = self.path.display().to_string();
        if let Some(line) = self.line {
            let _ = write!(out, " line {line}");
        }
        if let Some(key) = &self.key {
            let _ = write!(out, " key {key}");
        }
        out
    }
}

/// Reads the file at `path`. A missing file is `Ok(None)` unless `required` (a file named by
/// `--config` must exist).
pub fn load(path: &Path, required: bool) -> Result<Option<Config>, ConfigError> {
    let unreadable =
        |message: String| ConfigError { code: "CONFIG_UNREADABLE", path: path.into(), line: None, key: None, message };
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => return Ok(None),
        Err(e) => return Err(unreadable(format!("cannot read it: {e}"))),
        Ok(meta) if meta.len() > CONFIG_BYTES_MAX => {
            return Err(unreadable(format!("larger than {CONFIG_BYTES_MAX} bytes")));
        }
        Ok(_) => {}
    }
    let text = std::fs::read_to_string(path).map_err(|e| unreadable(format!("cannot read it: {e}")))?;
    parse(&text, path).map(Some)
}

/// A raw value: a string or an array of strings.
enum Value {
    Text(String),
    List(Vec<String>),
}

/// Parses the text of a configuration file (`path` only names it in errors).
pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    let mut config = Config::default();
    let mut seen: Vec<String> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let err = |code: &'static str, key: Option<&str>, message: String| ConfigError {
            code,
            path: path.into(),
            line: Some(line),
            key: key.map(String::from),
            message,
        };
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let Some((key, rest)) = trimmed.split_once('=') else {
            let message = if trimmed.starts_with('[') {
                "tables are not used: every key stands at the top level".to_string()
            } else {
                "expected `key = value`".to_string()
            };
            return Err(err("CONFIG_SYNTAX", None, message));
        };
        let key = key.trim();
        if !KEYS.contains(&key) {
            return Err(err("CONFIG_UNKNOWN_KEY", Some(key), format!("unknown key (known: {})", KEYS.join(", "))));
        }
        if seen.iter().any(|k| k == key) {
            return Err(err("CONFIG_SYNTAX", Some(key), "given twice".into()));
        }
        seen.push(key.to_string());
        let value = value(rest.trim()).map_err(|m| err("CONFIG_SYNTAX", Some(key), m))?;
        set(&mut config, key, value).map_err(|m| err("CONFIG_BAD_VALUE", Some(key), m))?;
    }
    Ok(config)
}

/// One value: `"text"` or `["a", "b"]`, then nothing but a comment.
fn value(text: &str) -> Result<Value, String> {
    let mut chars = text.chars().peekable();
    let parsed = match chars.peek() {
        Some('"') => Value::Text(string(&mut chars)?),
        Some('[') => {
            chars.next();
            let mut items = Vec::new();
            loop {
                skip_space(&mut chars);
                match chars.peek() {
                    Some(']') => {
                        chars.next();
                        break;
                    }
                    Some('"') => items.push(string(&mut chars)?),
                    _ => return Err("expected a quoted string or `]` in the list (one line)".into()),
                }
                skip_space(&mut chars);
                match chars.next() {
                    Some(',') => {}
                    Some(']') => break,
                    _ => return Err("expected `,` or `]` after a list item".into()),
                }
            }
            Value::List(items)
        }
        _ => return Err("expected a quoted string (\"...\") or a list ([\"...\"])".into()),
    };
    skip_space(&mut chars);
    match chars.next() {
        None | Some('#') => Ok(parsed),
        Some(_) => Err("unexpected text after the value".into()),
    }
}

fn skip_space(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while chars.next_if(|c| c.is_whitespace()).is_some() {}
}

/// A basic TOML string: `"` ... `"` with `\"` and `\\` escapes.
fn string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Result<String, String> {
    chars.next();
    let mut out = String::new();
    loop {
        match chars.next() {
            None => return Err("a string is not closed with `\"`".into()),
            Some('"') => return Ok(out),
            Some('\\') => match chars.next() {
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                _ => return Err("only \\\" and \\\\ escapes are read".into()),
            },
            Some(c) => out.push(c),
        }
    }
}

fn text(value: Value) -> Result<String, String> {
    match value {
        Value::Text(text) => Ok(text),
        Value::List(_) => Err("expected a string, not a list".into()),
    }
}

fn list(value: Value) -> Result<Vec<String>, String> {
    match value {
        Value::List(items) => Ok(items),
        Value::Text(_) => Err("expected a list of strings, e.g. [\"...\"]".into()),
    }
}

fn set(config: &mut Config, key: &str, value: Value) -> Result<(), String> {
    match key {
        "data_dir" => config.data_dir = Some(data_dir(&text(value)?)?),
        "listen" => {
            let text = text(value)?;
            config.listen = Some(text.parse().map_err(|_| format!("{text:?} is not ADDR:PORT, e.g. 127.0.0.1:7411"))?);
        }
        "public_url" => {
            let text = text(value)?;
            PublicUrl::parse(&text).map_err(|e| e.0)?;
            config.public_url = Some(text);
        }
        "allow_hosts" => {
            config.allow_hosts = list(value)?;
            if let Some(bad) = config.allow_hosts.iter().find(|h| h.is_empty() || h.contains(['/', ' ', ':'])) {
                return Err(format!("{bad:?} is not a host name"));
            }
        }
        "trusted_proxies" => {
            config.trusted_proxies = list(value)?
                .iter()
                .map(|ip| ip.parse().map_err(|_| format!("{ip:?} is not an IP address")))
                .collect::<Result<_, _>>()?;
        }
        "workers" => {
            let mut kinds = Vec::new();
            for name in list(value)? {
                let kind = WorkerKind::parse(&name)
                    .ok_or_else(|| format!("{name:?} is not a worker kind (chatgpt, codex, claude)"))?;
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                }
            }
            config.workers = kinds;
        }
        "notify" => {
            let urls = list(value)?;
            for url in &urls {
                crate::notify_target::parse(url).map_err(|e| e.to_string())?;
            }
            config.notify = urls;
        }
        "notify_ca" => config.notify_ca = Some(data_dir(&text(value)?)?),
        _ => return Err("unknown key".into()),
    }
    Ok(())
}

/// An absolute path, or one under `~/` (`data_dir`, `notify_ca`).
fn data_dir(text: &str) -> Result<PathBuf, String> {
    if let Some(rest) = text.strip_prefix("~/") {
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).ok_or("~ but HOME is not set")?;
        return Ok(PathBuf::from(home).join(rest));
    }
    let path = PathBuf::from(text);
    if !path.is_absolute() {
        return Err(format!("{text:?} is not an absolute path (or one under ~/)"));
    }
    Ok(path)
}

impl Config {
    /// The file's text: a header, then each key that has a value (what `setup` writes).
    pub fn render(&self) -> String {
        let quote = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
        let list = |items: Vec<String>| format!("[{}]", items.iter().map(|s| quote(s)).collect::<Vec<_>>().join(", "));
        let mut out = String::from(
            "# orchestrator configuration, read by `orchestrator serve` and `orchestrator doctor`.\n\
             # Command-line flags and environment variables override it. See docs/operator.md \"First run\".\n",
        );
        if let Some(dir) = &self.data_dir {
            let _ = writeln!(out, "data_dir = {}", quote(&dir.display().to_string()));
        }
        if let Some(listen) = &self.listen {
            let _ = writeln!(out, "listen = {}", quote(&listen.to_string()));
        }
        if let Some(url) = &self.public_url {
            let _ = writeln!(out, "public_url = {}", quote(url));
        }
        if !self.allow_hosts.is_empty() {
            let _ = writeln!(out, "allow_hosts = {}", list(self.allow_hosts.clone()));
        }
        if !self.trusted_proxies.is_empty() {
            let _ = writeln!(
                out,
                "trusted_proxies = {}",
                list(self.trusted_proxies.iter().map(|i| i.to_string()).collect())
            );
        }
        let _ = writeln!(out, "workers = {}", list(self.workers.iter().map(|k| k.name().to_string()).collect()));
        let _ = writeln!(out, "notify = {}", list(self.notify.clone()));
        if let Some(ca) = &self.notify_ca {
            let _ = writeln!(out, "notify_ca = {}", quote(&ca.display().to_string()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(text: &str) -> ConfigError {
        parse(text, Path::new("/c.toml")).expect_err("refused")
    }

    #[test]
    fn a_whole_file_reads_back_as_written() {
        let config = Config {
            data_dir: Some("/data/orch".into()),
            listen: Some("127.0.0.1:7500".parse().expect("addr")),
            public_url: Some("https://orch.example.com".into()),
            allow_hosts: vec!["orch.example.com".into()],
            trusted_proxies: vec!["10.0.0.1".parse().expect("ip")],
            workers: vec![WorkerKind::Chatgpt, WorkerKind::Codex],
            notify: vec!["text:https://ntfy.sh/topic".into(), "slack:https://hooks.slack.com/services/T/B/x".into()],
            notify_ca: Some("/etc/ssl/private-ca.pem".into()),
        };
        assert_eq!(parse(&config.render(), Path::new("/c.toml")), Ok(config));
        let commented = "# a comment\n\nlisten = \"127.0.0.1:1\"   # why\nworkers = [ ]\n";
        assert_eq!(parse(commented, Path::new("/c")).expect("ok").listen, Some("127.0.0.1:1".parse().expect("addr")));
    }

    #[test]
    fn an_unknown_key_names_the_file_the_line_and_the_key() {
        let e = bad("listen = \"127.0.0.1:1\"\nlisen = \"x\"\n");
        assert_eq!(e.code, "CONFIG_UNKNOWN_KEY");
        assert_eq!(e.to_string().lines().count(), 1);
        assert!(e.to_string().starts_with("CONFIG_UNKNOWN_KEY: /c.toml line 2 key lisen: unknown key"), "{e}");
    }

    #[test]
    fn bad_types_and_values_are_refused_with_their_key() {
        let e = bad("workers = \"codex\"\n");
        assert_eq!((e.code, e.line, e.key.as_deref()), ("CONFIG_BAD_VALUE", Some(1), Some("workers")), "{e}");
        let e = bad("\nnotify = [\"ftp://x\"]\n");
        assert_eq!((e.code, e.line, e.key.as_deref()), ("CONFIG_BAD_VALUE", Some(2), Some("notify")), "{e}");
        assert!(e.message.contains("not an http:// or https:// URL"), "{e}");
        assert_eq!(bad("notify = [\"https://\"]").code, "CONFIG_BAD_VALUE");
        // The daemon's own parser: a prefix it does not know is refused here too.
        assert!(bad("notify = [\"teams:https://h/\"]").message.contains("not an http:// or https:// URL"));
        assert_eq!(bad("listen = 7411").code, "CONFIG_SYNTAX");
        assert_eq!(bad("listen = \"nowhere\"").code, "CONFIG_BAD_VALUE");
        assert_eq!(bad("public_url = \"ftp://x\"").code, "CONFIG_BAD_VALUE");
        assert_eq!(bad("data_dir = \"relative\"").code, "CONFIG_BAD_VALUE");
        assert_eq!(bad("workers = [\"gpt\"]").code, "CONFIG_BAD_VALUE");
        assert_eq!(bad("[serve]").code, "CONFIG_SYNTAX");
        assert_eq!(bad("listen = \"a\" \"b\"").code, "CONFIG_SYNTAX");
        assert_eq!(bad("listen = \"127.0.0.1:1\"\nlisten = \"127.0.0.1:2\"").code, "CONFIG_SYNTAX");
    }

    #[test]
    fn a_missing_default_file_is_no_configuration_but_a_named_one_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("none.toml");
        assert_eq!(load(&path, false), Ok(None));
        assert_eq!(load(&path, true).expect_err("named").code, "CONFIG_UNREADABLE");
    }
}
