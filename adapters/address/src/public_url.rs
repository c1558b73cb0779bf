//! `--public-url`: the daemon's public address, parsed strictly. It is the issuer, the
//! base of every endpoint and of the protected resource `<public>/mcp`; it is never
//! derived from a request's `Host` or `X-Forwarded-*`.

/// Why `--public-url` is refused: the value and what is accepted instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad --public-url {0}")]
pub struct PublicUrlError(pub String);

impl PublicUrlError {
    /// A stable code for the error (the OAuth server's, which it stops).
    pub fn code(&self) -> &'static str {
        "OAUTH_PUBLIC_URL"
    }
}

/// A parsed public URL: `https://HOST[:PORT][/PREFIX]`, or loopback over plain HTTP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicUrl {
    /// `https://host[:port]` (or `http://127.0.0.1:port`), lowercase, no trailing slash.
    pub origin: String,
    /// The host name alone, lowercase (what `Host` must name for the metadata).
    pub host: String,
    /// `""` or `/a/b`: the path the front proxy serves the daemon under.
    pub prefix: String,
}

impl PublicUrl {
    /// Parses `text`; anything but an https URL, or http on 127.0.0.1/localhost with a
    /// port, is refused with a sentence saying what is accepted.
    pub fn parse(text: &str) -> Result<PublicUrl, PublicUrlError> {
        let bad = |why: &str| PublicUrlError(format!("{text:?}: {why}"));
        let (scheme, rest) = if let Some(rest) = text.strip_prefix("https://") {
            ("https", rest)
        } else if let Some(rest) = text.strip_prefix("http://") {
            ("http", rest)
        } else {
            return Err(bad("must start with https:// (or http://127.0.0.1:PORT, http://localhost:PORT)"));
        };
        if rest.contains(['?', '#', '@', '\\', ' ']) {
            return Err(bad("no query, fragment, user info, backslash or space"));
        }
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) => {
                let port: u16 = p.parse().map_err(|_| bad("the port must be a number from 1 to 65535"))?;
                if port == 0 {
                    return Err(bad("the port must be a number from 1 to 65535"));
                }
                (h, Some(port))
            }
            None => (authority, None),
        };
        let host = host.to_ascii_lowercase();
        let host_ok = !host.is_empty()
            && host.len() <= 253
            && host
                .split('.')
                .all(|l| !l.is_empty() && l.len() <= 63 && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
        if !host_ok {
            return Err(bad("the host must be a DNS name or an IPv4 address"));
        }
        if scheme == "http" && (!(host == "127.0.0.1" || host == "localhost") || port.is_none()) {
            return Err(bad("plain http is accepted only for http://127.0.0.1:PORT or http://localhost:PORT"));
        }
        let prefix = path.trim_end_matches('/');
        if !prefix.is_empty() {
            let segments_ok = prefix[1..].split('/').all(|s| {
                !s.is_empty()
                    && s != "."
                    && s != ".."
                    && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~'))
            });
            if !segments_ok {
                return Err(bad("the path prefix must be plain segments (letters, digits, - _ . ~)"));
            }
            if prefix.starts_with("/oauth") || prefix.starts_with("/.well-known") || prefix.starts_with("/mcp") {
                return Err(bad("the path prefix must not start with /oauth, /.well-known or /mcp"));
            }
        }
        let origin = match port {
            Some(p) if !(scheme == "https" && p == 443) => format!("{scheme}://{host}:{p}"),
            _ => format!("{scheme}://{host}"),
        };
        Ok(PublicUrl { origin, host, prefix: prefix.to_string() })
    }

    /// The issuer (RFC 8414): the origin and prefix.
    pub fn issuer(&self) -> String {
        format!("{}{}", self.origin, self.prefix)
    }

    /// The canonical protected resource (RFC 8707 / RFC 9728): `<public>/mcp`.
    pub fn resource(&self) -> String {
        format!("{}/mcp", self.issuer())
    }

    /// An endpoint's public URL, e.g. `endpoint("/oauth/token")`.
    pub fn endpoint(&self, path: &str) -> String {
        format!("{}{path}", self.issuer())
    }

    /// The protected-resource metadata URL the 401 challenge names.
    pub fn resource_metadata(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource{}/mcp", self.origin, self.prefix)
    }

    /// Whether `resource` names our resource: exact, with the scheme and host compared
    /// without regard to case (they are case-insensitive in URLs).
    pub fn is_resource(&self, resource: &str) -> bool {
        let ours = self.resource();
        let split = |u: &str| -> Option<(String, String)> {
            let (scheme, rest) = u.split_once("://")?;
            let (authority, path) = rest.find('/').map_or((rest, ""), |i| (&rest[..i], &rest[i..]));
            Some((format!("{}://{}", scheme.to_ascii_lowercase(), authority.to_ascii_lowercase()), path.to_string()))
        };
        matches!((split(&ours), split(resource)), (Some(a), Some(b)) if a == b)
    }

    /// Whether the public URL is itself on loopback (local clients and tests).
    pub fn is_loopback(&self) -> bool {
        self.host == "127.0.0.1" || self.host == "localhost"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_and_refused() {
        let p = PublicUrl::parse("https://Orch.Example.com/").expect("https");
        assert_eq!((p.origin.as_str(), p.prefix.as_str()), ("https://orch.example.com", ""));
        assert_eq!(p.resource(), "https://orch.example.com/mcp");
        assert_eq!(p.resource_metadata(), "https://orch.example.com/.well-known/oauth-protected-resource/mcp");
        let p = PublicUrl::parse("https://h.example:8443/team/orch").expect("prefix");
        assert_eq!(p.resource(), "https://h.example:8443/team/orch/mcp");
        assert_eq!(p.resource_metadata(), "https://h.example:8443/.well-known/oauth-protected-resource/team/orch/mcp");
        assert!(p.is_resource("HTTPS://H.example:8443/team/orch/mcp"));
        assert!(!p.is_resource("https://h.example:8443/team/orch/MCP"));
        assert_eq!(PublicUrl::parse("https://h.example:443").expect("443").origin, "https://h.example");
        assert!(PublicUrl::parse("http://127.0.0.1:7411").expect("loopback").is_loopback());
        assert!(PublicUrl::parse("http://localhost:7411").is_ok());
        for bad in [
            "http://orch.example.com",
            "http://127.0.0.1",
            "ftp://x",
            "https://",
            "https://a@b.example",
            "https://h.example/?q",
            "https://h.example/../x",
            "https://h.example:0",
            "https://h.example/oauth",
            "orch.example.com",
        ] {
            assert_eq!(PublicUrl::parse(bad).map_err(|e| e.code()), Err("OAUTH_PUBLIC_URL"), "{bad}");
        }
    }
}
