//! The MCP probe against the real daemon in process: the handshake a CLI child would make
//! (`initialize`, `tools/list` offering `worker_complete`) passes with the daemon's token and
//! fails closed, with a typed error that never carries the token, with a wrong one or a
//! wrong path.

mod harness;

use cli_executor::base::mcp::{McpServer, probe, url_from_daemon};
use harness::{Daemon, MCP_TOKEN};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_probe_passes_with_the_daemons_token_and_fails_closed_otherwise() {
    let daemon = Daemon::start().await;
    let url = url_from_daemon(&daemon.url).expect("an mcp url");
    probe(&McpServer { url: url.clone(), token: MCP_TOKEN.to_string() }).await.expect("the daemon answers");

    let wrong = McpServer { url: url.clone(), token: "a-wrong-token-0123456789abcdef".to_string() };
    let err = probe(&wrong).await.expect_err("a wrong token is refused");
    assert_eq!(err.code(), "MCP_UNREACHABLE");
    assert!(err.to_string().contains("401"), "{err}");
    assert!(!err.to_string().contains("a-wrong-token"), "{err}");

    let path = McpServer { url: url.replace("/mcp", "/nothing"), token: MCP_TOKEN.to_string() };
    assert_eq!(probe(&path).await.map_err(|e| e.code()), Err("MCP_UNREACHABLE"));
    daemon.stop().await;
}
