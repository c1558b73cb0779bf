//! A throwaway PostgreSQL server for tests (feature `test-server`): `initdb` into a
//! temporary directory, `pg_ctl start` on a free loopback port with its unix socket in that
//! directory too, stopped and removed on drop. No Docker: the server binaries of Debian's
//! `postgresql` package (`/usr/lib/postgresql/VERSION/bin`, or `ORCH_PG_BIN`). Missing
//! binaries fail the test with a message saying how to install them, never a skip.
//!
//! PostgreSQL refuses to run as root, and CI runs as root: then every server command runs
//! as an unprivileged user through `setpriv` (the `postgres` user the package creates, or
//! `nobody`), and the temporary directory is handed to that user.
//!
//! Every method that talks to the server does it on a thread of its own, so a test may
//! call it from inside a tokio runtime (`postgres::Client` panics there).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

/// Where Debian's packages put the server binaries, one folder per major version.
const DEBIAN_BIN_ROOT: &str = "/usr/lib/postgresql";
/// The environment variable that names a folder of server binaries instead.
pub const BIN_ENV: &str = "ORCH_PG_BIN";
/// The oldest major version the store supports.
const MAJOR_VERSION_MIN: u32 = 15;
/// The superuser `initdb` makes (trusted on loopback and the socket).
pub const SUPERUSER: &str = "orchestrator";
/// Tries at starting the server, each on a fresh free port (another process may take a
/// port between our probe and the server's bind).
const START_TRIES_MAX: u32 = 5;
/// How long `pg_ctl` waits for the server to start or stop, in seconds.
const PG_CTL_WAIT_S: u32 = 60;

/// Distinguishes the temporary directories of several servers in one process.
static SERVERS: AtomicU32 = AtomicU32::new(0);

/// A running throwaway server.
#[derive(Debug)]
pub struct TestServer {
    /// The temporary directory: the data directory, the socket, the log.
    dir: PathBuf,
    /// The server binaries.
    bin: PathBuf,
    /// The loopback port it listens on.
    port: u16,
    /// The user the server runs as, when the tests run as root.
    run_as: Option<User>,
    /// Numbers the databases [`TestServer::fresh_database`] makes.
    databases: AtomicU32,
}

/// An unprivileged user to run the server as.
#[derive(Clone, Debug)]
struct User {
    /// Its name, for messages.
    name: String,
    /// Its user id.
    uid: u32,
    /// Its primary group id.
    gid: u32,
}

impl TestServer {
    /// Initializes and starts a server; panics with what to do when it cannot.
    pub fn start() -> TestServer {
        TestServer::start_with(&[])
    }

    /// [`TestServer::start`] with TLS on (`ssl=on`), presenting the certificate `cert` with
    /// its key `key` (PEM files, copied into the server's directory for its user, the key
    /// 0600 as the server demands). Connections in clear are still accepted.
    pub fn start_tls(cert: &Path, key: &Path) -> TestServer {
        TestServer::start_inner(&["ssl=on"], Some((cert, key)))
    }

    /// [`TestServer::start`] with more server settings (`name=value`, each passed as
    /// `-c name=value` after the defaults, so they win).
    pub fn start_with(settings: &[&str]) -> TestServer {
        TestServer::start_inner(settings, None)
    }

    fn start_inner(settings: &[&str], tls: Option<(&Path, &Path)>) -> TestServer {
        let bin = server_bin();
        let run_as = if running_as_root() { Some(unprivileged_user()) } else { None };
        // /tmp, not $TMPDIR: the unprivileged user must reach it, and the socket path must stay
        // under the 107 bytes a unix socket address holds.
        let dir = Path::new("/tmp").join(format!(
            "orch-pg-{}-{}",
            std::process::id(),
            SERVERS.fetch_add(1, Ordering::Relaxed)
        ));
        if dir.exists() {
            let _ = std::fs::remove_dir_all(&dir);
        }
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new().mode(0o700).create(&dir).expect("create the server's temporary directory");
        }
        if let Some(user) = &run_as {
            std::os::unix::fs::chown(&dir, Some(user.uid), Some(user.gid))
                .unwrap_or_else(|e| panic!("cannot hand {} to user {}: {e}", dir.display(), user.name));
        }
        let mut server = TestServer { dir, bin, port: 0, run_as, databases: AtomicU32::new(0) };
        let mut settings: Vec<String> = settings.iter().map(|s| s.to_string()).collect();
        if let Some((cert, key)) = tls {
            for (from, name, mode) in [(cert, "server.crt", 0o644), (key, "server.key", 0o600)] {
                let to = server.dir.join(name);
                std::fs::copy(from, &to).unwrap_or_else(|e| panic!("copy {} for the server: {e}", from.display()));
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&to, std::fs::Permissions::from_mode(mode)).expect("chmod");
                if let Some(user) = &server.run_as {
                    std::os::unix::fs::chown(&to, Some(user.uid), Some(user.gid)).expect("chown");
                }
                let setting = if name == "server.crt" { "ssl_cert_file" } else { "ssl_key_file" };
                settings.push(format!("{setting}={}", path(&to)));
            }
        }
        let data = server.data_dir();
        let initdb = server.run(
            "initdb",
            &["-D", path(&data), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"],
        );
        assert!(initdb.status.success(), "initdb failed:\n{}", text(&initdb));
        for attempt in 1..=START_TRIES_MAX {
            server.port = free_port();
            // Durable as in production (fsync on); 16 MB of shared buffers instead of the
            // default 128 MB, since every test starts a server of its own.
            let mut options = format!(
                "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=on -c shared_buffers=16MB",
                server.port,
                path(&server.dir)
            );
            for setting in &settings {
                options.push_str(&format!(" -c {setting}"));
            }
            let log = server.dir.join("server.log");
            let wait = PG_CTL_WAIT_S.to_string();
            let start = server
                .run("pg_ctl", &["-D", path(&data), "-l", path(&log), "-w", "-t", &wait, "-o", &options, "start"]);
            if start.status.success() {
                return server;
            }
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            assert!(
                attempt < START_TRIES_MAX,
                "pg_ctl start failed {attempt} times; last:\n{}\nlog:\n{log}",
                text(&start)
            );
        }
        unreachable!("the loop returns or panics")
    }

    /// The server's data directory.
    fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// Runs a server binary, as the unprivileged user when the tests run as root.
    fn run(&self, program: &str, args: &[&str]) -> Output {
        let program = self.bin.join(program);
        let mut command = match &self.run_as {
            Some(user) => {
                let mut c = Command::new("setpriv");
                c.arg(format!("--reuid={}", user.uid))
                    .arg(format!("--regid={}", user.gid))
                    .arg("--clear-groups")
                    .arg("--")
                    .arg(&program);
                c
            }
            None => Command::new(&program),
        };
        command.args(args).current_dir(&self.dir).env("LC_ALL", "C");
        command.output().unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()))
    }

    /// The folder of the server's unix socket (`?host=` in a connection string).
    pub fn socket_dir(&self) -> &Path {
        &self.dir
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A connection string for `database` over loopback TCP.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://{SUPERUSER}@127.0.0.1:{}/{database}", self.port)
    }

    /// Makes a new empty database and returns its connection string.
    pub fn fresh_database(&self) -> String {
        let name = format!("t{}", self.databases.fetch_add(1, Ordering::Relaxed));
        self.execute(&self.url("postgres"), &format!("CREATE DATABASE {name}"));
        self.url(&name)
    }

    /// Runs `statements` (a simple-query batch) on the database at `url`.
    pub fn execute(&self, url: &str, statements: &str) {
        let (url, statements) = (url.to_string(), statements.to_string());
        std::thread::spawn(move || {
            let mut client = postgres::Client::connect(&url, postgres::NoTls)
                .unwrap_or_else(|e| panic!("cannot connect to the test server at {url}: {e}"));
            client.batch_execute(&statements).unwrap_or_else(|e| panic!("{statements}: {e}"));
        })
        .join()
        .expect("the statements ran");
    }

    /// The rows of `query` on the database at `url`, every column read as text.
    pub fn rows(&self, url: &str, query: &str) -> Vec<Vec<Option<String>>> {
        let (url, query) = (url.to_string(), query.to_string());
        std::thread::spawn(move || {
            let mut client = postgres::Client::connect(&url, postgres::NoTls)
                .unwrap_or_else(|e| panic!("cannot connect to the test server at {url}: {e}"));
            let mut out = Vec::new();
            for message in client.simple_query(&query).unwrap_or_else(|e| panic!("{query}: {e}")) {
                if let postgres::SimpleQueryMessage::Row(row) = message {
                    out.push((0..row.len()).map(|i| row.get(i).map(String::from)).collect());
                }
            }
            out
        })
        .join()
        .expect("the query ran")
    }

    /// What `postgres --version` prints, e.g. `postgres (PostgreSQL) 15.18 (Debian ...)`.
    pub fn version(&self) -> String {
        let output = self.run("postgres", &["--version"]);
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    }
}

impl TestServer {
    /// Stops the server at once (`pg_ctl stop -m immediate`), as a crash or a partition
    /// would: every client's connection drops and new ones are refused.
    pub fn stop_immediately(&self) {
        let data = self.data_dir();
        let wait = PG_CTL_WAIT_S.to_string();
        let out = self.run("pg_ctl", &["-D", path(&data), "-m", "immediate", "-w", "-t", &wait, "stop"]);
        assert!(out.status.success(), "pg_ctl stop failed:\n{}", text(&out));
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let data = self.data_dir();
        let wait = PG_CTL_WAIT_S.to_string();
        let _ = self.run("pg_ctl", &["-D", path(&data), "-m", "immediate", "-w", "-t", &wait, "stop"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The server binaries: `ORCH_PG_BIN`, or the newest `/usr/lib/postgresql/N/bin` (N at
/// least 15) that holds `initdb`. Panics with how to install them.
fn server_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os(BIN_ENV) {
        let bin = PathBuf::from(bin);
        assert!(bin.join("initdb").exists(), "{BIN_ENV}={} holds no initdb", bin.display());
        return bin;
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(DEBIAN_BIN_ROOT)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let major: u32 = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            (major >= MAJOR_VERSION_MIN && bin.join("initdb").exists()).then_some((major, bin))
        })
        .collect();
    found.sort();
    match found.pop() {
        Some((_, bin)) => bin,
        None => panic!(
            "the PostgreSQL server binaries are missing: no {DEBIAN_BIN_ROOT}/N/bin/initdb with N >= {MAJOR_VERSION_MIN}. \
             The Postgres store's tests start a real server: install Debian's package \
             (`apt-get install postgresql`, as .ci/run does) or set {BIN_ENV} to a folder holding initdb and pg_ctl"
        ),
    }
}

/// Whether this process runs as root (`id -u` says 0).
fn running_as_root() -> bool {
    let output = Command::new("id").arg("-u").output().expect("run `id -u`");
    String::from_utf8_lossy(&output.stdout).trim() == "0"
}

/// The user to run the server as under root: `postgres` (made by Debian's package), else
/// `nobody`.
fn unprivileged_user() -> User {
    let passwd = std::fs::read_to_string("/etc/passwd").expect("read /etc/passwd");
    let user = |wanted: &str| {
        passwd.lines().find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            if fields.len() <= 3 || fields[0] != wanted {
                return None;
            }
            Some(User { name: wanted.to_string(), uid: fields[2].parse().ok()?, gid: fields[3].parse().ok()? })
        })
    };
    user("postgres").or_else(|| user("nobody")).expect(
        "the tests run as root and PostgreSQL refuses to: neither a `postgres` nor a `nobody` user exists to run it as",
    )
}

/// A loopback port that was free a moment ago.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().expect("its address").port()
}

/// A path as the `&str` a command line takes (the temporary directory is ASCII).
fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// A command's status, stdout and stderr, for a failure message.
fn text(output: &Output) -> String {
    format!(
        "{}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
