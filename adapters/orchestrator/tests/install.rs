//! From a release archive to `orchestrator doctor` on `PATH`, as a person installs it: the
//! Linux archive of this machine's target is packed in cargo-dist's layout
//! (`xtask::dist`), cargo-dist's own shell installer (generated here by the pinned `dist`
//! from `dist-workspace.toml`) installs it into a fresh `HOME`, and a login shell there
//! finds `orchestrator` on its `PATH`: `--version`, then `doctor` with no daemon (exit
//! status 1, saying what is wrong and what to do, as `orchestrator doctor --help` says).
//!
//! CI budget: the archive packs the DEBUG binary `cargo test` already built (at xz's
//! fastest level); no release build runs in CI. Releases are built by cargo-dist in
//! `.github/workflows/release.yml`, and the second test checks that this file is exactly
//! what `dist generate` makes of the configuration, with the targets and installer planned.
//!
//! `dist` comes from `tests/release/setup.sh` (PyPI), named by `DIST_BIN`; without it each
//! test prints one line and is skipped, unless `ORCH_REAL_TOOLS=required` (set by
//! `test.sh`) makes it fail.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::orchestrator_bin;

/// The workspace root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The pinned `dist` named by `DIST_BIN`, or the skip line.
fn dist_bin(test: &str) -> Option<PathBuf> {
    match std::env::var_os("DIST_BIN") {
        Some(path) => Some(PathBuf::from(path)),
        None if std::env::var("ORCH_REAL_TOOLS").as_deref() == Ok("required") => {
            panic!("{test}: ORCH_REAL_TOOLS=required but DIST_BIN is not set (run tests/release/setup.sh)")
        }
        None => {
            eprintln!("{test}: skipped: DIST_BIN is not set (tests/release/setup.sh installs cargo-dist)");
            None
        }
    }
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// A command with only the environment a fresh login would have.
fn clean(program: impl AsRef<std::ffi::OsStr>, home: &Path) -> Command {
    let mut command = Command::new(program);
    command.env_clear().env("HOME", home).env("PATH", "/usr/local/bin:/usr/bin:/bin").env("SHELL", "/bin/sh");
    command
}

#[test]
fn the_linux_archive_installs_into_a_fresh_home_and_doctor_runs_from_path() {
    let test = "install";
    let Some(dist) = dist_bin(test) else { return };
    let Some(target) = xtask::dist::host_target().filter(|t| t.contains("linux")) else {
        eprintln!("{test}: skipped: the archive test packs a Linux binary");
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let release = tmp.path().join("release");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).expect("home");

    // The archive, from the debug binary, and its checksum checked as a person would.
    let packed = xtask::dist::pack(&xtask::dist::PackOptions {
        binary: orchestrator_bin(),
        target: target.clone(),
        extra: vec![root().join("README.md")],
        out_dir: release.clone(),
        fast: true,
    })
    .expect("pack");
    let check = Command::new("sha256sum").arg("-c").arg(&packed.checksum_file).current_dir(&release).output();
    let check = check.expect("sha256sum");
    assert!(check.status.success(), "{}", text(&check));

    // cargo-dist's installer for this configuration (its global artifacts only: no build;
    // it writes them under the workspace's target/distrib, whatever CARGO_TARGET_DIR says).
    let built = Command::new(&dist)
        .args(["build", "--artifacts=global", "--output-format=json"])
        .current_dir(root())
        .output()
        .expect("run dist");
    assert!(built.status.success(), "dist build: {}", text(&built));
    let manifest: serde_json::Value = serde_json::from_slice(&built.stdout).expect("dist's JSON manifest");
    let made = manifest["artifacts"]["orchestrator-installer.sh"]["path"].as_str().expect("the installer's path");
    let installer = release.join("orchestrator-installer.sh");
    std::fs::copy(made, &installer).expect("installer");

    let installed = clean("sh", &home)
        .arg(&installer)
        .env("ORCHESTRATOR_DOWNLOAD_URL", format!("file://{}", release.display()))
        .output()
        .expect("run the installer");
    let said = text(&installed);
    assert!(installed.status.success(), "installer: {said}");
    assert!(said.contains(&format!("downloading orchestrator 0.0.0 {target}")), "the archive it chose: {said}");
    let binary = home.join(".cargo/bin/orchestrator");
    assert!(binary.is_file(), "installed into $CARGO_HOME/bin: {said}");

    // A new login shell: the installer's PATH line, then the commands by name.
    let login = clean("sh", &home)
        .arg("-c")
        .arg(". \"$HOME/.cargo/env\" && command -v orchestrator && orchestrator --version && orchestrator doctor")
        .output()
        .expect("run a shell");
    let said = String::from_utf8_lossy(&login.stdout).into_owned();
    let mut lines = said.lines();
    assert_eq!(lines.next(), Some(binary.to_str().expect("utf-8")), "found on PATH: {}", text(&login));
    assert_eq!(lines.next(), Some("orchestrator 0.0.0"), "{said}");
    assert_eq!(login.status.code(), Some(1), "doctor fails with no daemon: {}", text(&login));
    let data = home.join(".local/share/orchestrator");
    assert!(said.contains(&format!("orchestrator doctor (data directory {})", data.display())), "{said}");
    assert!(said.contains("FAIL  daemon: no MCP token to ask it with"), "{said}");
    assert!(
        said.contains(&format!("what to do: start it: orchestrator serve --data-dir {}", data.display())),
        "{said}"
    );
    assert!(said.contains("skip  service: not installed as a user service"), "{said}");
}

#[test]
fn the_release_workflow_is_what_cargo_dist_generates_for_every_target() {
    let test = "release workflow";
    let Some(dist) = dist_bin(test) else { return };
    let check = Command::new(&dist).args(["generate", "--check"]).current_dir(root()).output().expect("run dist");
    assert!(
        check.status.success(),
        ".github/workflows/release.yml differs from what dist generates (run `dist generate`): {}",
        text(&check)
    );
    let plan = Command::new(&dist).args(["plan"]).current_dir(root()).output().expect("run dist plan");
    let planned = text(&plan);
    assert!(plan.status.success(), "{planned}");
    for target in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ] {
        assert!(planned.contains(&xtask::dist::archive_name(target)), "{target}: {planned}");
    }
    assert!(planned.contains("orchestrator-installer.sh"), "{planned}");
}
