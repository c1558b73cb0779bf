//! `cargo run -p xtask -- dist`: one release archive from a binary that is already built,
//! in the layout cargo-dist gives its archives (`dist-workspace.toml`), so that the shell
//! installer cargo-dist generates installs it as it installs a release's. The release
//! itself is built by cargo-dist in `.github/workflows/release.yml`; this packer exists for
//! the install test (`adapters/orchestrator/tests/install.rs`), which packs the debug binary
//! `cargo test` already built instead of paying for a release build in CI.
//!
//! The archive: `orchestrator-TARGET.tar.xz` holding the directory `orchestrator-TARGET/`
//! with the binary and `README.md`; beside it `orchestrator-TARGET.tar.xz.sha256`, one line
//! `HEX *NAME` as cargo-dist writes it. `tar` (with `xz`) and `sha256sum` (or macOS's
//! `shasum`) do the work.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The application, as cargo-dist names its archives and installer.
pub const APP: &str = "orchestrator";
/// The archive format cargo-dist uses on Unix by default.
pub const ARCHIVE_EXTENSION: &str = ".tar.xz";

/// What to pack.
#[derive(Clone, Debug)]
pub struct PackOptions {
    /// The built binary.
    pub binary: PathBuf,
    /// The target triple it was built for (names the archive).
    pub target: String,
    /// Files packed beside the binary (the README, as cargo-dist does).
    pub extra: Vec<PathBuf>,
    /// Where the archive and its checksum go (created if missing).
    pub out_dir: PathBuf,
    /// xz's fastest level instead of its default: a test's debug binary of ~90 MB packs in
    /// seconds rather than minutes.
    pub fast: bool,
}

/// What [`pack`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packed {
    /// The archive.
    pub archive: PathBuf,
    /// Its checksum file.
    pub checksum_file: PathBuf,
    /// The archive's SHA-256, hex.
    pub sha256: String,
}

/// Why packing failed.
#[derive(Debug)]
pub enum DistError {
    /// A file could not be read, copied or written.
    Io {
        /// What was being done, and to which path.
        what: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// `tar` or the checksum tool failed or is missing.
    Tool {
        /// The command.
        command: String,
        /// What it said.
        detail: String,
    },
}

impl DistError {
    /// The stable code.
    pub fn code(&self) -> &'static str {
        match self {
            DistError::Io { .. } => "DIST_IO",
            DistError::Tool { .. } => "DIST_TOOL",
        }
    }
}

impl fmt::Display for DistError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DistError::Io { what, source } => write!(f, "{}: cannot {what}: {source}", self.code()),
            DistError::Tool { command, detail } => {
                write!(f, "{}: `{command}` failed: {detail} (install tar, xz and sha256sum)", self.code())
            }
        }
    }
}

impl std::error::Error for DistError {}

/// `orchestrator-TARGET.tar.xz`, cargo-dist's name for the archive of `target`.
pub fn archive_name(target: &str) -> String {
    format!("{APP}-{target}{ARCHIVE_EXTENSION}")
}

/// The target triple of the machine running this, for the archive a test packs here
/// (Linux builds are taken as glibc, as `cargo build` makes them by default).
pub fn host_target() -> Option<String> {
    let arch = std::env::consts::ARCH;
    match std::env::consts::OS {
        "linux" => Some(format!("{arch}-unknown-linux-gnu")),
        "macos" => Some(format!("{arch}-apple-darwin")),
        _ => None,
    }
}

/// Packs the binary and the extra files into the archive and writes its checksum file.
pub fn pack(options: &PackOptions) -> Result<Packed, DistError> {
    let io = |what: String| move |source| DistError::Io { what, source };
    let name = archive_name(&options.target);
    let stem = name.trim_end_matches(ARCHIVE_EXTENSION).to_string();
    std::fs::create_dir_all(&options.out_dir).map_err(io(format!("create {}", options.out_dir.display())))?;
    // The directory the archive holds, staged beside it and removed afterwards.
    let staging = options.out_dir.join(format!("{stem}.staging"));
    let inner = staging.join(&stem);
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&inner).map_err(io(format!("create {}", inner.display())))?;
    std::fs::copy(&options.binary, inner.join(APP)).map_err(io(format!("copy {}", options.binary.display())))?;
    for file in &options.extra {
        let Some(file_name) = file.file_name() else { continue };
        std::fs::copy(file, inner.join(file_name)).map_err(io(format!("copy {}", file.display())))?;
    }
    let archive = options.out_dir.join(&name);
    let mut tar = Command::new("tar");
    tar.arg("-cJf").arg(&archive).arg("-C").arg(&staging).arg(&stem);
    if options.fast {
        tar.env("XZ_OPT", "-0");
    }
    let packed = run(&mut tar, "tar -cJf");
    let _ = std::fs::remove_dir_all(&staging);
    packed?;
    let sha256 = sha256_of(&archive)?;
    let checksum_file = options.out_dir.join(format!("{name}.sha256"));
    std::fs::write(&checksum_file, format!("{sha256} *{name}\n"))
        .map_err(io(format!("write {}", checksum_file.display())))?;
    Ok(Packed { archive, checksum_file, sha256 })
}

/// A file's SHA-256 by `sha256sum`, else `shasum -a 256` (macOS).
pub fn sha256_of(file: &Path) -> Result<String, DistError> {
    let mut sha256sum = Command::new("sha256sum");
    sha256sum.arg("-b").arg(file);
    let said = match run(&mut sha256sum, "sha256sum -b") {
        Ok(said) => said,
        Err(_) => run(Command::new("shasum").args(["-a", "256", "-b"]).arg(file), "shasum -a 256 -b")?,
    };
    let hex = said.split_whitespace().next().unwrap_or_default().to_string();
    if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(hex)
    } else {
        Err(DistError::Tool { command: "sha256sum".into(), detail: format!("unexpected output {said:?}") })
    }
}

/// A command's stdout when it succeeds.
fn run(command: &mut Command, name: &str) -> Result<String, DistError> {
    let out = command.output().map_err(|e| DistError::Tool { command: name.into(), detail: e.to_string() })?;
    if !out.status.success() {
        return Err(DistError::Tool {
            command: name.into(),
            detail: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
