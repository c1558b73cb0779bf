//! The daemon's OAuth state in the database (`--store postgres://` with `--public-url`,
//! `docs/scale-out.md`): [`PgGrants`], the `oauth` crate's [`GrantsBackend`] over
//! `store_pg`'s blobs, each write fenced by the leader's epoch, so that a standby that takes
//! over serves every connector the former leader approved, and a fenced former leader can
//! never overwrite the new one's grants.
//!
//! The `postgres` client blocks on a runtime of its own and must not run on a tokio worker:
//! [`PgGrants`] hands each load and save to a thread of its own over a std channel and waits
//! for its answer (inside `block_in_place` on the daemon's multi-thread runtime), as the
//! file backend waits for its fsync.

use oauth::grants::{self, GrantsBackend, GrantsFile};
use oauth::{OAuth, OAuthError, OAuthOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;
use store_pg::blobs::BlobClient;

/// The blob the OAuth state is kept as (`orchestrator_blobs.name`).
pub const GRANTS_BLOB: &str = "oauth-grants";
/// How long one statement on the grants' connection may take, a wait for the lease row's
/// lock included, in ms.
const GRANTS_STATEMENT_MS_MAX: u64 = 5_000;
/// How long a load or a save waits for the grants' thread, in ms: a reconnection and one
/// statement. Past it the save is reported as failed (`server_error` to the client).
const GRANTS_WAIT_MS_MAX: u64 = store_pg::CONNECT_TIMEOUT_MS_DEFAULT + GRANTS_STATEMENT_MS_MAX;

/// What the grants' thread is asked, with the channel of its answer.
enum Job {
    /// Read the stored state's bytes.
    Get(Sender<Result<Option<Vec<u8>>, store_pg::Error>>),
    /// Write these bytes, fenced by the thread's epoch.
    Put(Vec<u8>, Sender<Result<(), store_pg::Error>>),
}

/// The OAuth state in the database, for the leader of one epoch.
#[derive(Debug)]
pub struct PgGrants {
    /// The grants' thread.
    jobs: Sender<Job>,
    /// The database, named without the password, for errors.
    place: String,
    /// The data directory, whose grants file is imported once into an empty database.
    dir: PathBuf,
}

impl PgGrants {
    /// Starts the grants' thread on `url` for the leader of `epoch` (connecting on its
    /// first job).
    pub fn start(url: &str, epoch: u64, dir: &Path) -> anyhow::Result<PgGrants> {
        let place = store_pg::target_name(url).map_err(|e| anyhow::anyhow!("[{}] {e}", e.code()))?;
        let (jobs, received) = mpsc::channel();
        let url = url.to_string();
        std::thread::Builder::new()
            .name("store-pg-oauth".into())
            .spawn(move || serve_jobs(&url, epoch, received))
            .map_err(|e| anyhow::anyhow!("cannot start the OAuth grants' thread: {e}"))?;
        Ok(PgGrants { jobs, place: format!("the PostgreSQL database {place}"), dir: dir.to_path_buf() })
    }

    /// Sends `job` (made with its answer's channel) and waits for the answer.
    fn ask<T>(&self, job: impl FnOnce(Sender<Result<T, store_pg::Error>>) -> Job) -> Result<T, OAuthError> {
        let (reply, answer) = mpsc::channel();
        let gone = || self.stored("PG_CLIENT_GONE", "the OAuth grants' thread is gone".into());
        self.jobs.send(job(reply)).map_err(|_| gone())?;
        let wait = || answer.recv_timeout(Duration::from_millis(GRANTS_WAIT_MS_MAX));
        // On a multi-thread runtime's worker (a request's save), the worker's other tasks
        // move to another thread while this one waits.
        let on_worker = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        let answered = if on_worker { tokio::task::block_in_place(wait) } else { wait() };
        match answered {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(self.stored(e.code(), e.to_string())),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                Err(self.stored("PG_TIMEOUT", format!("the database did not answer within {GRANTS_WAIT_MS_MAX} ms")))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(gone()),
        }
    }

    /// The typed error of a failure `code`.
    fn stored(&self, code: &'static str, detail: String) -> OAuthError {
        OAuthError::Stored { place: self.place.clone(), code, detail }
    }
}

impl GrantsBackend for PgGrants {
    /// The database's state; none yet and a grants file in the data directory that holds
    /// some: the file's, written to the database once (said in the log).
    fn load(&mut self) -> Result<GrantsFile, OAuthError> {
        let file_path = grants::path(&self.dir);
        if let Some(bytes) = self.ask(Job::Get)? {
            if file_path.exists() {
                tracing::info!(file = %file_path.display(), "the OAuth grants are kept in the database; this file is not read");
            }
            return grants::decode(&bytes).map_err(|why| self.stored("OAUTH_GRANTS_CORRUPT", why));
        }
        let file = grants::load(&self.dir)?;
        if file.clients.is_empty() && file.grants.is_empty() {
            return Ok(file);
        }
        self.save(&file)?;
        tracing::warn!(
            file = %file_path.display(),
            clients = file.clients.len(),
            grants = file.grants.len(),
            "imported the OAuth grants file into the database (once: from now on the database's are used, and the file is not read)"
        );
        Ok(file)
    }

    fn save(&mut self, file: &GrantsFile) -> Result<(), OAuthError> {
        let bytes = grants::encode(file);
        self.ask(|reply| Job::Put(bytes, reply))
    }
}

/// The grants' thread: one connection (made again after a failure), one job at a time.
fn serve_jobs(url: &str, epoch: u64, jobs: Receiver<Job>) {
    let mut client: Option<BlobClient> = None;
    for job in jobs {
        let connected = match client.take() {
            Some(c) => Ok(c),
            None => BlobClient::connect(url, GRANTS_STATEMENT_MS_MAX),
        };
        let mut c = match connected {
            Ok(c) => c,
            Err(e) => {
                match job {
                    Job::Get(reply) => drop(reply.send(Err(e))),
                    Job::Put(_, reply) => drop(reply.send(Err(e))),
                }
                continue;
            }
        };
        let healthy = match job {
            Job::Get(reply) => {
                let got = c.get(GRANTS_BLOB);
                let healthy = got.is_ok();
                let _ = reply.send(got);
                healthy
            }
            Job::Put(bytes, reply) => {
                let put = c.put(GRANTS_BLOB, &bytes, epoch);
                let healthy = !matches!(put, Err(store_pg::Error::Query { .. }));
                let _ = reply.send(put);
                healthy
            }
        };
        // A failed statement may have left the connection unusable: a new one next time.
        if healthy {
            client = Some(c);
        }
    }
}

/// OAuth on for the leader of `epoch` on the database at `url`: the grants loaded from it
/// (or imported from `dir`'s file once), every change written to it fenced.
pub fn start_oauth(
    options: &OAuthOptions,
    url: &str,
    epoch: u64,
    dir: &Path,
    static_token: &str,
    body_read_timeout_ms: u64,
) -> anyhow::Result<Arc<OAuth>> {
    let backend = PgGrants::start(url, epoch, dir).map_err(|e| anyhow::anyhow!("cannot turn OAuth on: {e}"))?;
    let oauth = OAuth::start(options, Box::new(backend), static_token, body_read_timeout_ms)
        .map_err(|e| anyhow::anyhow!("cannot turn OAuth on [{}]: {e}", e.code()))?;
    Ok(Arc::new(oauth))
}

#[cfg(test)]
mod tests {
    use super::*;
    use oauth::{Authority, PublicUrl, Ttls};
    use serde_json::json;
    use store_pg::test_server::TestServer;

    /// An authority on `backend`, as the daemon makes it.
    fn authority(mut backend: PgGrants) -> Authority {
        let file = backend.load().expect("load");
        let public = PublicUrl::parse("http://127.0.0.1:1").expect("a valid URL");
        Authority::new(public, Vec::new(), Ttls::default(), Box::new(backend), file)
    }

    /// A registration's body.
    fn client(name: &str) -> serde_json::Value {
        json!({ "client_name": name, "redirect_uris": ["http://127.0.0.1:1/cb"] })
    }

    #[test]
    fn a_fenced_former_leader_reports_no_change_and_overwrites_nothing() {
        let server = TestServer::start();
        let url = server.fresh_database();
        let dir = tempfile::tempdir().expect("tempdir");
        let old = store_pg::PgStore::open(&url).expect("the old leader");
        let mut a = authority(PgGrants::start(&url, old.epoch(), dir.path()).expect("start"));
        a.register(&client("before"), 1).expect("the leader registers");
        drop(old);
        let new = store_pg::PgStore::open(&url).expect("a newer leader");
        let mut b = authority(PgGrants::start(&url, new.epoch(), dir.path()).expect("start"));
        assert_eq!(b.grants_list()["clients"].as_array().map(Vec::len), Some(1), "the new leader loads A's client");

        let refused = a.register(&client("after"), 2).expect_err("fenced");
        assert_eq!(refused.error, "server_error", "never reported as done: {refused:?}");
        assert_eq!(a.grants_list()["clients"].as_array().map(Vec::len), Some(1), "the change is undone");
        b.register(&client("new leader's"), 3).expect("the new leader writes");
        let mut reread = PgGrants::start(&url, new.epoch(), dir.path()).expect("start");
        let names: Vec<String> = reread.load().expect("load").clients.into_iter().map(|c| c.client_name).collect();
        assert_eq!(names, ["before", "new leader's"], "the fenced write is nowhere");
        let mut stale = PgGrants::start(&url, new.epoch() - 1, dir.path()).expect("start");
        let err = stale.save(&GrantsFile::empty()).expect_err("fenced");
        assert_eq!(err.code(), "OAUTH_GRANTS_STORE");
        assert!(err.to_string().contains("[PG_FENCED]") && !err.to_string().contains("postgres://"), "{err}");
    }
}
