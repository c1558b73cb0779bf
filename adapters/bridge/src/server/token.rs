//! The executor token: given by flag or environment, else `DIR/executor-token`, else
//! generated from the OS CSPRNG and written there once the daemon listens ([`save_token`]),
//! so that a first start that fails leaves no token nobody was shown.

/// The executor token file in the data directory.
pub const TOKEN_FILE_NAME: &str = "executor-token";

/// Where the executor token came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenSource {
    /// Given by flag or environment.
    Given,
    /// Read from the file.
    File(std::path::PathBuf),
    /// Generated now, for this file: written by [`save_token`] once the daemon listens.
    Generated(std::path::PathBuf),
}

/// Why the executor token could not be had.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// Too short, or not printable ASCII.
    #[error("the executor token must be at least 16 printable ASCII characters without spaces")]
    Invalid,
    /// The file could not be read or written.
    #[error("executor token file {path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The OS random source failed.
    #[error("the OS random source failed: {0}")]
    Random(String),
}

fn valid_token(token: &str) -> bool {
    token.len() >= 16 && token.bytes().all(|b| b.is_ascii_graphic())
}

/// The given token, else `DIR/executor-token`, else a fresh one (32 random bytes, hex)
/// for [`save_token`] to write there.
pub fn resolve_token(given: Option<&str>, data_dir: &std::path::Path) -> Result<(String, TokenSource), TokenError> {
    if let Some(token) = given {
        return if valid_token(token) { Ok((token.to_string(), TokenSource::Given)) } else { Err(TokenError::Invalid) };
    }
    let path = data_dir.join(TOKEN_FILE_NAME);
    let io = |source| TokenError::Io { path: path.clone(), source };
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let token = text.trim().to_string();
            if !valid_token(&token) {
                return Err(TokenError::Invalid);
            }
            Ok((token, TokenSource::File(path)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).map_err(|e| TokenError::Random(e.to_string()))?;
            let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            Ok((token, TokenSource::Generated(path)))
        }
        Err(e) => Err(io(e)),
    }
}

/// Writes a token [`resolve_token`] generated to its file, mode 0600 (never over an
/// existing one); a given or read token is left as it is.
pub fn save_token(token: &str, source: &TokenSource) -> Result<(), TokenError> {
    let TokenSource::Generated(path) = source else { return Ok(()) };
    let io = |source| TokenError::Io { path: path.clone(), source };
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    use std::io::Write;
    let mut file = options.open(path).map_err(io)?;
    file.write_all(format!("{token}\n").as_bytes()).map_err(io)?;
    file.sync_all().map_err(io)
}
