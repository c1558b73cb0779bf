//! The daemon's OAuth state in the database (`--store postgres://` with `--public-url`,
//! `docs/scale-out.md`): [`PgGrants`], the `oauth` crate's [`GrantsBackend`] over
//! `store_pg`'s blobs, each write fenced by the leader's epoch, so that a standby that takes
//! over serves every connector the former leader approved, and a fenced former leader can
//! never overwrite the new one's grants.
//!
//! The `postgres` client blocks on a runtime of its own and must not run on a tokio worker:
//! [`PgGrants`] hands each load and save to a thread of its own over a std channel and waits
//! for its answer, as the file backend waits for its fsync.

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
        match answer.recv_timeout(Duration::from_millis(GRANTS_WAIT_MS_MAX)) {
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
