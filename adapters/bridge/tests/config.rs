//! The `/executor` endpoint's guards as configured by default: loopback peers and
//! extension origins only.

use bridge::server::BridgeConfig;

#[test]
fn only_loopback_peers_and_extension_origins_are_accepted_by_default() {
    let mut config = BridgeConfig::new("secret");
    let peer = |s: &str| Some(s.parse::<std::net::SocketAddr>().unwrap());
    assert!(config.peer_allowed(peer("127.0.0.1:5000")));
    assert!(config.peer_allowed(peer("[::1]:5000")));
    assert!(config.peer_allowed(peer("[::ffff:127.0.0.1]:5000")));
    assert!(!config.peer_allowed(peer("192.168.1.20:5000")));
    assert!(!config.peer_allowed(peer("[::ffff:10.0.0.1]:5000")));
    assert!(!config.peer_allowed(None), "an unknown peer is refused");
    config.allow_remote = true;
    assert!(config.peer_allowed(peer("192.168.1.20:5000")));

    assert!(config.origin_allowed(None), "native clients send no Origin");
    assert!(config.origin_allowed(Some("chrome-extension://abcdef")));
    assert!(config.origin_allowed(Some("moz-extension://0b1c-22")));
    for page in ["https://evil.example", "http://127.0.0.1:7411", "null", "", "chrome-extension:/x"] {
        assert!(!config.origin_allowed(Some(page)), "{page}");
    }
    config.origin_prefixes.push("https://dashboard.local".into());
    assert!(config.origin_allowed(Some("https://dashboard.local")));
}
