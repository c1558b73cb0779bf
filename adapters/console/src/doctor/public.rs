//! The public-address check of `doctor`: the OAuth metadata the daemon serves names the
//! public address and offers PKCE S256 (only with `--public-url`).

use super::{Check, HEALTH_ANSWER_MS_MAX, METADATA_BYTES_MAX, Reached, Verdict, fail};
use address::PublicUrl;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use serde_json::Value;
use std::time::Duration;

pub(super) async fn check_public(reached: &Reached, mcp_url: &str) -> Check {
    let name = "public address";
    let Reached::Answered(health) = reached else {
        return Check { name, verdict: Verdict::Skip("the daemon check failed first".into()) };
    };
    let Some(issuer) = &health.public_url else {
        return Check {
            name,
            verdict: Verdict::Skip(
                "none (--public-url not given): ChatGPT can reach this daemon only through OpenAI's Secure MCP \
                 Tunnel (docs/connect.md)"
                    .into(),
            ),
        };
    };
    let Ok(public) = PublicUrl::parse(issuer) else {
        return fail(
            name,
            format!("the daemon reports a public address it cannot parse: {issuer}"),
            "restart it with a valid --public-url",
        );
    };
    // Asked over the daemon's own loopback listener with the public Host header: what a
    // client that reaches the public address is told (doctor opens no TLS connections).
    let authority = mcp_url.strip_prefix("http://").and_then(|rest| rest.split('/').next()).unwrap_or_default();
    let origin_path = |url: &str| url.strip_prefix(&public.origin).unwrap_or(url).to_string();
    let resource_doc = get_json(authority, &public.host, &origin_path(&public.resource_metadata())).await;
    let server_path = format!("/.well-known/oauth-authorization-server{}", public.prefix);
    let server_doc = get_json(authority, &public.host, &server_path).await;
    let (resource_doc, server_doc) = match (resource_doc, server_doc) {
        (Ok(r), Ok(s)) => (r, s),
        (Err(e), _) | (_, Err(e)) => {
            return fail(
                name,
                format!("the OAuth metadata for {} cannot be read: {e}", public.host),
                "look at the daemon's log; restart it with --public-url",
            );
        }
    };
    if let Some(problem) = metadata_problem(&public, &resource_doc, &server_doc) {
        return fail(
            name,
            problem,
            "the metadata must name the public address exactly: restart the daemon with the --public-url clients use",
        );
    }
    let found = if public.is_loopback() {
        format!("{} serves consistent OAuth metadata", public.resource())
    } else {
        format!(
            "{} serves consistent OAuth metadata; doctor opens no TLS connections, so check from outside that the \
             address answers: curl -sf {}",
            public.resource(),
            public.resource_metadata()
        )
    };
    Check { name, verdict: Verdict::Pass(found) }
}

/// What is inconsistent between the public address and its two metadata documents.
fn metadata_problem(public: &PublicUrl, resource_doc: &Value, server_doc: &Value) -> Option<String> {
    let text = |doc: &Value, key: &str| doc.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    let issuer = public.issuer();
    if text(resource_doc, "resource") != public.resource() {
        return Some(format!(
            "the protected-resource metadata names {:?}, not {}",
            text(resource_doc, "resource"),
            public.resource()
        ));
    }
    let servers = resource_doc.get("authorization_servers").and_then(Value::as_array).cloned().unwrap_or_default();
    if !servers.iter().any(|s| s.as_str() == Some(issuer.as_str())) {
        return Some(format!("the protected-resource metadata does not name the authorization server {issuer}"));
    }
    if text(server_doc, "issuer") != issuer {
        return Some(format!(
            "the authorization server metadata names issuer {:?}, not {issuer}",
            text(server_doc, "issuer")
        ));
    }
    for key in ["authorization_endpoint", "token_endpoint", "registration_endpoint"] {
        if !text(server_doc, key).starts_with(&issuer) {
            return Some(format!("{key} {:?} is not under {issuer}", text(server_doc, key)));
        }
    }
    let s256 = server_doc
        .get("code_challenge_methods_supported")
        .and_then(Value::as_array)
        .is_some_and(|m| m.iter().any(|v| v == "S256"));
    (!s256).then(|| "the authorization server metadata does not offer PKCE S256".to_string())
}

/// GET `path` from the daemon at `authority` (loopback) with `Host: host`, as JSON.
async fn get_json(authority: &str, host: &str, path: &str) -> anyhow::Result<Value> {
    let fetch = async {
        let stream = tokio::net::TcpStream::connect(authority).await?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        let request = hyper::Request::get(path).header("host", host).body(Full::new(Bytes::new()))?;
        let response = sender.send_request(request).await?;
        let status = response.status();
        let body = http_body_util::Limited::new(response.into_body(), METADATA_BYTES_MAX)
            .collect()
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .to_bytes();
        anyhow::ensure!(status == hyper::StatusCode::OK, "{path} answered HTTP {status}");
        Ok::<Value, anyhow::Error>(serde_json::from_slice(&body)?)
    };
    tokio::time::timeout(Duration::from_millis(HEALTH_ANSWER_MS_MAX), fetch)
        .await
        .map_err(|_| anyhow::anyhow!("no answer within {HEALTH_ANSWER_MS_MAX} ms"))?
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metadata_must_name_the_public_address() {
        let public = PublicUrl::parse("https://orch.example.com").expect("public url");
        let resource = json!({ "resource": "https://orch.example.com/mcp", "authorization_servers": ["https://orch.example.com"] });
        let server = json!({
            "issuer": "https://orch.example.com",
            "authorization_endpoint": "https://orch.example.com/oauth/authorize",
            "token_endpoint": "https://orch.example.com/oauth/token",
            "registration_endpoint": "https://orch.example.com/oauth/register",
            "code_challenge_methods_supported": ["S256"],
        });
        assert_eq!(metadata_problem(&public, &resource, &server), None);
        let wrong_resource =
            json!({ "resource": "http://127.0.0.1:7411/mcp", "authorization_servers": ["https://orch.example.com"] });
        assert!(metadata_problem(&public, &wrong_resource, &server).is_some_and(|p| p.contains("127.0.0.1")));
        let mut foreign = server.clone();
        foreign["token_endpoint"] = json!("https://evil.example/token");
        assert!(metadata_problem(&public, &resource, &foreign).is_some_and(|p| p.starts_with("token_endpoint")));
        let mut plain = server.clone();
        plain["code_challenge_methods_supported"] = json!(["plain"]);
        assert!(metadata_problem(&public, &resource, &plain).is_some_and(|p| p.contains("S256")));
    }
}
