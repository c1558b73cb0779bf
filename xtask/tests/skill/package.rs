//! `skill-pack` produces the same archive every time, lists exactly the skill's files and
//! refuses secrets, local state and transcripts.

use crate::{DESCRIPTION_LINE, skill_dir, skill_text};
use std::fs;
use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};
use xtask::archive;
use xtask::skill::{self, FrontmatterError, PackError, Refusal, SkillFile};

#[test]
fn packaging_the_real_skill_twice_gives_identical_bytes() {
    let first = tempfile::tempdir().expect("temp dir");
    let second = tempfile::tempdir().expect("temp dir");
    let a = skill::pack(&skill_dir(), first.path()).expect("first pack");
    let b = skill::pack(&skill_dir(), second.path()).expect("second pack");
    assert_eq!(a.path, first.path().join("durable-continuation-output.zip"));
    let bytes_a = fs::read(&a.path).expect("first archive");
    let bytes_b = fs::read(&b.path).expect("second archive");
    assert!(bytes_a == bytes_b, "two runs gave different archives");
    assert_eq!(bytes_a, a.package.bytes);
    // Packing again over an existing archive replaces it with the same bytes.
    let again = skill::pack(&skill_dir(), first.path()).expect("third pack");
    assert_eq!(fs::read(&again.path).expect("archive"), bytes_a);
}

#[test]
fn the_real_archive_lists_exactly_the_skill() {
    let package = skill::package(&skill_dir()).expect("package");
    assert_eq!(package.entries, ["durable-continuation-output/SKILL.md"]);
    let entries = archive::read(&package.bytes).expect("reads back");
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].data, fs::read(skill_dir().join("SKILL.md")).expect("SKILL.md"));
}

/// One entry as the `zip` crate sees it.
#[derive(Debug, PartialEq, Eq)]
struct Listed {
    name: String,
    data: Vec<u8>,
    unix_mode: Option<u32>,
    /// (year, month, day, hour, minute, second) of the DOS timestamp.
    modified: (u16, u8, u8, u8, u8, u8),
    stored: bool,
}

/// Lists an archive with the `zip` crate: an independent reader, standing in for the
/// uploader's unzip. Reading each entry to the end checks its CRC.
fn list_independently(bytes: &[u8]) -> Vec<Listed> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).expect("a valid ZIP");
    (0..zip.len())
        .map(|index| {
            let mut file = zip.by_index(index).expect("entry");
            let mut data = Vec::new();
            file.read_to_end(&mut data).expect("entry data, CRC checked");
            let t = file.last_modified().expect("a timestamp");
            Listed {
                name: file.name().expect("a UTF-8 name").into_owned(),
                data,
                unix_mode: file.unix_mode(),
                modified: (t.year(), t.month(), t.day(), t.hour(), t.minute(), t.second()),
                stored: file.compression() == zip::CompressionMethod::Stored,
            }
        })
        .collect()
}

#[test]
fn an_independent_unzip_reads_the_archive() {
    let package = skill::package(&skill_dir()).expect("package");
    let listed = list_independently(&package.bytes);
    let skill_md = fs::read(skill_dir().join("SKILL.md")).expect("SKILL.md");
    let expected = Listed {
        name: "durable-continuation-output/SKILL.md".to_string(),
        data: skill_md,
        unix_mode: Some(0o100_644),
        modified: (1980, 1, 1, 0, 0, 0),
        stored: true,
    };
    assert_eq!(listed, [expected]);
}

/// A skill folder in a temp dir, with `SKILL.md` named for `name` plus `extra` files.
fn fixture(name: &str, extra: &[(&str, &[u8])]) -> (tempfile::TempDir, PathBuf) {
    let temp = tempfile::tempdir().expect("temp dir");
    let dir = temp.path().join(name);
    fs::create_dir(&dir).expect("skill dir");
    let text = format!("---\nname: {name}\n{DESCRIPTION_LINE}---\n\n# Fixture\n\nBody.\n");
    fs::write(dir.join("SKILL.md"), text).expect("SKILL.md");
    for (path, bytes) in extra {
        let path = dir.join(path);
        fs::create_dir_all(path.parent().expect("a parent")).expect("parent dirs");
        fs::write(path, bytes).expect("fixture file");
    }
    (temp, dir)
}

#[test]
fn a_fixture_archive_holds_its_files_sorted_under_the_skill_folder() {
    let (_temp, dir) = fixture(
        "fixture-skill",
        &[("scripts/run.py", b"print(1)\n"), ("README.md", b"readme\n"), ("assets/a-b.txt", b"ab\n")],
    );
    let package = skill::package(&dir).expect("package");
    let expected = [
        "fixture-skill/README.md",
        "fixture-skill/SKILL.md",
        "fixture-skill/assets/a-b.txt",
        "fixture-skill/scripts/run.py",
    ];
    assert_eq!(package.entries, expected);
    let names: Vec<String> = list_independently(&package.bytes).into_iter().map(|entry| entry.name).collect();
    assert_eq!(names, expected);
}

#[test]
fn timestamps_and_permissions_on_disk_do_not_change_the_bytes() {
    let (_temp, dir) = fixture("fixture-skill", &[("notes.md", b"notes\n")]);
    let before = skill::package(&dir).expect("package").bytes;
    let file = fs::File::options().write(true).open(dir.join("notes.md")).expect("open");
    file.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_234_567_890)).expect("set mtime");
    drop(file);
    set_mode(&dir.join("notes.md"), 0o600);
    let after = skill::package(&dir).expect("package").bytes;
    assert!(before == after, "mtime or mode leaked into the archive");
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) {}

#[test]
fn a_folder_whose_name_differs_from_the_frontmatter_is_refused() {
    let (_temp, dir) = fixture("fixture-skill", &[]);
    let renamed = dir.with_file_name("renamed-skill");
    fs::rename(&dir, &renamed).expect("rename");
    let err = skill::package(&renamed).expect_err("name mismatch");
    assert!(matches!(err, PackError::Frontmatter(FrontmatterError::NameMismatch { .. })), "{err}");
}

#[test]
fn a_folder_without_skill_md_is_refused() {
    let (_temp, dir) = fixture("fixture-skill", &[]);
    fs::rename(dir.join("SKILL.md"), dir.join("skill.txt")).expect("rename");
    assert!(matches!(skill::package(&dir), Err(PackError::SkillFileMissing)));
}

#[test]
fn a_skill_md_that_leaks_mechanics_is_refused() {
    let (_temp, dir) = fixture("fixture-skill", &[]);
    let text = fs::read_to_string(dir.join("SKILL.md")).expect("read") + "\nIf it stops, click Retry.\n";
    fs::write(dir.join("SKILL.md"), text).expect("write");
    let err = skill::package(&dir).expect_err("boundary");
    assert!(matches!(&err, PackError::Boundary(terms) if terms.contains(&"retry") && terms.contains(&"click")));
}

#[test]
fn secret_looking_names_are_refused() {
    let cases: [(&str, Refusal); 22] = [
        (".env", Refusal::Hidden),
        (".git/config", Refusal::Hidden),
        ("assets/.DS_Store", Refusal::Hidden),
        ("deploy.key", Refusal::SecretName),
        ("certs/server.pem", Refusal::SecretName),
        ("id_rsa", Refusal::SecretName),
        ("id_ed25519.pub", Refusal::SecretName),
        ("github-token.txt", Refusal::SecretName),
        ("client_secret.json", Refusal::SecretName),
        ("prod.env", Refusal::SecretName),
        ("state.sqlite", Refusal::LocalState),
        ("cache.db", Refusal::LocalState),
        ("server.log", Refusal::LocalState),
        ("logs/debug.log", Refusal::LocalState),
        ("SKILL.md~", Refusal::LocalState),
        ("transcript.md", Refusal::Transcript),
        ("transcripts/2026-01-01.md", Refusal::Transcript),
        ("conversation-export.json", Refusal::Transcript),
        ("session.har", Refusal::Transcript),
        ("messages.jsonl", Refusal::Transcript),
        ("notes draft.md", Refusal::UnusualName),
        ("résumé.md", Refusal::UnusualName),
    ];
    for (path, refusal) in cases {
        assert_eq!(skill::screen_name(path), Some(refusal), "{path}");
        let (_temp, dir) = fixture("fixture-skill", &[(path, b"harmless\n")]);
        let err = skill::package(&dir).expect_err(path);
        assert_eq!(err.refusal(), Some(refusal), "{path}: {err}");
        let message = err.to_string();
        assert!(message.contains("refused") && message.contains(refusal.reason()), "{message}");
    }
    for path in ["SKILL.md", "README.md", "scripts/check_output.py", "assets/example-block.txt", "LICENSE"] {
        assert_eq!(skill::screen_name(path), None, "{path}");
    }
}

/// Secret-looking strings, assembled at run time so that no scanner flags this file.
fn secret_contents() -> Vec<(String, Refusal)> {
    let header = |label: &str| format!("-----{} {label}-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n", "BEGIN");
    let digits = "a1B2c3D4".repeat(4);
    vec![
        (header("PRIVATE KEY"), Refusal::PrivateKey),
        (header("RSA PRIVATE KEY"), Refusal::PrivateKey),
        (header("OPENSSH PRIVATE KEY"), Refusal::PrivateKey),
        (header("ENCRYPTED PRIVATE KEY"), Refusal::PrivateKey),
        (header("PGP PRIVATE KEY BLOCK"), Refusal::PrivateKey),
        (format!("OPENAI_API_KEY={}-{digits}\n", "sk"), Refusal::ApiToken),
        (format!("key: {}-proj-{digits}\n", "sk"), Refusal::ApiToken),
        (format!("token {}_{digits}\n", "ghp"), Refusal::ApiToken),
        (format!("{}_{digits}\n", "github_pat"), Refusal::ApiToken),
        (format!("aws {}{}\n", "AKIA", "ABCD1234EFGH5678"), Refusal::ApiToken),
        (format!("{}-{}\n", "xoxb", "1234567890-abcdef"), Refusal::ApiToken),
    ]
}

#[test]
fn secret_looking_contents_are_refused() {
    for (content, refusal) in secret_contents() {
        assert_eq!(skill::screen_content(content.as_bytes()), Some(refusal), "{content:?}");
        let (_temp, dir) = fixture("fixture-skill", &[("notes.md", content.as_bytes())]);
        let err = skill::package(&dir).expect_err("secret content");
        assert_eq!(err.refusal(), Some(refusal), "{content:?}: {err}");
    }
    // The same checks run on SKILL.md itself.
    let (content, refusal) = secret_contents().swap_remove(5);
    let (_temp, dir) = fixture("fixture-skill", &[]);
    let text = fs::read_to_string(dir.join("SKILL.md")).expect("read") + &content;
    fs::write(dir.join("SKILL.md"), text).expect("write");
    assert_eq!(skill::package(&dir).expect_err("secret in SKILL.md").refusal(), Some(refusal));
}

#[test]
fn ordinary_contents_are_not_taken_for_secrets() {
    for harmless in [
        "-----BEGIN CERTIFICATE-----\n",
        "-----BEGIN PUBLIC KEY-----\n",
        "Use scikit-learn: pip install sk-learn-is-not-a-package\n",
        "a task-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 id\n",
        "sk-short1\n",
    ] {
        assert_eq!(skill::screen_content(harmless.as_bytes()), None, "{harmless:?}");
    }
    assert_eq!(skill::screen_content(skill_text().as_bytes()), None);
}

#[cfg(unix)]
#[test]
fn symlinks_are_refused() {
    let (_temp, dir) = fixture("fixture-skill", &[]);
    std::os::unix::fs::symlink("/etc/hostname", dir.join("link.md")).expect("symlink");
    assert_eq!(skill::package(&dir).expect_err("symlink").refusal(), Some(Refusal::NotRegular));
}

#[test]
fn in_memory_files_are_screened_too() {
    let skill_md = fs::read(skill_dir().join("SKILL.md")).expect("SKILL.md");
    let ok = [SkillFile::new("SKILL.md", &skill_md)];
    assert!(skill::package_files(skill::SKILL_NAME, &ok).is_ok());
    let bad = [SkillFile::new("SKILL.md", &skill_md), SkillFile::new("run.log", b"x")];
    assert_eq!(skill::package_files(skill::SKILL_NAME, &bad).expect_err("log").refusal(), Some(Refusal::LocalState));
    let twice = [SkillFile::new("SKILL.md", &skill_md), SkillFile::new("SKILL.md", &skill_md)];
    assert!(matches!(skill::package_files(skill::SKILL_NAME, &twice), Err(PackError::DuplicatePath(_))));
}

#[test]
fn verification_rejects_an_archive_that_does_not_match_the_folder() {
    let skill_md = fs::read(skill_dir().join("SKILL.md")).expect("SKILL.md");
    let files = [SkillFile::new("SKILL.md", &skill_md)];
    let name = skill::SKILL_NAME;
    let extra = archive::write(&[
        ("durable-continuation-output/SKILL.md", &skill_md),
        ("durable-continuation-output/zz.md", b"extra"),
    ])
    .expect("archive");
    assert!(matches!(skill::verify_archive(name, &files, &extra), Err(PackError::ArchiveMismatch { .. })));
    let flat = archive::write(&[("SKILL.md", &skill_md)]).expect("archive");
    assert!(matches!(skill::verify_archive(name, &files, &flat), Err(PackError::ArchiveMismatch { .. })));
    let changed = archive::write(&[("durable-continuation-output/SKILL.md", b"other")]).expect("archive");
    assert!(matches!(skill::verify_archive(name, &files, &changed), Err(PackError::ArchiveMismatch { .. })));
    let good = archive::write(&[("durable-continuation-output/SKILL.md", &skill_md)]).expect("archive");
    assert!(skill::verify_archive(name, &files, &good).is_ok());
}

#[test]
fn the_command_line_packs_into_the_given_folder() {
    let out = tempfile::tempdir().expect("temp dir");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["skill-pack", "--out"])
        .arg(out.path())
        .output()
        .expect("run xtask");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    let path = out.path().join("durable-continuation-output.zip");
    let bytes = fs::read(&path).expect("archive written");
    assert!(stdout.contains("durable-continuation-output/SKILL.md"), "{stdout}");
    assert!(stdout.contains(&format!("{} bytes", bytes.len())), "{stdout}");
    assert!(stdout.contains(&format!("crc32 {:08x}", crc32fast_hash(&bytes))), "{stdout}");
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_xtask")).args(["skill-pack", "--bogus"]).output();
    assert_eq!(bad.expect("run xtask").status.code(), Some(2));
}

/// CRC-32 (IEEE) of `bytes`, bit by bit, independent of the crate the packager uses.
fn crc32fast_hash(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for byte in bytes {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}
