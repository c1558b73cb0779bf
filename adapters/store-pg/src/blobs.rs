//! Small named states kept whole beside the records (`orchestrator_blobs`, format 3):
//! [`BlobClient`], a connection of its own that reads a blob and writes one fenced by the
//! writer's epoch, as every commit is. The daemon keeps its OAuth grants here, so that a
//! standby that takes over serves the same connectors (`docs/scale-out.md`).
//!
//! The tables are made by the store's open ([`crate::PgStore::open`]): a writer opened its
//! store, and took its epoch, before it writes a blob. Like the store's, these calls block:
//! never make them inside a tokio runtime (a std thread of their own).

use crate::error::Error;
use crate::sql;
use postgres::Client;

/// A connection for the blobs alone.
pub struct BlobClient {
    /// The connection.
    client: Client,
    /// Host, port, user and database, for messages.
    target: String,
}

impl std::fmt::Debug for BlobClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlobClient").field("target", &self.target).finish()
    }
}

/// A statement failed while `during`.
fn query(during: &'static str) -> impl Fn(postgres::Error) -> Error {
    move |source| Error::Query { during, source }
}

impl BlobClient {
    /// Connects to `url` (as [`crate::PgStore::open`] does, with the same session
    /// settings: a write is acknowledged once durable); every statement on this
    /// connection, a wait for the lease row's lock included, is bounded by `statement_ms`.
    pub fn connect(url: &str, statement_ms: u64) -> Result<BlobClient, Error> {
        let target = crate::url::parse_url(url, crate::CONNECT_TIMEOUT_MS_DEFAULT)?;
        let mut client = target.connect()?;
        let settings = format!("{}; SET statement_timeout = {statement_ms}", sql::session_settings());
        client.batch_execute(&settings).map_err(query("setting up the blobs' session"))?;
        Ok(BlobClient { client, target: target.name })
    }

    /// Host, port, user and database, for messages.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The blob named `name`, `None` when none was ever written.
    pub fn get(&mut self, name: &str) -> Result<Option<Vec<u8>>, Error> {
        let row = self.client.query_opt(sql::GET_BLOB, &[&name]).map_err(query("reading a blob"))?;
        row.map(|row| row.try_get(0)).transpose().map_err(query("reading a blob"))
    }

    /// Writes blob `name` whole, in one transaction that first checks that the lease still
    /// holds `epoch` ([`sql::BLOB_FENCE`]): [`Error::Fenced`], writing nothing, once a newer
    /// writer took the lease. Returns once the server acknowledged the commit.
    pub fn put(&mut self, name: &str, value: &[u8], epoch: u64) -> Result<(), Error> {
        let mine = i64::try_from(epoch).unwrap_or(i64::MAX);
        let mut tx = self.client.transaction().map_err(query("beginning a blob's write"))?;
        let fenced = tx.query(sql::BLOB_FENCE, &[&mine]).map_err(query("checking the epoch"))?.is_empty();
        if fenced {
            let current = tx
                .query_one(sql::CURRENT_EPOCH, &[])
                .and_then(|row| row.try_get::<_, i64>(0))
                .map_or(0, |e| u64::try_from(e).unwrap_or(0));
            let _ = tx.rollback();
            return Err(Error::Fenced { mine: epoch, current });
        }
        tx.execute(sql::PUT_BLOB, &[&name, &value]).map_err(query("writing a blob"))?;
        tx.commit().map_err(query("committing a blob"))
    }
}
