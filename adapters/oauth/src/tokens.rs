//! Tokens: the code exchange (single use, consumed on the first attempt; presented again
//! after it produced a grant, it revokes that grant), refresh with
//! rotation (a reused refresh token revokes its whole grant), revocation (RFC 7009),
//! the resource server's check of an access token, and the operator's grant list.

use crate::authority::{Authority, Refusal, normalize_scope, random_failed};
use crate::grants::Grant;
use crate::secrets;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Grants kept at once; past it the least recently refreshed is revoked.
pub const GRANTS_MAX: usize = 256;
/// Used refresh tokens remembered per grant (to detect reuse).
pub const RETIRED_REFRESH_MAX: usize = 16;

type Form = BTreeMap<String, String>;

impl Authority {
    /// `POST /oauth/token`.
    pub fn token(&mut self, form: &Form, now_ms: u64) -> Result<Value, Refusal> {
        match form.get("grant_type").map(String::as_str) {
            Some("authorization_code") => self.exchange_code(form, now_ms),
            Some("refresh_token") => self.refresh(form, now_ms),
            Some(_) => Err(Refusal::new("unsupported_grant_type", "authorization_code or refresh_token")),
            None => Err(Refusal::new("invalid_request", "grant_type is required")),
        }
    }

    fn exchange_code(&mut self, form: &Form, now_ms: u64) -> Result<Value, Refusal> {
        let get = |k: &str| form.get(k).map(String::as_str);
        let code = get("code").ok_or_else(|| Refusal::new("invalid_request", "code is required"))?;
        // Consumed now, whatever follows: a code is good for one attempt.
        let bad = || Refusal::new("invalid_grant", "the code is invalid, expired, used, or bound to other values");
        let code_sha256 = secrets::sha256_hex(code);
        let Some(entry) = self.codes.remove(&code_sha256) else {
            self.revoke_replayed(&code_sha256)?;
            return Err(bad());
        };
        let r = &entry.request;
        if entry.expires_ms <= now_ms
            || get("client_id") != Some(r.client_id.as_str())
            || get("redirect_uri") != Some(r.redirect_uri.as_str())
            || self.client(&r.client_id).is_none()
        {
            return Err(bad());
        }
        let verifier = get("code_verifier").unwrap_or_default();
        if !secrets::verifier_well_formed(verifier) || !secrets::s256_matches(verifier, &r.code_challenge) {
            return Err(bad());
        }
        if let Some(resource) = get("resource")
            && !self.public.is_resource(resource)
        {
            return Err(Refusal::new("invalid_target", "resource must be this server's MCP endpoint"));
        }
        let (Some(access), Some(refresh), Some(id)) =
            (secrets::token("oat_"), secrets::token("ort_"), secrets::token("grt-"))
        else {
            return Err(random_failed());
        };
        let grant = Grant {
            grant_id: id[..16].to_string(),
            client_id: r.client_id.clone(),
            client_name: r.client_name.clone(),
            scope: r.scope.clone(),
            resource: r.resource.clone(),
            created_ms: now_ms,
            refreshed_ms: now_ms,
            access_sha256: secrets::sha256_hex(&access),
            access_expires_ms: now_ms + self.ttls.access_ms,
            refresh_sha256: secrets::sha256_hex(&refresh),
            refresh_expires_ms: now_ms + self.ttls.refresh_ms,
            retired_refresh_sha256: Vec::new(),
            code_sha256,
        };
        let (grant_id, scope) = (grant.grant_id.clone(), grant.scope.clone());
        self.persist(|f| {
            f.grants.retain(|g| g.refresh_expires_ms > now_ms);
            while f.grants.len() >= GRANTS_MAX {
                let oldest = f.grants.iter().enumerate().min_by_key(|(_, g)| g.refreshed_ms).map(|(i, _)| i);
                f.grants.remove(oldest.unwrap_or(0));
            }
            f.grants.push(grant);
        })?;
        tracing::info!(grant = %grant_id, client = %r.client_id, "OAuth grant issued");
        Ok(self.token_body(&access, &refresh, &scope))
    }

    /// A code presented again after its exchange: the grant it produced (and every token
    /// of it, refreshed or not) is revoked, since whoever holds the code may hold them too.
    fn revoke_replayed(&mut self, code_sha256: &str) -> Result<(), Refusal> {
        let replayed = self.file.grants.iter().find(|g| g.code_sha256 == code_sha256);
        let Some(grant_id) = replayed.map(|g| g.grant_id.clone()) else { return Ok(()) };
        self.persist(|f| f.grants.retain(|g| g.grant_id != grant_id))?;
        tracing::warn!(grant = %grant_id, "a used authorization code was presented again: the grant it produced is revoked");
        Ok(())
    }

    fn refresh(&mut self, form: &Form, now_ms: u64) -> Result<Value, Refusal> {
        let get = |k: &str| form.get(k).map(String::as_str);
        let presented =
            get("refresh_token").ok_or_else(|| Refusal::new("invalid_request", "refresh_token is required"))?;
        let hash = secrets::sha256_hex(presented);
        let bad = || Refusal::new("invalid_grant", "the refresh token is invalid, expired or revoked");
        if let Some(reused) = self.file.grants.iter().find(|g| g.retired_refresh_sha256.contains(&hash)) {
            let grant_id = reused.grant_id.clone();
            self.persist(|f| f.grants.retain(|g| g.grant_id != grant_id))?;
            tracing::warn!(grant = %grant_id, "a used refresh token was presented again: the grant is revoked");
            return Err(bad());
        }
        let index = self.file.grants.iter().position(|g| g.refresh_sha256 == hash).ok_or_else(bad)?;
        let grant = &self.file.grants[index];
        if grant.refresh_expires_ms <= now_ms || get("client_id").is_some_and(|c| c != grant.client_id) {
            return Err(bad());
        }
        if let Some(resource) = get("resource")
            && !self.public.is_resource(resource)
        {
            return Err(Refusal::new("invalid_target", "resource must be this server's MCP endpoint"));
        }
        let scope = match get("scope") {
            None => grant.scope.clone(),
            Some(asked) => {
                let asked =
                    normalize_scope(Some(asked)).ok_or_else(|| Refusal::new("invalid_scope", "unknown scope"))?;
                if !asked.split(' ').all(|s| grant.scope.split(' ').any(|g| g == s)) {
                    return Err(Refusal::new("invalid_scope", "more scope than was granted"));
                }
                asked
            }
        };
        let (Some(access), Some(refresh)) = (secrets::token("oat_"), secrets::token("ort_")) else {
            return Err(random_failed());
        };
        let (access_ms, refresh_ms) = (self.ttls.access_ms, self.ttls.refresh_ms);
        let grant_id = self.persist(|f| {
            let g = &mut f.grants[index];
            g.retired_refresh_sha256.push(std::mem::take(&mut g.refresh_sha256));
            if g.retired_refresh_sha256.len() > RETIRED_REFRESH_MAX {
                g.retired_refresh_sha256.remove(0);
            }
            g.refresh_sha256 = secrets::sha256_hex(&refresh);
            g.refresh_expires_ms = now_ms + refresh_ms;
            g.access_sha256 = secrets::sha256_hex(&access);
            g.access_expires_ms = now_ms + access_ms;
            g.refreshed_ms = now_ms;
            g.grant_id.clone()
        })?;
        tracing::info!(grant = %grant_id, "OAuth tokens refreshed");
        Ok(self.token_body(&access, &refresh, &scope))
    }

    fn token_body(&self, access: &str, refresh: &str, scope: &str) -> Value {
        json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.ttls.access_ms / 1000,
            "refresh_token": refresh,
            "scope": scope,
        })
    }

    /// `POST /oauth/revoke` (RFC 7009): an access or refresh token revokes its whole
    /// grant. Unknown tokens are not an error.
    pub fn revoke_token(&mut self, token: &str) -> Result<(), Refusal> {
        let hash = secrets::sha256_hex(token);
        let found =
            self.file.grants.iter().find(|g| {
                g.access_sha256 == hash || g.refresh_sha256 == hash || g.retired_refresh_sha256.contains(&hash)
            });
        if let Some(id) = found.map(|g| g.grant_id.clone()) {
            self.persist(|f| f.grants.retain(|g| g.grant_id != id))?;
            tracing::info!(grant = %id, "OAuth grant revoked by its client");
        }
        Ok(())
    }

    /// The resource server's check: a live access token issued for our resource.
    pub fn access_ok(&self, token: &str, now_ms: u64) -> bool {
        let hash = secrets::sha256_hex(token);
        let resource = self.public.resource();
        self.file
            .grants
            .iter()
            .any(|g| g.access_sha256 == hash && g.access_expires_ms > now_ms && g.resource == resource)
    }

    /// The operator's view of clients and grants (no secrets, no hashes).
    pub fn grants_list(&self) -> Value {
        let grants: Vec<Value> = self
            .file
            .grants
            .iter()
            .map(|g| {
                json!({
                    "grantId": g.grant_id, "clientId": g.client_id, "clientName": g.client_name,
                    "scope": g.scope, "resource": g.resource, "createdMs": g.created_ms,
                    "refreshedMs": g.refreshed_ms, "refreshExpiresMs": g.refresh_expires_ms,
                })
            })
            .collect();
        let clients: Vec<Value> = self
            .file
            .clients
            .iter()
            .map(|c| json!({ "clientId": c.client_id, "clientName": c.client_name, "redirectUris": c.redirect_uris }))
            .collect();
        json!({ "grants": grants, "clients": clients })
    }

    /// The operator revokes one grant, or all (`None`): at once, on disk too.
    pub fn revoke_grants(&mut self, grant_id: Option<&str>) -> Result<usize, Refusal> {
        let before = self.file.grants.len();
        let removed = self.persist(|f| {
            f.grants.retain(|g| grant_id.is_some_and(|id| g.grant_id != id));
            before - f.grants.len()
        })?;
        if grant_id.is_some() && removed == 0 {
            return Err(Refusal::new("not_found", "no grant with this id"));
        }
        tracing::info!(removed, "OAuth grants revoked by the operator");
        Ok(removed)
    }
}
