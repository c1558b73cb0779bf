//! The MCP bearer token: from the flag or environment, else `DIR/mcp-token`, generated
//! from the operating system's CSPRNG on first start and written only once the daemon
//! listens ([`save`]), so that a first start that fails leaves no token nobody was shown.

use anyhow::{Context, bail};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The token file inside the data directory.
pub const TOKEN_FILE_NAME: &str = "mcp-token";
/// Shortest token accepted from a flag, the environment or the file.
pub const TOKEN_CHARS_MIN: usize = 16;
/// Random bytes in a generated token (printed as hex: 64 characters).
const TOKEN_BYTES: usize = 32;

/// Where the token came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenSource {
    /// `--mcp-token` or `ORCHESTRATOR_MCP_TOKEN`.
    Given,
    /// Read from the token file.
    File(PathBuf),
    /// Generated now, for this token file: written by [`save`] once the daemon listens.
    Generated(PathBuf),
}

/// Checks a token's shape: long enough, printable ASCII, no whitespace.
pub fn validate(token: &str) -> anyhow::Result<()> {
    if token.len() < TOKEN_CHARS_MIN {
        bail!("the MCP token must be at least {TOKEN_CHARS_MIN} characters long");
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        bail!("the MCP token must be printable ASCII without spaces");
    }
    Ok(())
}

/// The given token, else the token file's, else a fresh one for the file ([`save`] writes it).
pub fn resolve(given: Option<&str>, data_dir: &Path) -> anyhow::Result<(String, TokenSource)> {
    if let Some(token) = given {
        validate(token)?;
        return Ok((token.to_string(), TokenSource::Given));
    }
    let path = data_dir.join(TOKEN_FILE_NAME);
    match read(&path)? {
        Some(token) => Ok((token, TokenSource::File(path))),
        None => Ok((generate()?, TokenSource::Generated(path))),
    }
}

/// Writes a token [`resolve`] generated to its file (mode 0600; never over an existing
/// one); a given or read token is left as it is.
pub fn save(token: &str, source: &TokenSource) -> anyhow::Result<()> {
    match source {
        TokenSource::Generated(path) => write_new(path, token),
        TokenSource::Given | TokenSource::File(_) => Ok(()),
    }
}

/// The token stored in `path`, if the file exists.
pub fn read(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let token = text.trim().to_string();
            validate(&token).with_context(|| format!("bad token in {}", path.display()))?;
            Ok(Some(token))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn generate() -> anyhow::Result<String> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("the OS random source failed: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn write_new(path: &Path, token: &str) -> anyhow::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path).with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(format!("{token}\n").as_bytes())?;
    file.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_once_then_read_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (unsaved, source) = resolve(None, dir.path()).expect("generate");
        assert!(matches!(source, TokenSource::Generated(_)));
        assert!(!dir.path().join(TOKEN_FILE_NAME).exists(), "nothing written before the daemon listens");
        let (first, source) = resolve(None, dir.path()).expect("generate again");
        assert_ne!(first, unsaved, "an unsaved token is forgotten");
        save(&first, &source).expect("save");
        assert_eq!(first.len(), 64);
        let (again, source) = resolve(None, dir.path()).expect("read");
        assert_eq!(again, first);
        assert!(matches!(source, TokenSource::File(_)));
        let (given, source) = resolve(Some("a-given-token-1234"), dir.path()).expect("given");
        assert_eq!((given.as_str(), source), ("a-given-token-1234", TokenSource::Given));
        assert!(resolve(Some("short"), dir.path()).is_err());
        assert!(resolve(Some("has a space in it!!"), dir.path()).is_err());
    }
}
