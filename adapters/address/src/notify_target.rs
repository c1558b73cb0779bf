//! A notification target (`serve --notify`, `setup --notify`, the configuration file's
//! `notify`, `doctor`): `[json:|text:|slack:|discord:]http(s)://HOST[:PORT][/PATH]`,
//! parsed here once for every one of them, so that what the file check accepts is what
//! the daemon posts to. Nothing is contacted (`docs/notifications.md`).

use std::fmt;

/// The longest target accepted, in bytes (a webhook URL with its secret path is far shorter).
pub const TARGET_BYTES_MAX: usize = 2_048;
/// The longest host name, in bytes (RFC 1035).
pub const HOST_BYTES_MAX: usize = 253;

/// The stable code of every refused target.
pub const BAD_TARGET_CODE: &str = "NOTIFY_BAD_TARGET";

/// How a body is shaped for its receiver: the target's prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `application/json`: `{id, kind, run, worker, title, text, at, until}` (no prefix, or `json:`).
    Json,
    /// `text:`: `text/plain`, one line (ntfy takes it as is; the title goes in `Title`).
    Text,
    /// `slack:`: Slack's incoming webhook, `{"text": "..."}`.
    Slack,
    /// `discord:`: Discord's, `{"content": "..."}`.
    Discord,
}

impl Form {
    /// The prefix's word (`json` for the default).
    pub fn name(self) -> &'static str {
        match self {
            Form::Json => "json",
            Form::Text => "text",
            Form::Slack => "slack",
            Form::Discord => "discord",
        }
    }
}

/// `POST /notify/test` (`orchestrator notify test`): one test notification to every
/// target the daemon posts to, answered per target. A loopback `Host`, no `Origin` and the
/// static MCP token, as `/health`.
pub const NOTIFY_TEST_PATH: &str = "/notify/test";

/// What one target made of the test notification.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NotifyTestResult {
    /// The target as [`Target::shown`] prints it (its path, the webhook's secret, left out).
    pub target: String,
    /// The receiver took it (a 2xx answer).
    pub delivered: bool,
    /// What went wrong, in a person's words, when it was not delivered.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// `POST /notify/test`'s answer: a result per target, in the daemon's order (none when
/// the daemon has no target).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NotifyTestAnswer {
    /// One per target.
    pub results: Vec<NotifyTestResult>,
}

/// One parsed target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The body's shape.
    pub form: Form,
    /// `https://`: posted over TLS, the certificate checked for `host`.
    pub tls: bool,
    /// The host name or IP address to connect to (an IPv6 address without its brackets).
    pub host: String,
    /// The TCP port (80 or 443 unless given).
    pub port: u16,
    /// The path and query, from the first `/` (`/` when none was given).
    pub path: String,
}

impl Target {
    /// The `Host` header's value: the host, and the port when it is not the scheme's own.
    pub fn authority(&self) -> String {
        let host = if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        let default = if self.tls { 443 } else { 80 };
        if self.port == default { host } else { format!("{host}:{}", self.port) }
    }

    /// The target as a person may see it printed: its form, scheme and host, the path
    /// left out (a Slack or Discord webhook's path, an ntfy topic, is its secret).
    pub fn shown(&self) -> String {
        let prefix = if self.form == Form::Json { String::new() } else { format!("{}:", self.form.name()) };
        let path = if self.path == "/" { "/" } else { "/…" };
        format!("{prefix}{}://{}{path}", if self.tls { "https" } else { "http" }, self.authority())
    }

    /// The URL posted to, without the form's prefix (for logs and `doctor`).
    pub fn url(&self) -> String {
        format!("{}://{}{}", if self.tls { "https" } else { "http" }, self.authority(), self.path)
    }
}

/// What is wrong with a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// Longer than [`TARGET_BYTES_MAX`].
    TooLong,
    /// Neither `http://` nor `https://` after the optional prefix.
    Scheme,
    /// `user:password@` in the URL (the daemon sends no credentials from a URL).
    UserInfo,
    /// No host, or one that is not a DNS name, an IPv4 or a bracketed IPv6 address.
    Host,
    /// A port that is not a number from 1 to 65535.
    Port,
    /// A space, a control or non-ASCII character, or a `#` fragment in the path.
    Path,
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Why::TooLong => "longer than 2048 bytes",
            Why::Scheme => "not an http:// or https:// URL (optionally prefixed json:, text:, slack: or discord:)",
            Why::UserInfo => "user info (USER:PASSWORD@) is not sent: leave it out",
            Why::Host => "names no host (a DNS name, an IPv4 address or [IPv6])",
            Why::Port => "the port must be a number from 1 to 65535",
            Why::Path => "the path holds a space, a control or non-ASCII character, or a #fragment",
        })
    }
}

/// A refused target: the value given and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{given:?} {why}")]
pub struct TargetError {
    /// The value as given (cut at [`TARGET_BYTES_MAX`]).
    pub given: String,
    /// What is wrong.
    pub why: Why,
}

impl TargetError {
    /// The stable code: [`BAD_TARGET_CODE`].
    pub fn code(&self) -> &'static str {
        BAD_TARGET_CODE
    }
}

/// Parses `[json:|text:|slack:|discord:]http(s)://HOST[:PORT][/PATH]`.
pub fn parse(given: &str) -> Result<Target, TargetError> {
    let bad = |why| {
        let mut cut = TARGET_BYTES_MAX.min(given.len());
        while !given.is_char_boundary(cut) {
            cut -= 1;
        }
        TargetError { given: given[..cut].to_string(), why }
    };
    if given.len() > TARGET_BYTES_MAX {
        return Err(bad(Why::TooLong));
    }
    let (form, url) = match given.split_once(':') {
        Some(("json", rest)) => (Form::Json, rest),
        Some(("text", rest)) => (Form::Text, rest),
        Some(("slack", rest)) => (Form::Slack, rest),
        Some(("discord", rest)) => (Form::Discord, rest),
        _ => (Form::Json, given),
    };
    let (tls, rest) = match (url.strip_prefix("https://"), url.strip_prefix("http://")) {
        (Some(rest), _) => (true, rest),
        (None, Some(rest)) => (false, rest),
        (None, None) => return Err(bad(Why::Scheme)),
    };
    let (authority, path) = rest.find(['/', '?']).map_or((rest, "/"), |i| (&rest[..i], &rest[i..]));
    if authority.contains('@') {
        return Err(bad(Why::UserInfo));
    }
    let (host, port) = split_host_port(authority).ok_or_else(|| bad(Why::Host))?;
    let port = match port {
        None => {
            if tls {
                443
            } else {
                80
            }
        }
        Some(p) => p.parse::<u16>().ok().filter(|p| *p != 0).ok_or_else(|| bad(Why::Port))?,
    };
    if !host_ok(host) {
        return Err(bad(Why::Host));
    }
    let path = if path.starts_with('?') { format!("/{path}") } else { path.to_string() };
    if !path.bytes().all(|b| b.is_ascii_graphic() && b != b'#') {
        return Err(bad(Why::Path));
    }
    Ok(Target { form, tls, host: host.to_ascii_lowercase(), port, path })
}

/// `host[:port]` or `[v6][:port]`; `None` when the brackets do not close.
fn split_host_port(authority: &str) -> Option<(&str, Option<&str>)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after {
            "" => Some((host, None)),
            _ => Some((host, Some(after.strip_prefix(':')?))),
        };
    }
    Some(match authority.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (authority, None),
    })
}

/// A DNS name (letters, digits, `-`, `_` in dot-separated labels), an IPv4 or an IPv6 address.
fn host_ok(host: &str) -> bool {
    if host.parse::<std::net::IpAddr>().is_ok() {
        return true;
    }
    !host.is_empty()
        && host.len() <= HOST_BYTES_MAX
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(given: &str) -> (Form, bool, String, u16, String) {
        let t = parse(given).unwrap_or_else(|e| panic!("{given}: {e}"));
        (t.form, t.tls, t.host, t.port, t.path)
    }

    #[test]
    fn good_targets_parse_with_their_form_scheme_and_port() {
        let s = String::from;
        assert_eq!(parts("http://127.0.0.1:8080/hook"), (Form::Json, false, s("127.0.0.1"), 8080, s("/hook")));
        assert_eq!(parts("json:http://hooks.local"), (Form::Json, false, s("hooks.local"), 80, s("/")));
        assert_eq!(parts("text:https://ntfy.sh/my_topic"), (Form::Text, true, s("ntfy.sh"), 443, s("/my_topic")));
        assert_eq!(
            parts("slack:https://hooks.slack.com/services/T0/B0/XyZ"),
            (Form::Slack, true, s("hooks.slack.com"), 443, s("/services/T0/B0/XyZ"))
        );
        assert_eq!(
            parts("discord:https://discord.com/api/webhooks/1/abc-DEF?wait=true"),
            (Form::Discord, true, s("discord.com"), 443, s("/api/webhooks/1/abc-DEF?wait=true"))
        );
        assert_eq!(parts("https://Localhost:8443"), (Form::Json, true, s("localhost"), 8443, s("/")));
        assert_eq!(parts("http://[::1]:9000/x"), (Form::Json, false, s("::1"), 9000, s("/x")));
        assert_eq!(parts("http://h?q=1").4, "/?q=1");
    }

    #[test]
    fn the_host_header_and_url_leave_out_the_default_port() {
        let t = parse("text:https://ntfy.sh/t").expect("parses");
        assert_eq!((t.authority(), t.url()), ("ntfy.sh".to_string(), "https://ntfy.sh/t".to_string()));
        let t = parse("http://[::1]:9000/x").expect("parses");
        assert_eq!(t.url(), "http://[::1]:9000/x");
        assert_eq!(parse("https://h:443/").expect("parses").authority(), "h");
        assert_eq!(parse("http://h:443/").expect("parses").authority(), "h:443");
    }

    #[test]
    fn a_shown_target_keeps_its_path_secret() {
        let shown = |given: &str| parse(given).expect("parses").shown();
        assert_eq!(shown("slack:https://hooks.slack.com/services/T0/B0/XyZ"), "slack:https://hooks.slack.com/…");
        assert_eq!(shown("text:https://ntfy.sh/my_topic"), "text:https://ntfy.sh/…");
        assert_eq!(shown("http://127.0.0.1:8080"), "http://127.0.0.1:8080/");
    }

    #[test]
    fn bad_targets_are_refused_with_what_is_wrong() {
        let cases = [
            ("ftp://h/", Why::Scheme),
            ("ntfy.sh/topic", Why::Scheme),
            ("mailto:ann@example.com", Why::Scheme),
            ("teams:https://h/", Why::Scheme),
            ("text:", Why::Scheme),
            ("https://", Why::Host),
            ("http://:80/", Why::Host),
            ("http://h:port/", Why::Port),
            ("http://h:0/", Why::Port),
            ("http://h:65536/", Why::Port),
            ("http://user:pw@h/", Why::UserInfo),
            ("http://h o/", Why::Host),
            ("http://h/a b", Why::Path),
            ("http://h/a\r\nX: y", Why::Path),
            ("http://h/#frag", Why::Path),
            ("http://h/é", Why::Path),
            ("http://[::1/", Why::Host),
            ("http://exa mple.com", Why::Host),
            ("http://ex*ample.com", Why::Host),
        ];
        for (given, why) in cases {
            let e = parse(given).expect_err(given);
            assert_eq!((e.why, e.code()), (why, "NOTIFY_BAD_TARGET"), "{given}");
            assert!(e.to_string().starts_with(&format!("{given:?} ")), "{e}");
        }
        let long = format!("http://h/{}", "a".repeat(TARGET_BYTES_MAX));
        let e = parse(&long).expect_err("long");
        assert_eq!((e.why, e.given.len()), (Why::TooLong, TARGET_BYTES_MAX));
    }
}
