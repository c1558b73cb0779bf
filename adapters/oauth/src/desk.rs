//! The authorization server's operator side for the executor bridge: the bridge's
//! [`GrantDesk`], so that the extension's dashboard lists waiting requests and grants,
//! approves, denies and revokes (as `orchestrator oauth …` does over the admin API). It
//! hands out codes shown on consent pages, names, hosts, scopes and times; never a
//! token, hash or browser handle.

use crate::authority::{Decision, Refusal};
use crate::redirect;
use crate::server::{OAuth, now_ms};
use caller_protocol::ErrorOut;
use executor_protocol::{GrantAction, GrantDesk, OAuthGrantOut, OAuthPendingOut, OAuthRequestOut, oauth_codes};

fn scopes(scope: &str) -> Vec<String> {
    scope.split(' ').filter(|s| !s.is_empty()).map(String::from).collect()
}

/// The refusal as the operator channel's typed error.
fn refused(refusal: Refusal) -> ErrorOut {
    let code = if refusal.error == "not_found" { oauth_codes::OAUTH_NOT_FOUND } else { oauth_codes::OAUTH_STORE };
    ErrorOut::new(code, &refusal.description)
}

impl GrantDesk for OAuth {
    fn pending(&self) -> OAuthPendingOut {
        let now = now_ms();
        let mut authority = self.authority();
        authority.expire(now);
        let ttl = authority.ttls.pending_ms;
        let mut pending: Vec<OAuthRequestOut> = authority
            .pending
            .values()
            .filter(|p| p.decision == Decision::Waiting)
            .map(|p| OAuthRequestOut {
                code: p.human_code.clone(),
                client_name: p.request.client_name.clone(),
                self_registered: true,
                redirect_host: redirect::parse(&p.request.redirect_uri).map(|r| r.host).unwrap_or_default(),
                scopes: scopes(&p.request.scope),
                expires_at_ms: p.created_ms.saturating_add(ttl),
            })
            .collect();
        pending.sort_by_key(|p| p.expires_at_ms);
        let grants = authority
            .file
            .grants
            .iter()
            .map(|g| OAuthGrantOut {
                grant_id: g.grant_id.clone(),
                client_name: g.client_name.clone(),
                scopes: scopes(&g.scope),
                created_at_ms: g.created_ms,
                last_used_at_ms: g.refreshed_ms,
            })
            .collect();
        OAuthPendingOut { enabled: true, pending, grants }
    }

    fn perform(&self, action: &GrantAction) -> Result<(), ErrorOut> {
        let mut authority = self.authority();
        match action {
            GrantAction::Approve(code) => authority.decide(code.as_str(), true, now_ms()).map_err(refused),
            GrantAction::Deny(code) => authority.decide(code.as_str(), false, now_ms()).map_err(refused),
            GrantAction::Revoke(grant) => authority.revoke_grants(Some(grant.as_str())).map(|_| ()).map_err(refused),
        }
    }
}
