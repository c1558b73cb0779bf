//! One leader per Postgres database (issue 32, `docs/scale-out.md` "The lease"): a daemon
//! takes the lease when it is free (lapsed, or its own: the id in `DIR/daemon-id`), or
//! waits as a standby, answering `NOT_LEADER` on its listener (`standby_route.rs`) and
//! reading the lease every poll until it lapses; then it takes a new epoch and serves.
//! While it leads, [`lost`] says when its renewals stop holding the lease (self-fencing).

use crate::standby_route::{self, LeaderView, SharedView};
use anyhow::Context;
use edge::EdgeLimits;
use std::future::Future;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use store_pg::lease::{Keeper, LeaseClient};
use tokio_util::sync::CancellationToken;

/// The file in the data directory that holds this daemon's id (0600): the lease's holder,
/// kept across restarts so that a restarted leader takes its own lease back at once.
pub const DAEMON_ID_FILE_NAME: &str = "daemon-id";
/// The longest daemon id read from the file, in bytes (a generated one has 34).
const DAEMON_ID_BYTES_MAX: usize = 128;
/// How long a standby's server may take to finish the requests in flight when it is
/// promoted, in milliseconds, before the leader's server takes the listener anyway.
const STANDBY_DRAIN_MS_MAX: u64 = 2_000;
/// How often the leader checks its keeper, in milliseconds at most (never less often than
/// it renews).
const KEEPER_CHECK_MS_MAX: u64 = 250;

/// The lease's timings: the defaults, or shortened by hidden test flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseTimes {
    /// How long the lease lasts without renewal, in ms.
    pub ttl_ms: u64,
    /// How often the leader renews it, in ms.
    pub renew_ms: u64,
    /// How often a standby reads it, in ms.
    pub poll_ms: u64,
}

impl LeaseTimes {
    /// The defaults, with the test-only timers that are set.
    pub fn from_timers(timers: &crate::engine_thread::TestTimers) -> LeaseTimes {
        LeaseTimes {
            ttl_ms: timers.lease_ttl_ms.unwrap_or(store_pg::LEASE_TTL_MS_DEFAULT),
            renew_ms: timers.lease_renew_ms.unwrap_or(store_pg::LEASE_RENEW_MS_DEFAULT),
            poll_ms: timers.lease_poll_ms.unwrap_or(store_pg::LEASE_POLL_MS_DEFAULT),
        }
    }
}

/// This daemon's id from `DIR/daemon-id`, made (random, 0600) on the first start.
pub fn daemon_id(dir: &Path) -> anyhow::Result<String> {
    let file = dir.join(DAEMON_ID_FILE_NAME);
    if let Ok(text) = std::fs::read_to_string(&file) {
        let id = text.trim();
        let usable = !id.is_empty()
            && id.len() <= DAEMON_ID_BYTES_MAX
            && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        anyhow::ensure!(
            usable,
            "DAEMON_ID: {} does not hold a daemon id (letters, digits, - and _, at most {DAEMON_ID_BYTES_MAX}); \
             remove it to make a new one (a running leader with the old id then waits for its lease to lapse)",
            file.display()
        );
        return Ok(id.to_string());
    }
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("the OS random source failed: {e}"))?;
    let id = format!("d-{}", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>());
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut out = options.open(&file).with_context(|| format!("DAEMON_ID: cannot create {}", file.display()))?;
    std::io::Write::write_all(&mut out, format!("{id}\n").as_bytes())
        .with_context(|| format!("DAEMON_ID: cannot write {}", file.display()))?;
    Ok(id)
}

/// Runs `work` on a thread of its own (the Postgres client blocks, and must not run inside
/// a tokio runtime) and awaits its answer.
async fn off_runtime<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> anyhow::Result<T> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("store-pg-open".into())
        .spawn(move || {
            let _ = tx.send(work());
        })
        .context("cannot start a thread to open the Postgres store")?;
    rx.await.context("the thread opening the Postgres store died")
}

/// Who this daemon is on the lease.
pub struct Candidate<'a> {
    /// The connection string.
    pub url: &'a str,
    /// Its daemon id.
    pub me: String,
    /// The URL it serves at (its MCP endpoint), for standbys to name.
    pub my_url: String,
    /// The lease's timings.
    pub times: LeaseTimes,
    /// Its listener (bound already; a standby answers on it).
    pub listener: &'a std::net::TcpListener,
    /// The edge's limits, for the standby's server too.
    pub limits: EdgeLimits,
    /// Where the URL file goes (written while a standby, for `status` and `doctor`).
    pub url_file: &'a Path,
}

/// Takes the lease, waiting as a standby while another daemon holds it. Answers the
/// opened store and its keeper, or `None` when `shutdown` came first.
pub async fn lead(
    candidate: Candidate<'_>,
    mut shutdown: std::pin::Pin<&mut impl Future<Output = ()>>,
) -> anyhow::Result<Option<(store_pg::PgStore, Keeper)>> {
    let mut was_standby: Option<u64> = None;
    loop {
        let options = store_pg::Options {
            holder: Some(candidate.me.clone()),
            holder_url: candidate.my_url.clone(),
            lease_ttl_ms: candidate.times.ttl_ms,
            ..store_pg::Options::default()
        };
        let url = candidate.url.to_string();
        let opened = off_runtime(move || store_pg::PgStore::open_with(&url, options)).await?;
        let (leader_url, epoch) = match opened {
            Ok(store) => {
                let keeper =
                    Keeper::start(candidate.url, store.epoch(), candidate.times.ttl_ms, candidate.times.renew_ms)
                        .map_err(|e| anyhow::anyhow!("cannot renew the lease [{}]: {e}", e.code()))?;
                match was_standby {
                    Some(old) => tracing::warn!(
                        target_db = store.target(),
                        old_epoch = old,
                        new_epoch = store.epoch(),
                        "promoted: the leader's lease lapsed; this daemon opened the Postgres store and recovers from it"
                    ),
                    None => tracing::info!(
                        target_db = store.target(),
                        epoch = store.epoch(),
                        daemon_id = %candidate.me,
                        "opened the Postgres store and took the lease"
                    ),
                }
                return Ok(Some((store, keeper)));
            }
            Err(store_pg::Error::LeaseHeld { leader_url, epoch, holder, expires_in_ms }) => {
                tracing::warn!(
                    leader = %leader_url, leader_id = %holder, epoch, expires_in_ms,
                    "standby: another daemon leads this database; answering NOT_LEADER until its lease lapses"
                );
                (leader_url, epoch)
            }
            Err(e) => anyhow::bail!("cannot open the Postgres store [{}]: {e}", e.code()),
        };
        was_standby = Some(epoch);
        let view: SharedView = Arc::new(Mutex::new(LeaderView { url: leader_url, epoch }));
        if !stand_by(&candidate, view.clone(), shutdown.as_mut()).await? {
            return Ok(None);
        }
        if let Ok(view) = view.lock() {
            was_standby = Some(view.epoch);
        }
    }
}

/// Serves `NOT_LEADER` on the listener and polls the lease until it is free for this
/// daemon (`true`) or `shutdown` completes (`false`).
async fn stand_by(
    candidate: &Candidate<'_>,
    view: SharedView,
    shutdown: std::pin::Pin<&mut impl Future<Output = ()>>,
) -> anyhow::Result<bool> {
    let listener = candidate.listener.try_clone().context("cannot share the listener with the standby")?;
    listener.set_nonblocking(true).context("cannot share the listener with the standby")?;
    let listener = tokio::net::TcpListener::from_std(listener).context("cannot share the listener with the standby")?;
    if let Err(e) = std::fs::write(candidate.url_file, format!("{}\n", candidate.my_url)) {
        tracing::warn!(file = %candidate.url_file.display(), error = %e, "cannot record the URL for `orchestrator status`");
    }
    let stop = CancellationToken::new();
    let server = tokio::spawn(edge::serve(
        listener,
        standby_route::router(view.clone()),
        candidate.limits.clone(),
        stop.clone(),
    ));
    let (free_tx, free_rx) = tokio::sync::oneshot::channel::<()>();
    let quit = Arc::new(AtomicBool::new(false));
    let (url, me, poll_ms, quit_poll) =
        (candidate.url.to_string(), candidate.me.clone(), candidate.times.poll_ms, quit.clone());
    std::thread::Builder::new()
        .name("store-pg-standby".into())
        .spawn(move || poll_until_free(&url, &me, poll_ms, &view, &quit_poll, free_tx))
        .context("cannot start the standby's lease poll")?;
    let promoted = tokio::select! {
        freed = free_rx => freed.is_ok(),
        () = shutdown => false,
    };
    quit.store(true, Ordering::Relaxed);
    stop.cancel();
    let drained = tokio::time::timeout(Duration::from_millis(STANDBY_DRAIN_MS_MAX), server).await;
    if drained.is_err() {
        tracing::warn!("the standby's requests in flight did not finish within {STANDBY_DRAIN_MS_MAX} ms");
    }
    Ok(promoted)
}

/// The standby's poll: reads the lease every `poll_ms` (reconnecting after a failure),
/// keeps `view` current, and answers `free` once the lease is free for `me`.
fn poll_until_free(
    url: &str,
    me: &str,
    poll_ms: u64,
    view: &SharedView,
    quit: &AtomicBool,
    free: tokio::sync::oneshot::Sender<()>,
) {
    let mut client: Option<LeaseClient> = None;
    let mut last_failure: Option<Instant> = None;
    while !quit.load(Ordering::Relaxed) {
        if client.is_none() {
            client = LeaseClient::connect(url, poll_ms.max(1_000)).ok();
        }
        match client.as_mut().map(LeaseClient::read) {
            Some(Ok(lease)) => {
                if lease.free_for(me) {
                    let _ = free.send(());
                    return;
                }
                if let Ok(mut view) = view.lock() {
                    *view = LeaderView { url: lease.leader_url, epoch: lease.epoch };
                }
            }
            failed => {
                client = None;
                // Said once a minute at most: a standby keeps waiting through an outage.
                if last_failure.is_none_or(|at| at.elapsed() > Duration::from_secs(60)) {
                    let why = match failed {
                        Some(Err(e)) => format!("[{}] {e}", e.code()),
                        _ => "cannot connect".into(),
                    };
                    tracing::warn!(error = %why, "standby: cannot read the lease; trying again");
                    last_failure = Some(Instant::now());
                }
            }
        }
        std::thread::sleep(Duration::from_millis(poll_ms));
    }
}

/// Completes when the leader's lease is lost: fenced by a newer epoch, or not renewed for a
/// whole time to live. Its error names the code (`PG_FENCED`, `PG_LEASE_LOST`).
/// When the renewals lapsed (a database out of reach, or this process stopped and resumed),
/// one read of the lease, bounded by the time to live, tells whether a newer epoch took
/// it (`PG_FENCED`, both epochs named) or nobody knows (`PG_LEASE_LOST`).
pub async fn lost(keeper: &Keeper, url: &str, times: LeaseTimes) -> anyhow::Error {
    let mut tick = tokio::time::interval(Duration::from_millis(times.renew_ms.clamp(1, KEEPER_CHECK_MS_MAX)));
    let error = loop {
        tick.tick().await;
        if let Err(e) = keeper.check() {
            break e;
        }
    };
    let error = match error {
        store_pg::Error::LeaseLost { .. } => {
            let (url, mine) = (url.to_string(), keeper.epoch());
            let read = off_runtime(move || LeaseClient::connect(&url, times.ttl_ms).and_then(|mut c| c.read()));
            match tokio::time::timeout(Duration::from_millis(times.ttl_ms), read).await {
                Ok(Ok(Ok(lease))) if lease.epoch != mine => store_pg::Error::Fenced { mine, current: lease.epoch },
                _ => error,
            }
        }
        other => other,
    };
    anyhow::anyhow!("this daemon no longer leads the database and stops serving [{}]: {error}", error.code())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_daemon_id_is_made_once_private_and_kept() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let id = daemon_id(tmp.path()).expect("made");
        assert!(id.starts_with("d-") && id.len() == 34, "{id}");
        assert_eq!(daemon_id(tmp.path()).expect("read"), id, "kept across restarts");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(tmp.path().join(DAEMON_ID_FILE_NAME)).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let other = tempfile::tempdir().expect("tempdir");
        assert_ne!(daemon_id(other.path()).expect("made"), id, "another data directory, another id");
    }

    #[test]
    fn a_damaged_daemon_id_is_a_coded_error_not_a_new_id() {
        let tmp = tempfile::tempdir().expect("tempdir");
        for bad in ["", "two words", "x\u{0}y", &"a".repeat(DAEMON_ID_BYTES_MAX + 1)] {
            std::fs::write(tmp.path().join(DAEMON_ID_FILE_NAME), bad).expect("write");
            let err = daemon_id(tmp.path()).expect_err(bad);
            assert!(err.to_string().starts_with("DAEMON_ID: "), "{err}");
        }
    }
}
