//! The consent and error pages: escaped HTML, no script, no form (the operator decides
//! on the loopback side, so the page has nothing to forge), framing forbidden, never
//! cached. The waiting page reloads itself until the operator decides.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Seconds between the waiting page's reloads.
pub const CONSENT_REFRESH_S: u64 = 2;

/// HTML-escapes `text`.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The headers every OAuth page and JSON answer carries.
pub fn harden(response: &mut Response) {
    let h = response.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}

fn html(status: StatusCode, title: &str, body: &str, refresh: Option<&str>) -> Response {
    let refresh = refresh
        .map(|url| format!("<meta http-equiv=\"refresh\" content=\"{CONSENT_REFRESH_S};url={}\">", escape(url)))
        .unwrap_or_default();
    let page = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">{refresh}<title>{}</title>\
         <style>body{{font-family:system-ui,sans-serif;max-width:36em;margin:3em auto;line-height:1.5}}\
         .code{{font:700 2em monospace;letter-spacing:.1em}}</style></head><body>{body}</body></html>",
        escape(title)
    );
    let mut response =
        (status, [(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"))], page).into_response();
    harden(&mut response);
    response
}

/// The waiting page: who asks, where the answer goes, the code the operator approves.
pub fn consent(human_code: &str, client_name: &str, redirect_host: &str, scope: &str, poll_url: &str) -> Response {
    let body = format!(
        "<h1>Connect to the orchestrator?</h1>\
         <p><b>{}</b> (self-registered; the name is the client's own claim) asks to use this orchestrator's tools.</p>\
         <p>The answer goes to <b>{}</b>. Scopes: <b>{}</b>.</p>\
         <p>On the machine that runs the orchestrator, check that this is your connection, then approve it:</p>\
         <p class=\"code\" id=\"human-code\">{}</p>\
         <p><code>orchestrator oauth approve {}</code></p>\
         <p>This page goes on by itself once the request is approved (it expires after 10 minutes). \
         If you did not start this, deny it with <code>orchestrator oauth deny {}</code> or let it expire.</p>",
        escape(client_name),
        escape(redirect_host),
        escape(scope),
        escape(human_code),
        escape(human_code),
        escape(human_code),
    );
    html(StatusCode::OK, "Approve the connection", &body, Some(poll_url))
}

/// An error that cannot be sent back to the client (unknown client, unregistered
/// redirect, expired request): a page only.
pub fn error(status: StatusCode, message: &str) -> Response {
    let body = format!("<h1>Cannot continue</h1><p>{}</p>", escape(message));
    html(status, "Authorization error", &body, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped() {
        assert_eq!(escape("<script>\"x\"&'"), "&lt;script&gt;&quot;x&quot;&amp;&#39;");
    }
}
