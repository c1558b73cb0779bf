//! Redirect URIs a client may register: exact-parsed and checked against an allowlist
//! (ChatGPT's and Claude's connector callbacks, loopback for command-line clients and
//! tests, and the operator's exact additions). No prefixes, no wildcards.

/// A redirect URI's parts, as parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    /// `https` or `http`.
    pub scheme: String,
    /// Lowercase host name.
    pub host: String,
    /// Explicit port, if any.
    pub port: Option<u16>,
    /// The path (starts with `/`).
    pub path: String,
}

/// Longest redirect URI accepted, in bytes.
pub const REDIRECT_URI_BYTES_MAX: usize = 2_048;

/// Parses an absolute `http(s)://host[:port]/path[?query]` URI with no fragment and no
/// user info; anything unusual is `None`.
pub fn parse(uri: &str) -> Option<Redirect> {
    if uri.len() > REDIRECT_URI_BYTES_MAX || uri.bytes().any(|b| !b.is_ascii_graphic()) {
        return None;
    }
    let (scheme, rest) = uri.split_once("://")?;
    if scheme != "https" && scheme != "http" {
        return None;
    }
    if rest.contains(['#', '\\']) {
        return None;
    }
    let (authority, path) = rest.find(['/', '?']).map_or((rest, "/"), |i| (&rest[..i], &rest[i..]));
    if authority.contains('@') || authority.is_empty() {
        return None;
    }
    let path = path.split('?').next().unwrap_or("/");
    let path = if path.is_empty() { "/" } else { path };
    if path.split('/').any(|s| s == "." || s == "..") || path.contains('%') {
        return None;
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, Some(p.parse::<u16>().ok().filter(|p| *p != 0)?)),
        None => (authority, None),
    };
    let host_ok = host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.') && !host.is_empty();
    if !host_ok || host.bytes().any(|b| b.is_ascii_uppercase()) {
        return None;
    }
    Some(Redirect { scheme: scheme.to_string(), host: host.to_string(), port, path: path.to_string() })
}

/// Whether `uri` may be registered: one of the built-in shapes, or exactly one of
/// `extra` (the operator's `--oauth-redirect-allow`).
pub fn allowed(uri: &str, extra: &[String]) -> bool {
    if extra.iter().any(|e| e == uri) && parse(uri).is_some() {
        return true;
    }
    let Some(r) = parse(uri) else { return false };
    let no_query = !uri.contains('?');
    match (r.scheme.as_str(), r.host.as_str(), r.port) {
        ("https", "chatgpt.com", None) => {
            no_query
                && (r.path == "/connector_platform_oauth_redirect"
                    || r.path.strip_prefix("/connector/oauth/").is_some_and(|id| {
                        !id.is_empty()
                            && id.len() <= 128
                            && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                    }))
        }
        ("https", "claude.ai" | "claude.com", None) => no_query && r.path == "/api/mcp/auth_callback",
        // RFC 8252 §7.3: a loopback redirect with any port (command-line clients pick one).
        ("http", "127.0.0.1" | "localhost", Some(_)) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_allowlist_is_exact() {
        let extra = vec!["https://my.example/cb".to_string()];
        for ok in [
            "https://chatgpt.com/connector/oauth/abc_DEF-123",
            "https://chatgpt.com/connector_platform_oauth_redirect",
            "https://claude.ai/api/mcp/auth_callback",
            "https://claude.com/api/mcp/auth_callback",
            "http://127.0.0.1:33418/callback",
            "http://localhost:6276/oauth/callback?x=1",
            "https://my.example/cb",
        ] {
            assert!(allowed(ok, &extra), "{ok}");
        }
        for bad in [
            "https://chatgpt.com/connector/oauth/a/b",
            "https://chatgpt.com/connector/oauth/",
            "https://chatgpt.com.evil.example/connector_platform_oauth_redirect",
            "https://chatgpt.com:8443/connector_platform_oauth_redirect",
            "http://chatgpt.com/connector_platform_oauth_redirect",
            "https://chatgpt.com/connector_platform_oauth_redirect#x",
            "https://chatgpt.com/connector_platform_oauth_redirect?next=evil",
            "https://evil@chatgpt.com/connector_platform_oauth_redirect",
            "https://claude.ai/api/mcp/auth_callback/../x",
            "https://CLAUDE.ai/api/mcp/auth_callback",
            "http://127.0.0.1/callback",
            "http://127.0.0.2:80/callback",
            "http://[::1]:80/callback",
            "https://my.example/cb2",
            "https://my.example/cb/",
            "javascript:alert(1)",
        ] {
            assert!(!allowed(bad, &extra), "{bad}");
        }
    }
}
