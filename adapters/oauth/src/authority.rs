//! The authorization server's state and rules, with time as an argument: registration,
//! authorization requests waiting for the operator, approval, and the one-time codes.
//! Token issue, refresh, revocation and checks are in `tokens.rs`. No HTTP here.

use crate::form::encode;
use crate::grants::{Client, GrantsBackend, GrantsFile};
use crate::rate::{
    AUTHORIZE_REQUEST_INTERVAL_MS, AUTHORIZE_REQUESTS_BURST, Rate, TOKEN_REQUEST_INTERVAL_MS, TOKEN_REQUESTS_BURST,
    UNKNOWN_CLIENT_KEY,
};
use crate::redirect;
use crate::secrets;
use address::PublicUrl;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Scope of every tool call.
pub const SCOPE_MCP: &str = "mcp";
/// Scopes the authorization server knows (`offline_access` is metadata only: a refresh
/// token is always issued).
pub const SCOPES_SUPPORTED: [&str; 2] = [SCOPE_MCP, "offline_access"];
/// Registered clients kept at once; past it registration is refused (oldest clients
/// without a grant are forgotten first).
pub const CLIENTS_MAX: usize = 64;
/// Registrations accepted per [`REGISTRATION_WINDOW_MS`] (all callers together).
pub const REGISTRATIONS_PER_WINDOW_MAX: usize = 10;
/// The registration rate window.
pub const REGISTRATION_WINDOW_MS: u64 = 60_000;
/// Authorization requests waiting for the operator at once.
pub const PENDING_MAX: usize = 16;
/// Unexchanged codes at once.
pub const CODES_MAX: usize = 64;
/// Redirect URIs one client may register.
pub const REDIRECT_URIS_MAX: usize = 8;
/// Longest `client_name`, in characters.
pub const CLIENT_NAME_CHARS_MAX: usize = 100;
/// Longest `state`, in bytes. `state` is optional (PKCE S256 is not: it is what protects
/// the redirect from cross-site request forgery); when sent it comes back verbatim.
pub const STATE_BYTES_MAX: usize = 1_024;
/// `token_endpoint_auth_method` values a registration may ask for. A client asking for a
/// secret (`client_secret_post`, `client_secret_basic`) is registered as a public client
/// and told so (`none` in the answer, RFC 7591 §3.2.1): it gets no secret.
pub const AUTH_METHODS_REGISTERED_AS_NONE: [&str; 3] = ["none", "client_secret_post", "client_secret_basic"];

/// Lifetimes, in milliseconds (test-only flags shorten them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ttls {
    /// An authorization code: about a minute.
    pub code_ms: u64,
    /// An access token: about an hour.
    pub access_ms: u64,
    /// A refresh token, renewed on every refresh: 30 days.
    pub refresh_ms: u64,
    /// An authorization request waiting for the operator: 10 minutes.
    pub pending_ms: u64,
}

impl Default for Ttls {
    fn default() -> Ttls {
        Ttls { code_ms: 60_000, access_ms: 3_600_000, refresh_ms: 30 * 86_400_000, pending_ms: 600_000 }
    }
}

/// An OAuth error answer (RFC 6749 §5.2, RFC 7591 §3.2.2): `error` and a description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The RFC's error code.
    pub error: &'static str,
    /// A sentence for the developer (never a secret).
    pub description: String,
}

impl Refusal {
    /// A refusal.
    pub fn new(error: &'static str, description: impl Into<String>) -> Refusal {
        Refusal { error, description: description.into() }
    }

    /// Its JSON body.
    pub fn body(&self) -> Value {
        json!({ "error": self.error, "error_description": self.description })
    }
}

/// Why `/oauth/authorize` failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthorizeError {
    /// The client or redirect is not trusted: an error page, never a redirect.
    Page(String),
    /// A redirect back to the client with `error`, `state` and `iss`.
    Redirect(String),
}

/// A validated authorization request.
#[derive(Clone, Debug)]
pub struct Request {
    pub client_id: String,
    pub client_name: String,
    pub redirect_uri: String,
    pub state: Option<String>,
    pub code_challenge: String,
    pub resource: String,
    pub scope: String,
}

/// Where an operator's decision stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Waiting,
    Approved,
    Denied,
}

/// An authorization request waiting for (or decided by) the operator.
#[derive(Clone, Debug)]
pub struct Pending {
    /// Shown on the consent page and typed by the operator.
    pub human_code: String,
    /// SHA-256 of the browser's handle (the consent page's URL holds the handle).
    pub handle_sha256: String,
    pub request: Request,
    pub created_ms: u64,
    pub decision: Decision,
}

/// A code issued and not yet exchanged, bound to its request.
#[derive(Clone, Debug)]
pub struct Code {
    pub request: Request,
    pub expires_ms: u64,
}

/// What the consent page's next poll shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Poll {
    /// Still waiting: the page again.
    Waiting { human_code: String, client_name: String, redirect_host: String, scope: String },
    /// Decided: redirect the browser here.
    Redirect(String),
    /// Unknown or expired handle.
    Gone,
}

/// The authorization server.
#[derive(Debug)]
pub struct Authority {
    pub(crate) public: PublicUrl,
    pub(crate) redirect_allow: Vec<String>,
    pub(crate) ttls: Ttls,
    /// Where `file` is kept (the data directory's file, or the database).
    pub(crate) backend: Box<dyn GrantsBackend>,
    /// Durable: clients and grants.
    pub(crate) file: GrantsFile,
    /// By the hash of the browser handle.
    pub(crate) pending: BTreeMap<String, Pending>,
    /// By the hash of the code.
    pub(crate) codes: BTreeMap<String, Code>,
    /// Times of recent registrations (the rate window).
    pub(crate) registrations: Vec<u64>,
    /// `/oauth/token`'s budgets, per client.
    pub(crate) token_rate: Rate,
    /// `/oauth/authorize`'s budgets, per client.
    pub(crate) authorize_rate: Rate,
}

impl Authority {
    /// An authority on `file` (already loaded from `backend`).
    pub fn new(
        public: PublicUrl,
        redirect_allow: Vec<String>,
        ttls: Ttls,
        backend: Box<dyn GrantsBackend>,
        file: GrantsFile,
    ) -> Self {
        Authority {
            public,
            redirect_allow,
            ttls,
            backend,
            file,
            pending: BTreeMap::new(),
            codes: BTreeMap::new(),
            registrations: Vec::new(),
            token_rate: Rate::new(TOKEN_REQUESTS_BURST, TOKEN_REQUEST_INTERVAL_MS),
            authorize_rate: Rate::new(AUTHORIZE_REQUESTS_BURST, AUTHORIZE_REQUEST_INTERVAL_MS),
        }
    }

    /// The rate budget a request naming `client_id` counts under: its own when it names a
    /// registered client, the shared one of unknown clients otherwise.
    pub(crate) fn rate_key(&self, client_id: Option<&str>) -> String {
        match client_id.and_then(|id| self.client(id)) {
            Some(client) => client.client_id.clone(),
            None => UNKNOWN_CLIENT_KEY.to_string(),
        }
    }

    /// Counts a `/oauth/token` request with this form: `Err(wait_ms)` past its budget. A
    /// refresh without `client_id` counts under the client its refresh token belongs to.
    pub fn admit_token(&mut self, form: &BTreeMap<String, String>, now_ms: u64) -> Result<(), u64> {
        let named = form.get("client_id").map(String::as_str);
        let by_refresh = form.get("refresh_token").and_then(|t| {
            let hash = secrets::sha256_hex(t);
            let grant =
                self.file.grants.iter().find(|g| g.refresh_sha256 == hash || g.retired_refresh_sha256.contains(&hash));
            grant.map(|g| g.client_id.clone())
        });
        let key = self.rate_key(named.or(by_refresh.as_deref()));
        self.token_rate.admit(&key, now_ms)
    }

    /// Counts a `/oauth/authorize` request with this query: `Err(wait_ms)` past its budget.
    pub fn admit_authorize(&mut self, query: &BTreeMap<String, String>, now_ms: u64) -> Result<(), u64> {
        let key = self.rate_key(query.get("client_id").map(String::as_str));
        self.authorize_rate.admit(&key, now_ms)
    }

    /// The public URL.
    pub fn public(&self) -> &PublicUrl {
        &self.public
    }

    /// Applies `change` to the durable state and writes it; on a failed write (fenced by a
    /// newer leader's epoch included) the state is put back and the caller gets
    /// `server_error`.
    pub(crate) fn persist<T>(&mut self, change: impl FnOnce(&mut GrantsFile) -> T) -> Result<T, Refusal> {
        let before = self.file.clone();
        let out = change(&mut self.file);
        if let Err(e) = self.backend.save(&self.file) {
            tracing::error!(code = e.code(), error = %e, "cannot write the OAuth grants; the change is undone");
            self.file = before;
            return Err(Refusal::new("server_error", "the authorization server cannot store its state"));
        }
        Ok(out)
    }

    /// RFC 7591 registration of a public client.
    pub fn register(&mut self, body: &Value, now_ms: u64) -> Result<Value, Refusal> {
        let meta = |d: &str| Refusal::new("invalid_client_metadata", d);
        let obj = body.as_object().ok_or_else(|| meta("the body must be a JSON object"))?;
        let uris = obj
            .get("redirect_uris")
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty() && a.len() <= REDIRECT_URIS_MAX)
            .ok_or_else(|| Refusal::new("invalid_redirect_uri", "redirect_uris: 1 to 8 URIs"))?;
        let mut redirect_uris = Vec::new();
        for uri in uris {
            let uri = uri.as_str().ok_or_else(|| Refusal::new("invalid_redirect_uri", "redirect_uris: strings"))?;
            if !redirect::allowed(uri, &self.redirect_allow) {
                return Err(Refusal::new(
                    "invalid_redirect_uri",
                    "redirect URI not allowed (ChatGPT, Claude, loopback, or --oauth-redirect-allow)",
                ));
            }
            redirect_uris.push(uri.to_string());
        }
        let auth_method = match obj.get("token_endpoint_auth_method") {
            None => "none",
            Some(Value::String(m)) if AUTH_METHODS_REGISTERED_AS_NONE.contains(&m.as_str()) => m.as_str(),
            Some(_) => {
                return Err(meta(
                    "only public clients: token_endpoint_auth_method none (client_secret_post and \
                     client_secret_basic are registered as none)",
                ));
            }
        };
        let strings = |key: &str, default: &[&str]| -> Result<Vec<String>, Refusal> {
            match obj.get(key) {
                None => Ok(default.iter().map(|s| s.to_string()).collect()),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|v| v.as_str().map(String::from).ok_or_else(|| meta(&format!("{key}: strings"))))
                    .collect(),
                Some(_) => Err(meta(&format!("{key}: an array"))),
            }
        };
        let grant_types = strings("grant_types", &["authorization_code", "refresh_token"])?;
        if grant_types.iter().any(|g| g != "authorization_code" && g != "refresh_token") {
            return Err(meta("grant_types: authorization_code and refresh_token only"));
        }
        if strings("response_types", &["code"])?.iter().any(|r| r != "code") {
            return Err(meta("response_types: code only"));
        }
        let name = match obj.get("client_name") {
            None => "unnamed client".to_string(),
            Some(Value::String(s)) if s.chars().count() <= CLIENT_NAME_CHARS_MAX && !s.trim().is_empty() => {
                s.chars().filter(|c| !c.is_control()).collect()
            }
            Some(_) => return Err(meta("client_name: a string of 1 to 100 characters")),
        };
        self.registrations.retain(|t| now_ms.saturating_sub(*t) < REGISTRATION_WINDOW_MS);
        if self.registrations.len() >= REGISTRATIONS_PER_WINDOW_MAX {
            return Err(Refusal::new("temporarily_unavailable", "too many registrations; try again in a minute"));
        }
        if self.file.clients.len() >= CLIENTS_MAX {
            // Forget the oldest client that holds no grant, if any.
            let granted: Vec<&str> = self.file.grants.iter().map(|g| g.client_id.as_str()).collect();
            let idle = self.file.clients.iter().position(|c| !granted.contains(&c.client_id.as_str()));
            let Some(idle) = idle else {
                return Err(Refusal::new("temporarily_unavailable", "too many registered clients"));
            };
            let forgotten = self.file.clients[idle].client_id.clone();
            self.persist(|f| f.clients.retain(|c| c.client_id != forgotten))?;
        }
        let client_id = secrets::token("cli_").ok_or_else(random_failed)?[..36].to_string();
        let client =
            Client { client_id: client_id.clone(), client_name: name.clone(), redirect_uris, created_ms: now_ms };
        let uris = client.redirect_uris.clone();
        self.persist(|f| f.clients.push(client))?;
        self.registrations.push(now_ms);
        // RFC 7591 §3.2.1: the server may register other metadata than asked and says so in
        // its answer; a client that asked for a secret gets none and must not send one.
        tracing::info!(client = %client_id, name = %name, asked = auth_method, "OAuth client registered (public)");
        Ok(json!({
            "client_id": client_id,
            "client_id_issued_at": now_ms / 1000,
            "client_name": name,
            "redirect_uris": uris,
            "grant_types": grant_types,
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }))
    }

    /// The client with this id.
    pub fn client(&self, client_id: &str) -> Option<&Client> {
        self.file.clients.iter().find(|c| c.client_id == client_id)
    }

    /// `/oauth/authorize`: validates the request and files it for the operator. Returns
    /// the browser's handle (the consent page polls with it).
    pub fn authorize(&mut self, q: &BTreeMap<String, String>, now_ms: u64) -> Result<String, AuthorizeError> {
        self.expire(now_ms);
        let get = |k: &str| q.get(k).map(String::as_str);
        let client = get("client_id").and_then(|id| self.client(id)).cloned();
        let Some(client) = client else {
            return Err(AuthorizeError::Page("unknown client: register it first".into()));
        };
        let Some(redirect_uri) = get("redirect_uri").filter(|r| client.redirect_uris.iter().any(|u| u == r)) else {
            return Err(AuthorizeError::Page("the redirect_uri is not one this client registered".into()));
        };
        let state = get("state").map(String::from);
        if state.as_ref().is_some_and(|s| s.len() > STATE_BYTES_MAX) {
            return Err(AuthorizeError::Page("state is too long".into()));
        }
        let back = |error: &str, description: &str| {
            AuthorizeError::Redirect(self.redirect_url(
                redirect_uri,
                state.as_deref(),
                &[("error", error), ("error_description", description)],
            ))
        };
        if get("response_type") != Some("code") {
            return Err(back("unsupported_response_type", "response_type must be code"));
        }
        match (get("code_challenge"), get("code_challenge_method")) {
            (Some(c), Some("S256")) if secrets::challenge_well_formed(c) => {}
            (Some(_), Some("S256")) => return Err(back("invalid_request", "code_challenge is not an S256 challenge")),
            _ => return Err(back("invalid_request", "PKCE with code_challenge_method=S256 is required")),
        }
        match get("resource") {
            Some(r) if self.public.is_resource(r) => {}
            _ => return Err(back("invalid_target", "resource must be this server's MCP endpoint")),
        }
        let scope = match normalize_scope(get("scope")) {
            Some(scope) => scope,
            None => return Err(back("invalid_scope", "unknown scope")),
        };
        if self.pending.values().filter(|p| p.decision == Decision::Waiting).count() >= PENDING_MAX {
            return Err(back("temporarily_unavailable", "too many authorization requests are waiting"));
        }
        let (Some(handle), Some(human_code)) = (secrets::token("req_"), secrets::human_code()) else {
            return Err(back("server_error", "no randomness"));
        };
        let request = Request {
            client_id: client.client_id.clone(),
            client_name: client.client_name.clone(),
            redirect_uri: redirect_uri.to_string(),
            state,
            code_challenge: get("code_challenge").unwrap_or_default().to_string(),
            resource: self.public.resource(),
            scope,
        };
        let handle_sha256 = secrets::sha256_hex(&handle);
        // No code in the log: whoever reads it must not be able to approve by it.
        tracing::info!(client = %client.client_id, "OAuth authorization waiting for the operator");
        self.pending.insert(
            handle_sha256.clone(),
            Pending { human_code, handle_sha256, request, created_ms: now_ms, decision: Decision::Waiting },
        );
        Ok(handle)
    }

    /// The consent page's poll with the browser's handle.
    pub fn poll(&mut self, handle: &str, now_ms: u64) -> Poll {
        self.expire(now_ms);
        let key = secrets::sha256_hex(handle);
        let Some(p) = self.pending.get(&key) else { return Poll::Gone };
        match p.decision {
            Decision::Waiting => Poll::Waiting {
                human_code: p.human_code.clone(),
                client_name: p.request.client_name.clone(),
                redirect_host: redirect::parse(&p.request.redirect_uri).map(|r| r.host).unwrap_or_default(),
                scope: p.request.scope.clone(),
            },
            Decision::Denied => {
                let p = self.pending.remove(&key).expect("looked up above");
                let r = &p.request;
                let params = [("error", "access_denied"), ("error_description", "the operator denied the request")];
                Poll::Redirect(self.redirect_url(&r.redirect_uri, r.state.as_deref(), &params))
            }
            Decision::Approved => {
                let Some(code) = secrets::token("oac_") else { return Poll::Gone };
                let p = self.pending.remove(&key).expect("looked up above");
                self.codes.retain(|_, c| c.expires_ms > now_ms);
                while self.codes.len() >= CODES_MAX {
                    self.codes.pop_first();
                }
                let url = self.redirect_url(&p.request.redirect_uri, p.request.state.as_deref(), &[("code", &code)]);
                self.codes.insert(
                    secrets::sha256_hex(&code),
                    Code { request: p.request, expires_ms: now_ms + self.ttls.code_ms },
                );
                Poll::Redirect(url)
            }
        }
    }

    /// The operator's decision on the request showing `human_code`.
    pub fn decide(&mut self, human_code: &str, approve: bool, now_ms: u64) -> Result<(), Refusal> {
        self.expire(now_ms);
        let wanted = secrets::normalize_human_code(human_code);
        let found = self.pending.values_mut().find(|p| p.decision == Decision::Waiting && p.human_code == wanted);
        let Some(p) = found else {
            return Err(Refusal::new("not_found", "no waiting authorization request shows this code"));
        };
        p.decision = if approve { Decision::Approved } else { Decision::Denied };
        tracing::info!(client = %p.request.client_id, approve, "OAuth request decided by the operator");
        Ok(())
    }

    /// The waiting requests, for the operator.
    pub fn pending_list(&mut self, now_ms: u64) -> Value {
        self.expire(now_ms);
        let items: Vec<Value> = self
            .pending
            .values()
            .filter(|p| p.decision == Decision::Waiting)
            .map(|p| {
                json!({
                    "code": p.human_code,
                    "clientId": p.request.client_id,
                    "clientName": p.request.client_name,
                    "selfRegistered": true,
                    "redirectHost": redirect::parse(&p.request.redirect_uri).map(|r| r.host).unwrap_or_default(),
                    "scope": p.request.scope,
                    "ageMs": now_ms.saturating_sub(p.created_ms),
                })
            })
            .collect();
        json!({ "pending": items })
    }

    /// Drops requests past their lifetime.
    pub(crate) fn expire(&mut self, now_ms: u64) {
        let ttl = self.ttls.pending_ms;
        self.pending.retain(|_, p| now_ms.saturating_sub(p.created_ms) < ttl);
    }

    /// `redirect_uri` with `params`, `state` and `iss` (RFC 9207: on every redirect).
    pub(crate) fn redirect_url(&self, redirect_uri: &str, state: Option<&str>, params: &[(&str, &str)]) -> String {
        let mut url = redirect_uri.to_string();
        let mut sep = if url.contains('?') { '&' } else { '?' };
        let issuer = self.public.issuer();
        let all = params.iter().copied().chain(state.map(|s| ("state", s))).chain([("iss", issuer.as_str())]);
        for (k, v) in all {
            url.push(sep);
            url.push_str(k);
            url.push('=');
            url.push_str(&encode(v));
            sep = '&';
        }
        url
    }
}

/// `scope` as asked (absent: `mcp`), known scopes only, deduplicated and ordered.
pub fn normalize_scope(scope: Option<&str>) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for s in scope.unwrap_or(SCOPE_MCP).split(' ').filter(|s| !s.is_empty()) {
        if !SCOPES_SUPPORTED.contains(&s) {
            return None;
        }
        if !out.contains(&s) {
            out.push(s);
        }
    }
    if !out.contains(&SCOPE_MCP) {
        out.insert(0, SCOPE_MCP);
    }
    out.sort_unstable();
    Some(out.join(" "))
}

pub(crate) fn random_failed() -> Refusal {
    Refusal::new("server_error", "the OS random source failed")
}
