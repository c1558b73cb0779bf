//! `orchestrator service install|uninstall|status`: the flags handed to `console::service`,
//! and what is the binary's own: the absolute path of this very binary for the unit, the
//! data directory made private with its tokens in place before the service first starts
//! (so the daemon never prints a generated token into the journal), and the advice printed.

use crate::flags::ServiceCommand;
use crate::print_out;
use anyhow::Context as _;
use console::service::manage::{self, Context};
use console::service::{Answer, Manager, Spec, install_plan, uninstall_plan};
use std::path::{Path, PathBuf};

pub(crate) fn service_command(command: ServiceCommand) -> anyhow::Result<()> {
    let ctx = Context::here()?;
    match command {
        ServiceCommand::Install { data_dir, listen, dry_run } => {
            let binary = std::env::current_exe()
                .and_then(|exe| exe.canonicalize())
                .context("cannot find the path of this orchestrator binary")?;
            let data_dir = std::path::absolute(data_dir.unwrap_or_else(address::default_data_dir))
                .context("cannot make the data directory's path absolute")?;
            let spec = Spec { binary, data_dir, listen: listen.map(|l| l.to_string()) };
            let plan = install_plan(ctx.manager, &spec, &ctx.home, ctx.config_home.as_deref(), ctx.uid)?;
            if dry_run {
                print_out(&manage::describe(&plan));
                print_out(&advice(&ctx, &spec, false));
                return Ok(());
            }
            // A daemon started by hand on the same data directory would keep the service from
            // starting (the store's lock) while this command said it started. The service's own
            // daemon holds it too when this is a reinstall: `restart` replaces that one.
            let service_runs = matches!(manage::status(&ctx).manager, Answer::Known { running: true, .. });
            if !service_runs && store_in_use(&spec.data_dir) {
                anyhow::bail!(
                    "SERVICE_DATA_DIR_IN_USE: another orchestrator holds {} (a daemon started by hand, or `mcp-stdio`): \
                     stop it first (Ctrl-C in its terminal), then run `orchestrator service install` again",
                    spec.data_dir.display()
                );
            }
            prepare_data_dir(&spec.data_dir)?;
            manage::install(&ctx, &plan)?;
            print_out(&format!("orchestrator: installed and started the user service {}\n", plan.file.display()));
            print_out(&advice(&ctx, &spec, true));
            Ok(())
        }
        ServiceCommand::Uninstall { dry_run } => {
            let plan = uninstall_plan(ctx.manager, &ctx.home, ctx.config_home.as_deref(), ctx.uid);
            if dry_run {
                print_out(&manage::describe(&plan));
                return Ok(());
            }
            let notes = manage::uninstall(&ctx, &plan)?;
            for note in &notes {
                print_out(&format!("orchestrator: note: {note}\n"));
            }
            let done = if notes.is_empty() { "stopped, disabled and removed" } else { "removed" };
            print_out(&format!(
                "orchestrator: the user service is {done} ({}); the data directory is left as it was\n",
                plan.file.display()
            ));
            Ok(())
        }
        ServiceCommand::Status => {
            print_out(&manage::status_text(&ctx, &manage::status(&ctx)));
            Ok(())
        }
    }
}

/// True when another process holds the store's lock in `dir` (the lock is taken and let go
/// at once when it is free, as `doctor` does).
fn store_in_use(dir: &Path) -> bool {
    let lock = dir.join("store").join("store.lock");
    let Ok(file) = std::fs::File::options().read(true).write(true).open(&lock) else { return false };
    matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
}

/// The data directory private (0700) with both tokens written, as the daemon would write
/// them on its first start: the service's log then only names their files.
fn prepare_data_dir(dir: &Path) -> anyhow::Result<()> {
    address::private::private_umask();
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create the data directory {}", dir.display()))?;
    address::private::secure(dir).with_context(|| format!("cannot make {} private", dir.display()))?;
    let (token, source) = address::token::resolve(None, dir)?;
    address::token::save(&token, &source)?;
    let (token, source) = bridge::server::resolve_token(None, dir)?;
    bridge::server::save_token(&token, &source)?;
    Ok(())
}

/// What to know next: the tokens, the log, staying up while logged out, the binary's place.
fn advice(ctx: &Context, spec: &Spec, installed: bool) -> String {
    let dir = spec.data_dir.display();
    let mut out = format!(
        "orchestrator: runs {} serve --data-dir {dir}\n\
         orchestrator: MCP token in {dir}/{}; executor token (the extension's settings, `executor-cli`) in {dir}/{}\n\
         orchestrator: logs: {}\n",
        spec.binary.display(),
        address::token::TOKEN_FILE_NAME,
        bridge::server::TOKEN_FILE_NAME,
        ctx.manager.logs(&ctx.home),
    );
    if ctx.manager == Manager::Systemd {
        let user = std::env::var("USER").ok().filter(|u| !u.is_empty());
        let lingers = installed.then(|| user.as_deref().and_then(manage::lingers)).flatten();
        if lingers != Some(true) {
            out.push_str(&format!(
                "orchestrator: systemd stops user services when you log out; to keep it running: loginctl enable-linger {}\n",
                user.as_deref().unwrap_or("$USER")
            ));
        }
    }
    if in_build_dir(&spec.binary) {
        out.push_str(&format!(
            "orchestrator: note: {} is a build output (`cargo clean` removes it); install the binary first \
             (cargo install --locked --path adapters/orchestrator) and run `orchestrator service install` from there\n",
            spec.binary.display()
        ));
    }
    out
}

/// True for a binary inside cargo's `target/debug` or `target/release`.
fn in_build_dir(binary: &Path) -> bool {
    let parts: Vec<PathBuf> = binary.ancestors().map(Path::to_path_buf).collect();
    parts.windows(2).any(|w| {
        let (inner, outer) = (&w[0], &w[1]);
        matches!(inner.file_name().and_then(|n| n.to_str()), Some("debug" | "release"))
            && outer.file_name().and_then(|n| n.to_str()) == Some("target")
    })
}

#[cfg(test)]
mod tests {
    use super::in_build_dir;
    use std::path::Path;

    #[test]
    fn a_binary_in_cargo_s_target_is_noticed() {
        assert!(in_build_dir(Path::new("/src/orch/target/release/orchestrator")));
        assert!(in_build_dir(Path::new("/src/orch/target/debug/orchestrator")));
        assert!(!in_build_dir(Path::new("/home/ann/.cargo/bin/orchestrator")));
    }
}
