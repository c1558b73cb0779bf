//! The resource server's side: what the `/mcp` guard asks of the authorization server
//! ([`edge::guard::AccessTokens`]): its public host and its clients' origins, its own
//! routes (open), its access tokens, and the 401 challenge.

use crate::routes::is_open_path;
use crate::server::OAuth;

/// Origins of the browser-side MCP clients accepted when OAuth is on.
pub const CLIENT_ORIGINS: [&str; 3] = ["https://chatgpt.com", "https://claude.ai", "https://claude.com"];

/// What the `/mcp` guard asks of the authorization server: its public host and clients'
/// origins, its own routes (open), its access tokens and the 401 challenge.
impl edge::guard::AccessTokens for OAuth {
    fn public_host(&self) -> &str {
        &self.public.host
    }

    fn client_origins(&self) -> Vec<String> {
        CLIENT_ORIGINS.iter().map(|o| o.to_string()).collect()
    }

    fn is_own_route(&self, path: &str) -> bool {
        let prefix = self.public.prefix.as_str();
        let path = match path.strip_prefix(prefix) {
            Some(rest) if !prefix.is_empty() && rest.starts_with('/') => rest,
            _ => path,
        };
        is_open_path(path)
    }

    fn accepts(&self, token: &str) -> bool {
        self.access_ok(token)
    }

    fn challenge(&self, token_sent: bool) -> String {
        OAuth::challenge(self, token_sent)
    }
}
