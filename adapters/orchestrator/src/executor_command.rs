//! `orchestrator executor add|list|remove`: the per-host executor tokens in the data
//! directory's host book (`bridge::server::HostBook`, docs/scale-out.md "Executors on
//! several hosts"). A running daemon reads the book again whenever it changes, so none of
//! these needs a restart: an added host may say `hello` at once, a removed one is refused
//! at its next `hello` and cut off at its connection's next message. `list` also says which
//! hosts are connected now, as the running daemon's `/health` lists them.

use crate::flags::ExecutorCommand;
use crate::print_out;
use address::default_data_dir;
use anyhow::Context;
use bridge::server::HostBook;

/// Runs one `executor` subcommand.
pub(crate) fn executor_command(command: ExecutorCommand) -> anyhow::Result<()> {
    match command {
        ExecutorCommand::Add { host, data_dir } => {
            let dir = data_dir.unwrap_or_else(default_data_dir);
            std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
            let now_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
            let token = HostBook::in_dir(&dir).add(&host, now_ms)?;
            print_out(&format!(
                "Host {host} may now connect with this executor token (shown once: the daemon keeps only its hash):\n\n  \
                 {token}\n\n\
                 On {host}, save it in a file only you can read, and start the executor there with that\n\
                 host id, the daemon's address (through its public HTTPS URL: wss://...; or a private\n\
                 network), and the MCP token and URL its Codex and Claude children call back on:\n\n  \
                 umask 077 && printf '%s\\n' '{token}' > ~/.orchestrator-executor-token\n  \
                 orchestrator executor-cli --executor-id {host} --token-file ~/.orchestrator-executor-token \\\n    \
                 --daemon wss://DAEMON/executor --mcp-url https://DAEMON/mcp --mcp-token MCP_TOKEN\n\n\
                 The daemon accepts executors from other machines only when started with\n\
                 --executor-allow-remote. Remove the token with: orchestrator executor remove {host}\n"
            ));
            Ok(())
        }
        ExecutorCommand::List { data_dir } => {
            let dir = data_dir.unwrap_or_else(default_data_dir);
            let hosts = HostBook::in_dir(&dir).list()?;
            if hosts.is_empty() {
                print_out(&format!(
                    "No host tokens in {} (executors there use the shared executor token). Add one with: orchestrator executor add HOST\n",
                    dir.display()
                ));
                return Ok(());
            }
            // Who is connected now, as the running daemon says (or why it could not say).
            let connected = console::reach::Target::new(Some(dir.clone()), Vec::new(), None).and_then(|target| {
                let token = target.token.clone().context("no daemon has run with this data directory yet")?;
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
                runtime.block_on(console::executors::connected(&target.url, &token))
            });
            let mut text = format!("{} host token{}:\n", hosts.len(), if hosts.len() == 1 { "" } else { "s" });
            for h in &hosts {
                let state = match &connected {
                    Ok(now) => match now.iter().find(|c| c.id == h.host) {
                        Some(c) => format!("connected ({})", c.kinds),
                        None => "not connected".to_string(),
                    },
                    Err(_) => "connection unknown".to_string(),
                };
                text.push_str(&format!("  {}  added {}  {state}\n", h.host, utc_text(h.added_ms)));
            }
            match &connected {
                Ok(now) => {
                    let shared: Vec<String> = now
                        .iter()
                        .filter(|c| !hosts.iter().any(|h| h.host == c.id))
                        .map(|c| format!("{} ({})", c.id, c.kinds))
                        .collect();
                    if !shared.is_empty() {
                        text.push_str(&format!(
                            "Also connected, with the shared executor token: {}\n",
                            shared.join(", ")
                        ));
                    }
                }
                Err(e) => text.push_str(&format!("Who is connected is unknown: {e}\n")),
            }
            print_out(&text);
            Ok(())
        }
        ExecutorCommand::Remove { host, data_dir } => {
            let dir = data_dir.unwrap_or_else(default_data_dir);
            HostBook::in_dir(&dir).remove(&host)?;
            print_out(&format!(
                "{host}'s token is removed. A running daemon refuses its next hello and cuts its connection at its next message (a heartbeat comes every 20 s); its workers wait for it, shown as offline.\n"
            ));
            Ok(())
        }
    }
}

/// `2026-12-06 12:41 UTC` from ms since the Unix epoch (days to a civil date by Howard
/// Hinnant's algorithm).
fn utc_text(ms: u64) -> String {
    let secs = ms / 1_000;
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02} UTC", rest / 3_600, rest % 3_600 / 60)
}

#[cfg(test)]
mod tests {
    #[test]
    fn times_read_as_utc_dates() {
        assert_eq!(super::utc_text(0), "1970-01-01 00:00 UTC");
        assert_eq!(super::utc_text(1_796_558_400_000), "2026-12-06 12:00 UTC");
        assert_eq!(super::utc_text(951_782_400_000), "2000-02-29 00:00 UTC");
    }
}
