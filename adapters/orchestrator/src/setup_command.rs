//! `orchestrator setup`: the first run's questions (data directory, worker kinds, public
//! address, notification URLs), asked once on a terminal with the default in brackets, or
//! answered by flags (`--yes` takes the defaults); the configuration file written (0600,
//! never over an existing one without `--force`, the lines shown); the next three steps,
//! tailored to the answers.

use crate::print_out;
use crate::serve_flags::SetupFlags;
use address::config::{Config, WorkerKind, default_config_path};
use address::notify_target;
use anyhow::Context as _;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

/// The word that answers "no public address" or "no notification URL".
const NONE: &str = "none";

pub(crate) fn setup(flags: SetupFlags) -> anyhow::Result<()> {
    let named = flags.config.is_some();
    let path = flags.config.clone().unwrap_or_else(default_config_path);
    let old = std::fs::read_to_string(&path).ok();
    if old.is_some() && !flags.force {
        anyhow::bail!(
            "SETUP_EXISTS: {} exists already: edit it, or run `orchestrator setup --force` to replace it",
            path.display()
        );
    }
    let asking = !flags.yes && std::io::stdin().is_terminal();
    let missing = unanswered(&flags);
    if !flags.yes && !asking && !missing.is_empty() {
        anyhow::bail!(
            "SETUP_NO_TERMINAL: no terminal to ask on: answer with {} (or --yes for the defaults)",
            missing.join(", ")
        );
    }
    let config = if asking { ask(&flags)? } else { answered(&flags)? };
    let text = config.render();
    write_private(&path, &text)?;
    print_out(&format!("orchestrator: wrote {}\n{}", path.display(), summary(old.as_deref(), &text)));
    print_out(&next_steps(&config, named.then_some(path.as_path())));
    Ok(())
}

/// The flags of the questions no flag answers.
fn unanswered(flags: &SetupFlags) -> Vec<&'static str> {
    let mut missing = Vec::new();
    if flags.data_dir.is_none() {
        missing.push("--data-dir DIR");
    }
    if flags.workers.is_none() {
        missing.push("--workers chatgpt,codex,claude");
    }
    if flags.public_url.is_none() {
        missing.push("--public-url URL|none");
    }
    if flags.notify.is_empty() {
        missing.push("--notify URL|none");
    }
    missing
}

/// The configuration the flags say, the defaults for the rest.
fn answered(flags: &SetupFlags) -> anyhow::Result<Config> {
    let mut config = Config {
        data_dir: Some(absolute(flags.data_dir.clone().unwrap_or_else(address::default_data_dir))?),
        listen: flags.listen,
        workers: flags.workers.clone().unwrap_or_else(|| vec![WorkerKind::Chatgpt]),
        ..Config::default()
    };
    if let Some(url) = flags.public_url.as_deref().filter(|u| *u != NONE) {
        config.public_url = Some(public_url(url).context("--public-url")?);
    }
    for url in flags.notify.iter().filter(|u| *u != NONE) {
        notify_target::parse(url).map_err(|e| anyhow::anyhow!("{}: {e}", e.code())).context("--notify")?;
        config.notify.push(url.clone());
    }
    config.workers.sort();
    config.workers.dedup();
    Ok(config)
}

/// The questions on the terminal, each with its default (a flag's answer is not asked again).
fn ask(flags: &SetupFlags) -> anyhow::Result<Config> {
    let defaults = answered(flags)?;
    let stdin = std::io::stdin();
    let mut lines = stdin.lock();
    let mut question = |text: &str, default: &str| -> anyhow::Result<String> {
        print_out(&format!("{text} [{default}]: "));
        let mut line = String::new();
        if lines.read_line(&mut line).context("cannot read the answer")? == 0 {
            anyhow::bail!("SETUP_ABORTED: the input ended before every question was answered; nothing was written");
        }
        let line = line.trim();
        Ok(if line.is_empty() { default.to_string() } else { line.to_string() })
    };
    let mut config = defaults.clone();
    if flags.data_dir.is_none() {
        let default = defaults.data_dir.as_ref().map(|d| d.display().to_string()).unwrap_or_default();
        let answer = question("Data directory (the store and the tokens)", &default)?;
        config.data_dir = Some(absolute(PathBuf::from(answer))?);
    }
    if flags.workers.is_none() {
        loop {
            let answer = question(
                "Workers: chatgpt (browser extension), codex, claude (command line); comma-separated",
                "chatgpt",
            )?;
            let kinds: Option<Vec<WorkerKind>> = answer.split(',').map(WorkerKind::parse).collect();
            match kinds {
                Some(mut kinds) if !kinds.is_empty() => {
                    kinds.sort();
                    kinds.dedup();
                    config.workers = kinds;
                    break;
                }
                _ => print_out("  answer with chatgpt, codex or claude, comma-separated\n"),
            }
        }
    }
    if flags.public_url.is_none() {
        loop {
            let answer =
                question("Public address of a tunnel or proxy, for ChatGPT's app (https://...), or none", NONE)?;
            if answer == NONE {
                break;
            }
            match public_url(&answer) {
                Ok(url) => {
                    config.public_url = Some(url);
                    break;
                }
                Err(e) => print_out(&format!("  {e}\n")),
            }
        }
    }
    if flags.notify.is_empty() {
        loop {
            let answer =
                question("A URL to notify when a run needs you ([text:|slack:|discord:]http(s)://...), or none", NONE)?;
            if answer == NONE {
                break;
            }
            match notify_target::parse(&answer) {
                Ok(_) => {
                    config.notify.push(answer);
                    break;
                }
                Err(e) => print_out(&format!("  {e}\n")),
            }
        }
    }
    Ok(config)
}

/// A public address checked as `serve --public-url` checks it.
fn public_url(url: &str) -> anyhow::Result<String> {
    address::PublicUrl::parse(url).map_err(|e| anyhow::anyhow!("{}: {}", e.code(), e.0))?;
    Ok(url.to_string())
}

fn absolute(dir: PathBuf) -> anyhow::Result<PathBuf> {
    std::path::absolute(&dir).with_context(|| format!("cannot make {} absolute", dir.display()))
}

/// The file written whole, readable by its owner only (0600), its directory made if need be.
fn write_private(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).with_context(|| format!("cannot write {}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // An existing file (`--force`) keeps its mode through `open`: set it.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("cannot make {} private", path.display()))?;
    }
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The settings as lines marked like a diff: `+` new, `-` gone, two spaces unchanged
/// (comments left out).
fn summary(old: Option<&str>, new: &str) -> String {
    let settings = |text: &str| -> Vec<String> {
        text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(String::from).collect()
    };
    let (old, new) = (old.map(settings).unwrap_or_default(), settings(new));
    let mut out = String::new();
    for line in old.iter().filter(|l| !new.contains(l)) {
        out.push_str(&format!("- {line}\n"));
    }
    for line in &new {
        let mark = if old.contains(line) { ' ' } else { '+' };
        out.push_str(&format!("{mark} {line}\n"));
    }
    out
}

/// The next three steps for these answers. `config_file` is the file when it is not the
/// default one (then `serve` must be told where it is).
fn next_steps(config: &Config, config_file: Option<&Path>) -> String {
    let data_dir = config.data_dir.clone().unwrap_or_else(address::default_data_dir);
    let default_dir = data_dir == address::default_data_dir();
    let dir_flag = if default_dir { String::new() } else { format!(" --data-dir {}", data_dir.display()) };
    let start = match config_file {
        Some(file) => format!("orchestrator serve --config {}   (in a terminal you keep open)", file.display()),
        None => format!(
            "orchestrator service install{dir_flag}   (keeps it running; or `orchestrator serve` in a terminal)"
        ),
    };
    let mut connect = Vec::new();
    let cli: Vec<&str> = config.workers.iter().filter(|k| **k != WorkerKind::Chatgpt).map(|k| k.name()).collect();
    if config.workers.contains(&WorkerKind::Chatgpt) {
        connect.push(format!(
            "load the browser extension (docs/install.md), open its settings and type the code `orchestrator pair{dir_flag}` prints"
        ));
    }
    if !cli.is_empty() {
        connect.push(format!(
            "start the command-line executor: orchestrator executor-cli{dir_flag} --kinds {}",
            cli.join(",")
        ));
    }
    if let Some(url) = &config.public_url {
        connect.push(format!(
            "connect ChatGPT's app to {}/mcp and approve it with `orchestrator oauth approve CODE` (docs/connect.md)",
            url.trim_end_matches('/')
        ));
    }
    let doctor = match config_file {
        Some(file) => format!("orchestrator doctor --config {}", file.display()),
        None => "orchestrator doctor".to_string(),
    };
    format!(
        "Next:\n  1. Start the daemon: {start}\n  2. Connect your workers: {}\n  3. Check everything: {doctor}\n",
        connect.join("; then ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_steps_follow_the_answers() {
        let chatgpt = Config { workers: vec![WorkerKind::Chatgpt], ..Config::default() };
        let steps = next_steps(&chatgpt, None);
        assert!(steps.contains("1. Start the daemon: orchestrator service install"), "{steps}");
        assert!(steps.contains("orchestrator pair") && !steps.contains("executor-cli"), "{steps}");
        assert!(steps.contains("3. Check everything: orchestrator doctor\n"), "{steps}");
        let cli = Config {
            workers: vec![WorkerKind::Codex, WorkerKind::Claude],
            public_url: Some("https://o.example".into()),
            ..Config::default()
        };
        let steps = next_steps(&cli, Some(Path::new("/etc/o.toml")));
        assert!(steps.contains("orchestrator serve --config /etc/o.toml"), "{steps}");
        assert!(steps.contains("executor-cli --kinds codex,claude") && !steps.contains("orchestrator pair"), "{steps}");
        assert!(steps.contains("https://o.example/mcp") && steps.contains("doctor --config /etc/o.toml"), "{steps}");
    }

    #[test]
    fn the_summary_marks_what_changes() {
        let old = "# c\nlisten = \"a\"\nworkers = [\"chatgpt\"]\n";
        let new = "# c\nworkers = [\"chatgpt\"]\nnotify = []\n";
        assert_eq!(summary(Some(old), new), "- listen = \"a\"\n  workers = [\"chatgpt\"]\n+ notify = []\n");
        assert_eq!(summary(None, "a = \"b\"\n"), "+ a = \"b\"\n");
    }
}
