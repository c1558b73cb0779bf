//! The release packer (`xtask::dist`): the archive holds one directory named after it with
//! the binary (still executable) and the extra files, as cargo-dist's archives do, and the
//! checksum file is cargo-dist's one line that `sha256sum -c` accepts.

use std::process::Command;
use xtask::dist::{PackOptions, archive_name, pack};

#[test]
fn the_archive_is_laid_out_as_cargo_dist_s_and_its_checksum_checks() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let binary = tmp.path().join("built");
    std::fs::write(&binary, "#!/bin/sh\necho packed\n").expect("binary");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let readme = tmp.path().join("README.md");
    std::fs::write(&readme, "# read me\n").expect("readme");
    let out = tmp.path().join("out");
    let options = PackOptions {
        binary,
        target: "x86_64-unknown-linux-gnu".into(),
        extra: vec![readme],
        out_dir: out.clone(),
        fast: true,
    };
    let packed = pack(&options).expect("pack");
    assert_eq!(packed.archive, out.join("orchestrator-x86_64-unknown-linux-gnu.tar.xz"));
    assert_eq!(archive_name("aarch64-apple-darwin"), "orchestrator-aarch64-apple-darwin.tar.xz");

    let listed = Command::new("tar").arg("-tvJf").arg(&packed.archive).output().expect("tar -t");
    let listed = String::from_utf8_lossy(&listed.stdout);
    let mut entries: Vec<(&str, &str)> =
        listed.lines().filter_map(|l| Some((l.split_whitespace().next()?, l.split_whitespace().last()?))).collect();
    entries.sort_by_key(|(_, name)| *name);
    assert_eq!(
        entries,
        [
            ("drwxr-xr-x", "orchestrator-x86_64-unknown-linux-gnu/"),
            ("-rw-r--r--", "orchestrator-x86_64-unknown-linux-gnu/README.md"),
            ("-rwxr-xr-x", "orchestrator-x86_64-unknown-linux-gnu/orchestrator"),
        ],
        "{listed}"
    );

    let line = std::fs::read_to_string(&packed.checksum_file).expect("checksum file");
    assert_eq!(line, format!("{} *orchestrator-x86_64-unknown-linux-gnu.tar.xz\n", packed.sha256));
    let check = Command::new("sha256sum").arg("-c").arg(&packed.checksum_file).current_dir(&out).output();
    if let Ok(check) = check {
        assert!(check.status.success(), "{check:?}");
    }
    assert!(!out.join("orchestrator-x86_64-unknown-linux-gnu.staging").exists(), "staging removed");
}
