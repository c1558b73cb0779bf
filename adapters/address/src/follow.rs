//! Following the leader among several daemon URLs: the pure part of how `status`, `start`,
//! `worker …` (several `--url`) and `executor-cli` (several `--daemon`) find the daemon that
//! leads a shared PostgreSQL store. A standby answers 503 and `{"code":"NOT_LEADER",
//! "leader":URL}` ([`leader_named`]); [`Follow`] chooses the next URL to try: the leader a
//! standby named (at most [`LEADER_HOPS_MAX`] hops, never a URL already tried), else the
//! next one given, in order; and when none answers as the leader, [`FollowError::NoLeader`]
//! is one line naming what each said.

/// The most leaders followed in one attempt: a standby naming the leader is one hop; a
/// stale name (the leader moved meanwhile) may need a second; more is a loop or a
/// misconfiguration, not a failover.
pub const LEADER_HOPS_MAX: u32 = 3;

/// The stable code of a standby's answer (`standby_route.rs` in the daemon).
pub const NOT_LEADER_CODE: &str = "NOT_LEADER";

/// Why no daemon could be reached as the leader, with a stable code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FollowError {
    /// Every URL was tried (and every leader named followed, within the hop limit): none
    /// answered as the leader.
    #[error("no daemon answered as the leader (NO_LEADER): {said}")]
    NoLeader {
        /// What each URL said, `URL: answer; URL: answer`.
        said: String,
    },
}

impl FollowError {
    /// A stable code for the error.
    pub fn code(&self) -> &'static str {
        match self {
            FollowError::NoLeader { .. } => "NO_LEADER",
        }
    }
}

/// The leader a standby names in the body of its 503 answer: `Some("")` when it names
/// none (it does not know the leader yet), `None` when the body is no `NOT_LEADER` answer.
pub fn leader_named(body: &str) -> Option<String> {
    let answer: serde_json::Value = serde_json::from_str(body).ok()?;
    if answer.get("code").and_then(serde_json::Value::as_str) != Some(NOT_LEADER_CODE) {
        return None;
    }
    Some(answer.get("leader").and_then(serde_json::Value::as_str).unwrap_or("").trim().to_string())
}

/// The executor endpoint of the daemon whose MCP URL is `mcp_url`: `http://HOST:PORT/…`
/// becomes `ws://HOST:PORT/executor` (`https` becomes `wss`); `None` for anything else.
pub fn executor_url_of(mcp_url: &str) -> Option<String> {
    let (scheme, rest) = if let Some(rest) = mcp_url.strip_prefix("http://") {
        ("ws", rest)
    } else if let Some(rest) = mcp_url.strip_prefix("https://") {
        ("wss", rest)
    } else {
        return None;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.is_empty() || authority.contains(char::is_whitespace) {
        return None;
    }
    Some(format!("{scheme}://{authority}/executor"))
}

/// One attempt to reach the leader: the URLs given, in order, with the leaders named on the
/// way tried first.
#[derive(Debug, Clone)]
pub struct Follow {
    /// The URLs given, in order.
    given: Vec<String>,
    /// The next of `given` to try.
    next_given: usize,
    /// A leader named by a standby, to try next.
    leader: Option<String>,
    /// The leaders followed so far.
    hops: u32,
    /// Every URL tried, so none is tried twice.
    tried: Vec<String>,
    /// What each URL said.
    said: Vec<String>,
}

impl Follow {
    /// An attempt over `given`, in order.
    pub fn new(given: Vec<String>) -> Follow {
        Follow { given, next_given: 0, leader: None, hops: 0, tried: Vec::new(), said: Vec::new() }
    }

    /// The next URL to try: the leader last named, else the next URL given not yet tried;
    /// `None` when all are tried.
    pub fn next_url(&mut self) -> Option<String> {
        if let Some(leader) = self.leader.take() {
            self.tried.push(leader.clone());
            return Some(leader);
        }
        while let Some(url) = self.given.get(self.next_given).cloned() {
            self.next_given += 1;
            if !self.tried.contains(&url) {
                self.tried.push(url.clone());
                return Some(url);
            }
        }
        None
    }

    /// `url` answered `NOT_LEADER` naming `named` (as the standby wrote it); `follow` is the
    /// URL to try for that leader (`named` itself, or its executor endpoint), `None` when
    /// it cannot be reached from here. It is tried next unless it was tried already or the
    /// hop limit is reached.
    pub fn not_leader(&mut self, url: &str, named: &str, follow: Option<String>) {
        if named.is_empty() {
            self.said.push(format!("{url}: a standby that names no leader yet (NOT_LEADER)"));
            return;
        }
        let secure = |u: &str| u.starts_with("https://") || u.starts_with("wss://");
        let why = match follow {
            None => " (not a URL this command can follow)",
            // The token would go in clear to a leader a daemon reached over TLS named.
            Some(ref next) if secure(url) && !secure(next) => " (in clear, named over TLS: not followed)",
            Some(ref next) if self.tried.contains(next) => " (already tried)",
            Some(_) if self.hops >= LEADER_HOPS_MAX => " (hop limit reached)",
            Some(next) => {
                self.hops += 1;
                self.leader = Some(next);
                ""
            }
        };
        self.said.push(format!("{url}: a standby naming the leader {named} (NOT_LEADER){why}"));
    }

    /// `url` could not be used: `what` says why.
    pub fn failed(&mut self, url: &str, what: &str) {
        self.said.push(format!("{url}: {what}"));
    }

    /// How many URLs were tried.
    pub fn tried(&self) -> usize {
        self.tried.len()
    }

    /// The error when [`Follow::next_url`] has nothing left: what each URL said.
    pub fn no_leader(&self) -> FollowError {
        FollowError::NoLeader { said: self.said.join("; ") }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(list: &[&str]) -> Vec<String> {
        list.iter().map(|u| u.to_string()).collect()
    }

    #[test]
    fn a_standby_answer_names_the_leader_and_nothing_else_does() {
        let body = r#"{"code":"NOT_LEADER","message":"m","leader":"http://10.0.0.5:7411/mcp","epoch":3}"#;
        assert_eq!(leader_named(body).as_deref(), Some("http://10.0.0.5:7411/mcp"));
        assert_eq!(leader_named(r#"{"code":"NOT_LEADER","leader":""}"#).as_deref(), Some(""));
        assert_eq!(leader_named(r#"{"code":"NOT_LEADER"}"#).as_deref(), Some(""));
        assert_eq!(leader_named(r#"{"code":"OTHER","leader":"http://x/mcp"}"#), None);
        assert_eq!(leader_named("not json"), None);
        assert_eq!(leader_named(""), None);
    }

    #[test]
    fn the_executor_endpoint_of_a_leader_is_its_host_and_port_with_executor() {
        assert_eq!(executor_url_of("http://10.0.0.5:7411/mcp").as_deref(), Some("ws://10.0.0.5:7411/executor"));
        assert_eq!(executor_url_of("https://o.example/mcp?x").as_deref(), Some("wss://o.example/executor"));
        assert_eq!(executor_url_of("http://[::1]:7411").as_deref(), Some("ws://[::1]:7411/executor"));
        assert_eq!(executor_url_of("ws://h:1/executor"), None);
        assert_eq!(executor_url_of("http:///mcp"), None);
        assert_eq!(executor_url_of("unknown"), None);
    }

    #[test]
    fn the_urls_are_tried_in_order_each_once() {
        let mut follow = Follow::new(urls(&["http://a/mcp", "http://b/mcp", "http://a/mcp"]));
        assert_eq!(follow.next_url().as_deref(), Some("http://a/mcp"));
        follow.failed("http://a/mcp", "nothing answers");
        assert_eq!(follow.next_url().as_deref(), Some("http://b/mcp"));
        follow.failed("http://b/mcp", "HTTP 500");
        assert_eq!(follow.next_url(), None, "a repeated URL is not tried twice");
        assert_eq!(follow.tried(), 2);
        let error = follow.no_leader();
        assert_eq!(error.code(), "NO_LEADER");
        assert_eq!(
            error.to_string(),
            "no daemon answered as the leader (NO_LEADER): http://a/mcp: nothing answers; http://b/mcp: HTTP 500"
        );
    }

    #[test]
    fn a_leader_in_clear_named_over_tls_is_not_followed() {
        let mut follow = Follow::new(urls(&["wss://s/executor"]));
        assert_eq!(follow.next_url().as_deref(), Some("wss://s/executor"));
        follow.not_leader("wss://s/executor", "http://l/mcp", Some("ws://l/executor".into()));
        assert_eq!(follow.next_url(), None, "the token never goes in clear to a leader a TLS daemon named");
        assert!(follow.no_leader().to_string().contains("(in clear, named over TLS: not followed)"));
        // Over TLS to TLS, and in clear to either, it is followed.
        let mut follow = Follow::new(urls(&["https://s/mcp"]));
        follow.next_url();
        follow.not_leader("https://s/mcp", "https://l/mcp", Some("https://l/mcp".into()));
        assert_eq!(follow.next_url().as_deref(), Some("https://l/mcp"));
        let mut follow = Follow::new(urls(&["ws://s/executor"]));
        follow.next_url();
        follow.not_leader("ws://s/executor", "https://l/mcp", Some("wss://l/executor".into()));
        assert_eq!(follow.next_url().as_deref(), Some("wss://l/executor"));
    }

    #[test]
    fn a_named_leader_is_tried_next_before_the_rest_of_the_list() {
        let mut follow = Follow::new(urls(&["http://s/mcp", "http://t/mcp"]));
        assert_eq!(follow.next_url().as_deref(), Some("http://s/mcp"));
        follow.not_leader("http://s/mcp", "http://l/mcp", Some("http://l/mcp".into()));
        assert_eq!(follow.next_url().as_deref(), Some("http://l/mcp"));
        follow.failed("http://l/mcp", "nothing answers");
        assert_eq!(follow.next_url().as_deref(), Some("http://t/mcp"));
    }

    #[test]
    fn two_standbys_naming_each_other_are_no_loop() {
        let mut follow = Follow::new(urls(&["http://a/mcp"]));
        assert_eq!(follow.next_url().as_deref(), Some("http://a/mcp"));
        follow.not_leader("http://a/mcp", "http://b/mcp", Some("http://b/mcp".into()));
        assert_eq!(follow.next_url().as_deref(), Some("http://b/mcp"));
        follow.not_leader("http://b/mcp", "http://a/mcp", Some("http://a/mcp".into()));
        assert_eq!(follow.next_url(), None);
        let said = follow.no_leader().to_string();
        assert!(
            said.contains("http://b/mcp: a standby naming the leader http://a/mcp (NOT_LEADER) (already tried)"),
            "{said}"
        );
    }

    #[test]
    fn at_most_the_hop_limit_of_leaders_is_followed() {
        let mut follow = Follow::new(urls(&["http://s0/mcp"]));
        let mut followed = 0;
        let mut url = follow.next_url();
        while let Some(current) = url {
            let named = format!("http://s{}/mcp", followed + 1);
            follow.not_leader(&current, &named, Some(named.clone()));
            url = follow.next_url();
            if url.is_some() {
                followed += 1;
            }
            assert!(followed <= LEADER_HOPS_MAX, "followed past the limit");
        }
        assert_eq!(followed, LEADER_HOPS_MAX);
        assert!(follow.no_leader().to_string().ends_with("(hop limit reached)"));
    }

    #[test]
    fn a_standby_that_names_no_leader_or_an_unusable_one_is_not_followed() {
        let mut follow = Follow::new(urls(&["http://s/mcp"]));
        follow.next_url();
        follow.not_leader("http://s/mcp", "", None);
        assert_eq!(follow.next_url(), None);
        assert!(follow.no_leader().to_string().contains("names no leader yet"));
        let mut follow = Follow::new(urls(&["ws://s/executor"]));
        follow.next_url();
        follow.not_leader("ws://s/executor", "unknown", None);
        assert_eq!(follow.next_url(), None);
        assert!(follow.no_leader().to_string().contains("not a URL this command can follow"));
    }
}
