//! The agent skill `durable-continuation-output` and its packaging: the real `SKILL.md` keeps
//! to its boundary and its frontmatter contract, every example in it is a block the engine's
//! parser accepts with the status it illustrates, and `skill-pack` produces the same archive
//! every time, lists exactly the skill's files and refuses secrets, local state and transcripts.

use std::fs;
use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

use engine::block::{self, BLOCK_FIELD_BYTES_MAX, BlockError, BlockStatus};
use xtask::archive;
use xtask::skill::{self, FrontmatterError, PackError, Refusal, SkillFile};

/// The workspace root: the xtask crate sits directly under it.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn skill_dir() -> PathBuf {
    skill::skill_dir(&root())
}

fn skill_text() -> String {
    fs::read_to_string(skill_dir().join(skill::SKILL_FILE)).expect("SKILL.md is readable")
}

/// `SKILL.md` with its frontmatter lines replaced by `frontmatter`.
fn with_frontmatter(frontmatter: &str) -> String {
    let text = skill_text();
    let body = text.splitn(3, "---\n").nth(2).expect("SKILL.md has frontmatter");
    format!("---\n{frontmatter}---\n{body}")
}

const NAME_LINE: &str = "name: durable-continuation-output\n";
const DESCRIPTION_LINE: &str = "description: Use for every response of a long-running assignment.\n";

fn validate(frontmatter: &str) -> Result<skill::Frontmatter, FrontmatterError> {
    skill::validate_frontmatter(skill::SKILL_NAME, &with_frontmatter(frontmatter))
}

// ---------------------------------------------------------------------------------------
// The real SKILL.md.
// ---------------------------------------------------------------------------------------

#[test]
fn skill_md_leaves_out_every_orchestration_mechanism() {
    let found = skill::boundary_violations(&skill_text());
    assert!(found.is_empty(), "SKILL.md mentions mechanics that belong outside the skill: {found:?}");
}

#[test]
fn the_absence_check_can_fail() {
    for leak in [
        "If the reply stops, click Retry.",
        "Then send `continue`.",
        "Watch the browser tab.",
        "Detect execution boundaries yourself.",
        "Auto-resume will pick it up.",
        "Call the MCP tools to report your lifecycle.",
        "Work in your own worktree.",
        "Follow the project policy on commits.",
    ] {
        assert!(!skill::boundary_violations(leak).is_empty(), "not caught: {leak:?}");
    }
    assert!(skill::boundary_violations("Another execution can continue it; the table is stable.").is_empty());
}

#[test]
fn the_real_frontmatter_is_accepted() {
    let frontmatter = skill::validate_frontmatter(skill::SKILL_NAME, &skill_text()).expect("valid frontmatter");
    assert_eq!(frontmatter.name, skill::SKILL_NAME);
    assert!(frontmatter.description.chars().count() <= skill::DESCRIPTION_CHARS_MAX);
    assert!(frontmatter.description.starts_with("Use for every response"), "say when to use it");
}

#[test]
fn skill_md_states_the_parser_field_limit() {
    let text = skill_text();
    assert!(
        text.contains(&format!("{BLOCK_FIELD_BYTES_MAX} bytes")),
        "SKILL.md must state the parser's field cap of {BLOCK_FIELD_BYTES_MAX} bytes"
    );
    for status in [BlockStatus::Working, BlockStatus::Complete, BlockStatus::Blocked] {
        assert!(text.contains(&format!("`{}`", status.as_str())), "status {} is not explained", status.as_str());
    }
    for key in ["status:", "summary:", "current:", "next:"] {
        assert!(text.contains(&format!("`{key}`")), "key {key} is not defined");
    }
}

// ---------------------------------------------------------------------------------------
// Frontmatter: bad variants.
// ---------------------------------------------------------------------------------------

#[test]
fn a_minimal_frontmatter_and_optional_keys_are_accepted() {
    assert!(validate(&format!("{NAME_LINE}{DESCRIPTION_LINE}")).is_ok());
    let full = format!(
        "{NAME_LINE}{DESCRIPTION_LINE}license: MIT OR Apache-2.0\ncompatibility: Any agent\n\
         metadata:\n  version: \"1\"\n  owner: someone\n"
    );
    assert!(validate(&full).is_ok());
    let quoted = "name: \"durable-continuation-output\"\ndescription: 'Use it: always.'\n";
    assert_eq!(validate(quoted).map(|f| f.description), Ok("Use it: always.".to_string()));
}

#[test]
fn name_must_match_the_folder() {
    assert_eq!(
        validate(&format!("name: continuation-output\n{DESCRIPTION_LINE}")),
        Err(FrontmatterError::NameMismatch {
            name: "continuation-output".to_string(),
            folder: skill::SKILL_NAME.to_string()
        })
    );
    assert_eq!(
        skill::validate_frontmatter("another-folder", &skill_text()).map(|f| f.name),
        Err(FrontmatterError::NameMismatch {
            name: skill::SKILL_NAME.to_string(),
            folder: "another-folder".to_string()
        })
    );
    assert_eq!(validate(DESCRIPTION_LINE), Err(FrontmatterError::NameMissing));
    assert_eq!(
        validate(&format!("name: Durable_Output\n{DESCRIPTION_LINE}")),
        Err(FrontmatterError::NameInvalid("Durable_Output".to_string()))
    );
}

#[test]
fn description_must_be_present() {
    assert_eq!(validate(NAME_LINE), Err(FrontmatterError::DescriptionMissing));
    assert_eq!(validate(&format!("{NAME_LINE}description:\n")), Err(FrontmatterError::DescriptionMissing));
    assert_eq!(validate(&format!("{NAME_LINE}description: \"  \"\n")), Err(FrontmatterError::DescriptionMissing));
}

#[test]
fn description_must_be_one_line() {
    for multiline in [
        "description: |\n  Use for every response.\n",
        "description: >-\n  Use for every response.\n",
        "description: Use for every response\n  of a long-running assignment.\n",
        "description:\n  Use for every response.\n",
    ] {
        assert_eq!(
            validate(&format!("{NAME_LINE}{multiline}")),
            Err(FrontmatterError::DescriptionMultiline),
            "{multiline:?}"
        );
    }
}

#[test]
fn description_must_be_short() {
    let at_limit = "d".repeat(skill::DESCRIPTION_CHARS_MAX);
    assert!(validate(&format!("{NAME_LINE}description: {at_limit}\n")).is_ok());
    let over = "d".repeat(skill::DESCRIPTION_CHARS_MAX + 1);
    assert_eq!(
        validate(&format!("{NAME_LINE}description: {over}\n")),
        Err(FrontmatterError::DescriptionTooLong(skill::DESCRIPTION_CHARS_MAX + 1))
    );
    // Characters, not bytes: a non-ASCII description at the limit is still accepted.
    let wide = "é".repeat(skill::DESCRIPTION_CHARS_MAX);
    assert!(validate(&format!("{NAME_LINE}description: {wide}\n")).is_ok());
}

#[test]
fn only_known_keys_once_each_in_plain_yaml() {
    assert_eq!(
        validate(&format!("{NAME_LINE}{DESCRIPTION_LINE}version: 1.0.0\n")),
        Err(FrontmatterError::UnknownKey("version".to_string()))
    );
    assert_eq!(
        validate(&format!("{NAME_LINE}descripton: typo\n")),
        Err(FrontmatterError::UnknownKey("descripton".to_string()))
    );
    assert_eq!(
        validate(&format!("{NAME_LINE}{DESCRIPTION_LINE}{DESCRIPTION_LINE}")),
        Err(FrontmatterError::DuplicateKey("description".to_string()))
    );
    assert_eq!(
        validate(&format!("{NAME_LINE}description: Use when: always\n")),
        Err(FrontmatterError::NotPlain("description".to_string()))
    );
    assert_eq!(validate(&format!("{NAME_LINE}{DESCRIPTION_LINE}just words\n")), Err(FrontmatterError::BadLine(4)));
    assert_eq!(
        validate(&format!("{NAME_LINE}{DESCRIPTION_LINE}license: MIT\n  indented: x\n")),
        Err(FrontmatterError::BadLine(5))
    );
    assert_eq!(
        validate(&format!("{NAME_LINE}{DESCRIPTION_LINE}metadata: inline\n")),
        Err(FrontmatterError::NotPlain("metadata".to_string()))
    );
}

#[test]
fn frontmatter_must_open_close_and_be_followed_by_a_body() {
    let plain = format!("---\n{NAME_LINE}{DESCRIPTION_LINE}---\n\nBody.\n");
    assert!(skill::parse_frontmatter(&plain).is_ok());
    assert!(skill::parse_frontmatter(&plain.replace('\n', "\r\n")).is_ok(), "CRLF is tolerated");
    assert_eq!(skill::parse_frontmatter("# Title\n"), Err(FrontmatterError::Missing));
    assert_eq!(skill::parse_frontmatter(&format!("\n{plain}")), Err(FrontmatterError::Missing));
    assert_eq!(
        skill::parse_frontmatter(&format!("---\n{NAME_LINE}{DESCRIPTION_LINE}")),
        Err(FrontmatterError::Unterminated)
    );
    assert_eq!(
        skill::parse_frontmatter(&format!("---\n{NAME_LINE}{DESCRIPTION_LINE}---\n \n")),
        Err(FrontmatterError::BodyEmpty)
    );
}

// ---------------------------------------------------------------------------------------
// The skill and the engine's parser agree.
// ---------------------------------------------------------------------------------------

/// One fenced example of `SKILL.md`: the status its heading names and the fence's contents.
struct Example {
    status: BlockStatus,
    body: String,
    fenced: String,
}

/// Every fenced block of `SKILL.md`, each with the status named by the nearest heading above.
fn examples() -> Vec<Example> {
    let text = skill_text();
    let mut out = Vec::new();
    let mut heading = String::new();
    let mut fence: Option<(String, Vec<&str>)> = None;
    for line in text.lines() {
        match &mut fence {
            Some((open, body)) if line.trim_start().starts_with("```") => {
                let status = status_named(&heading).unwrap_or_else(|| panic!("no status in heading {heading:?}"));
                let body = body.join("\n");
                let fenced = format!("{open}\n{body}\n{line}");
                out.push(Example { status, body, fenced });
                fence = None;
            }
            Some((_, body)) => body.push(line),
            None if line.trim_start().starts_with("```") => fence = Some((line.to_string(), Vec::new())),
            None if line.starts_with('#') => heading = line.to_string(),
            None => {}
        }
    }
    assert!(fence.is_none(), "SKILL.md has an unclosed fence");
    out
}

fn status_named(heading: &str) -> Option<BlockStatus> {
    [BlockStatus::Working, BlockStatus::Complete, BlockStatus::Blocked]
        .into_iter()
        .find(|status| heading.to_ascii_lowercase().contains(status.as_str()))
}

#[test]
fn there_is_one_example_per_status() {
    let statuses: Vec<BlockStatus> = examples().iter().map(|e| e.status).collect();
    assert_eq!(statuses, [BlockStatus::Working, BlockStatus::Complete, BlockStatus::Blocked]);
}

#[test]
fn every_example_parses_with_the_status_it_illustrates() {
    for example in examples() {
        for input in [
            example.body.clone(),
            example.fenced.clone(),
            format!("I finished the parser and ran its tests.\n\n{}\n", example.body),
            format!("Some work was done.\r\n\r\n{}\r\n", example.fenced.replace('\n', "\r\n")),
        ] {
            let parsed = block::parse(&input).unwrap_or_else(|e| panic!("{e} for {input:?}"));
            assert_eq!(parsed.status, example.status, "{input:?}");
            assert!(!parsed.summary.is_empty() && !parsed.current.is_empty() && !parsed.next.is_empty());
        }
        let lines: Vec<&str> = example.body.lines().collect();
        assert_eq!(lines.len(), 4, "an example is exactly the four lines");
        let keys: Vec<&str> = lines.iter().filter_map(|line| line.split_once(':')).map(|(key, _)| key).collect();
        assert_eq!(keys, ["status", "summary", "current", "next"], "keys in the documented order");
    }
}

#[test]
fn two_blocks_are_rejected() {
    for example in examples() {
        let body = &example.body;
        assert_eq!(block::parse(&format!("{body}\n\n{body}")), Err(BlockError::Duplicate));
        assert_eq!(block::parse(&format!("{body}\n{body}")), Err(BlockError::Duplicate));
        assert_eq!(block::parse(&format!("{}\n\n{body}", example.fenced)), Err(BlockError::Duplicate));
    }
}

#[test]
fn an_unknown_status_is_rejected() {
    for example in examples() {
        let status_line = format!("status: {}", example.status.as_str());
        for unknown in ["done", "in progress", "working | complete | blocked", ""] {
            let input = example.body.replace(&status_line, &format!("status: {unknown}"));
            assert_eq!(block::parse(&input), Err(BlockError::UnknownStatus), "{input:?}");
        }
    }
}

#[test]
fn a_missing_field_is_rejected() {
    for example in examples() {
        for field in ["status", "summary", "current", "next"] {
            let prefix = format!("{field}:");
            let input: Vec<&str> = example.body.lines().filter(|line| !line.starts_with(&prefix)).collect();
            assert_eq!(block::parse(&input.join("\n")), Err(BlockError::MissingField(field)), "without {field}");
        }
    }
}

#[test]
fn an_oversize_field_is_rejected() {
    for example in examples() {
        for field in ["summary", "current", "next"] {
            let prefix = format!("{field}:");
            let with_value = |value: &str| -> String {
                let lines: Vec<String> = example
                    .body
                    .lines()
                    .map(|line| if line.starts_with(&prefix) { format!("{prefix} {value}") } else { line.to_string() })
                    .collect();
                lines.join("\n")
            };
            let at_limit = with_value(&"x".repeat(BLOCK_FIELD_BYTES_MAX));
            assert_eq!(block::parse(&at_limit).map(|b| b.status), Ok(example.status), "{field} at the limit");
            let over = with_value(&"x".repeat(BLOCK_FIELD_BYTES_MAX + 1));
            assert_eq!(block::parse(&over), Err(BlockError::FieldTooLong(field)), "{field} over the limit");
        }
    }
}

#[test]
fn the_rules_stated_in_the_skill_hold_in_the_parser() {
    let example = examples().into_iter().next().expect("an example");
    let body = &example.body;
    // "Nothing comes after it."
    assert!(block::parse(&format!("{body}\n\nThanks!")).is_err());
    assert!(block::parse(&format!("{body}\nThanks!")).is_err());
    // "Never wrap a value onto a second line."
    let wrapped = body.replacen("\ncurrent:", "\n  and more\ncurrent:", 1);
    assert_eq!(block::parse(&wrapped), Err(BlockError::Malformed));
    // "No blank lines inside it."
    let split = body.replacen("\nsummary:", "\n\nsummary:", 1);
    assert!(block::parse(&split).is_err());
    // "Do not start any other line of the response with `status:`."
    assert_eq!(block::parse(&format!("status: nearly there\n\n{body}")), Err(BlockError::Duplicate));
    // "Do not add bold, headings or other formatting to the keys."
    assert!(block::parse(&body.replace("status:", "**status:**")).is_err());
    // "`next` may be left empty only when the status is `complete`."
    let mut lines: Vec<String> = body.lines().map(str::to_string).collect();
    lines[3] = "next:".to_string();
    assert_eq!(block::parse(&lines.join("\n")), Err(BlockError::MissingField("next")));
    lines[0] = "status: complete".to_string();
    assert_eq!(block::parse(&lines.join("\n")).map(|b| b.status), Ok(BlockStatus::Complete));
}

// ---------------------------------------------------------------------------------------
// Packaging.
// ---------------------------------------------------------------------------------------

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
