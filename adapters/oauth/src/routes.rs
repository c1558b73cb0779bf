//! The OAuth routes: metadata, registration, authorize, consent, token, revocation and
//! the admin API, at the root and again under the public prefix; which paths are theirs.

use crate::server::OAuth;
use crate::{admin, http};
use axum::Router;
use axum::routing::{any, get, post};
use std::sync::Arc;

impl OAuth {
    /// The OAuth routes, at the root and again under the public prefix, if any.
    pub fn router(self: &Arc<OAuth>) -> Router {
        let prefix = self.public.prefix.clone();
        let mut routes = Router::new()
            .route("/.well-known/oauth-protected-resource", get(http::resource_metadata))
            .route("/.well-known/oauth-protected-resource/mcp", get(http::resource_metadata))
            .route("/.well-known/oauth-authorization-server", get(http::server_metadata))
            .route("/oauth/register", post(http::register))
            .route("/oauth/authorize", get(http::authorize))
            .route("/oauth/consent", get(http::consent))
            .route("/oauth/token", post(http::token))
            .route("/oauth/revoke", post(http::revoke))
            .route("/oauth/admin/{verb}", any(admin::admin));
        if !prefix.is_empty() {
            // RFC 9728 and RFC 8414 put the well-known segment before the path.
            routes = routes
                .route(&format!("/.well-known/oauth-protected-resource{prefix}/mcp"), get(http::resource_metadata))
                .route(&format!("/.well-known/oauth-authorization-server{prefix}"), get(http::server_metadata));
        }
        let routes = routes.with_state(self.clone());
        if prefix.is_empty() { routes } else { routes.clone().nest(&prefix, routes) }
    }
}

/// Whether `path` (with the public prefix already removed) is an OAuth route that
/// needs no bearer token (metadata and the endpoints; the admin API checks its own).
pub fn is_open_path(path: &str) -> bool {
    path.starts_with("/.well-known/") || path.starts_with("/oauth/")
}
