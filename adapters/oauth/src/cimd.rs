//! The seam for Client ID Metadata Documents (CIMD, the registration MCP 2026-07-28
//! prefers): a `client_id` that is an HTTPS URL whose document the server fetches.
//!
//! Not built: ChatGPT offers CIMD, DCR and static clients and lets the app creator pick
//! DCR (developers.openai.com/apps-sdk/build/auth); Claude registers with DCR or CIMD
//! (code.claude.com/docs/en/mcp). Neither requires CIMD, so the metadata says
//! `client_id_metadata_document_supported: false` and registration is DCR only.
//!
//! When it is built, an implementation of [`ClientMetadataSource`] fetches only from
//! allowlisted hosts (chatgpt.com, claude.ai), over HTTPS, refusing private and loopback
//! addresses after resolution (SSRF), with a size cap and a cache; the document's
//! `client_id` must equal its URL and its redirect URIs go through `redirect::allowed`.
//! Tests inject a fake source.

/// A client's metadata as a CIMD document gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientMetadata {
    /// Equal to the URL it was fetched from.
    pub client_id: String,
    /// The client's own name.
    pub client_name: String,
    /// Its redirect URIs.
    pub redirect_uris: Vec<String>,
}

/// Where CIMD documents come from (a guarded HTTPS fetcher in production, a table in
/// tests). `None`: not a trusted document.
pub trait ClientMetadataSource: Send + Sync {
    /// The document at `client_id_url`, checked.
    fn fetch(&self, client_id_url: &str) -> Option<ClientMetadata>;
}

/// The source in use today: no CIMD client is accepted.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoClientMetadata;

impl ClientMetadataSource for NoClientMetadata {
    fn fetch(&self, _client_id_url: &str) -> Option<ClientMetadata> {
        None
    }
}
