//! Rule 14, the rule table of `ARCHITECTURE.md`: the real table names only files and items
//! that exist, and the rule fires on small synthetic tables (a missing file, a missing item,
//! a missing section, a malformed row), so these tests can fail.

use std::collections::BTreeMap;

use crate::root;
use xtask::tidy;
use xtask::tidy_rules::{
    Needle, RULE_TABLE_HEADING, Reference, check_rule_table, found, needles, read_from, references, rule_rows,
    split_cells,
};
use xtask::tidy_violation::{Rule, Violation};

/// A tiny workspace: a Rust file, a scenario and a JavaScript test.
fn files() -> BTreeMap<&'static str, &'static str> {
    BTreeMap::from([
        (
            "engine/src/scheduler/mod.rs",
            "//! The scheduler.\nimpl Engine {\n    pub(crate) fn decide(&self) {}\n    fn floor_at(&self) {}\n}\n\
             pub const IDLE_GRACE_MS_DEFAULT: u64 = 3_000;\nenum Hold { InFlight }\n",
        ),
        ("scenarios/floor-deferral.scn", "workers 3\nexpect completed all\n"),
        (
            "extension/test/unit/queue.test.mjs",
            "test('one command per worker at a time, in arrival order', () => {});\nexport function createWorkQueue() {}\n",
        ),
    ])
}

/// Checks `rows` (table lines after the header) against [`files`].
fn check(rows: &str) -> Vec<Violation> {
    let files = files();
    let text = architecture(rows);
    check_rule_table(Some(&text), &|path| files.get(path).map(|t| t.to_string()))
}

fn architecture(rows: &str) -> String {
    format!(
        "# Architecture\n\n## Invariants\n\nArchitecture Invariant: x.\n\n{RULE_TABLE_HEADING}\n\nProse.\n\n\
         | rule | what it says | owner (file: item) | proved by |\n|---|---|---|---|\n{rows}\n## After\n\n| not | a | rule | row |\n"
    )
}

fn messages(violations: &[Violation]) -> Vec<String> {
    violations.iter().map(|v| v.message.clone()).collect()
}

fn assert_clean(violations: Vec<Violation>) {
    let list: Vec<String> = violations.iter().map(ToString::to_string).collect();
    assert!(violations.is_empty(), "the rule table is broken in {} place(s):\n{}", list.len(), list.join("\n"));
}

const GOOD_ROW: &str = "| `000§10.2.9` | enforce the floor | `engine/src/scheduler/mod.rs` `fn floor_at` `impl Engine::decide` `Hold::InFlight` `const IDLE_GRACE_MS_DEFAULT` | `scenarios/floor-deferral.scn`; `extension/test/unit/queue.test.mjs` `test 'one command per worker'` `function createWorkQueue` |";

#[test]
fn the_real_rule_table_names_only_what_exists() {
    let workspace = tidy::load(&root()).expect("the workspace tree is readable");
    let text = workspace.architecture.as_deref().expect("ARCHITECTURE.md exists");
    let rows = rule_rows(text).expect("ARCHITECTURE.md has the rule table section");
    assert!(rows.len() >= 150, "the table lists every rule of 000 §10-22 and 003: only {} rows", rows.len());
    let root = root();
    assert_clean(check_rule_table(Some(text), &read_from(&root)));
}

#[test]
fn a_good_row_passes() {
    assert_clean(check(GOOD_ROW));
}

#[test]
fn a_missing_file_is_reported_with_its_row() {
    let row = GOOD_ROW.replace("scenarios/floor-deferral.scn", "scenarios/floor-deferal.scn");
    let violations = check(&row);
    assert_eq!(messages(&violations), ["rule 000§10.2.9, proved by: `scenarios/floor-deferal.scn` is not a file"]);
    assert_eq!(violations[0].rule, Rule::RuleTable);
    assert_eq!(violations[0].file, "ARCHITECTURE.md");
    let line = architecture(&row).lines().position(|l| l.contains("floor-deferal")).expect("row") + 1;
    assert_eq!(violations[0].line, line);
}

#[test]
fn a_missing_item_is_reported() {
    let row =
        GOOD_ROW.replace("`fn floor_at`", "`fn floor_after`").replace("'one command per worker'", "'two commands'");
    assert_eq!(
        messages(&check(&row)),
        [
            "rule 000§10.2.9, owner: `fn floor_after` does not occur in `engine/src/scheduler/mod.rs`",
            "rule 000§10.2.9, proved by: `two commands` does not occur in `extension/test/unit/queue.test.mjs`",
        ]
    );
}

#[test]
fn an_item_must_be_a_whole_word_and_an_impl_needs_its_type() {
    let row =
        GOOD_ROW.replace("`Hold::InFlight`", "`Hold::InFli`").replace("impl Engine::decide", "impl Shell::decide");
    assert_eq!(
        messages(&check(&row)),
        [
            "rule 000§10.2.9, owner: `impl Shell` does not occur in `engine/src/scheduler/mod.rs`",
            "rule 000§10.2.9, owner: `InFli` does not occur in `engine/src/scheduler/mod.rs`",
        ]
    );
}

#[test]
fn an_item_in_another_file_is_not_found_in_this_one() {
    let row = "| `r` | x | `scenarios/floor-deferral.scn` `fn decide` | none |";
    assert_eq!(messages(&check(row)), ["rule r, owner: `fn decide` does not occur in `scenarios/floor-deferral.scn`"]);
}

#[test]
fn an_owner_without_a_file_is_reported_but_a_proof_may_be_none() {
    let row = "| `000§15.4` | not required | not implemented | none |";
    assert_eq!(messages(&check(row)), ["rule 000§15.4: name the file that owns it (a backticked path)"]);
}

#[test]
fn prose_spans_before_a_path_or_after_a_semicolon_are_not_items() {
    let row =
        "| `r` | x | not `continue`: `scenarios/floor-deferral.scn`; prose `anything here` | none (`fn nothing`) |";
    assert_clean(check(row));
}

#[test]
fn a_directory_or_a_path_outside_the_workspace_is_not_a_file() {
    let root = root();
    let outside = read_from(&root);
    assert!(outside("../etc/passwd").is_none());
    assert!(outside("/etc/passwd").is_none());
    assert!(outside("engine/src").is_none(), "a directory is not a file");
    assert!(outside("engine/src/lib.rs").is_some());
}

#[test]
fn a_missing_section_or_an_empty_table_is_reported() {
    let files = files();
    let read = |path: &str| files.get(path).map(|t| t.to_string());
    let none = check_rule_table(Some("# Architecture\n\n## Codemap\n"), &read);
    assert_eq!(none.len(), 1);
    assert!(none[0].message.contains(RULE_TABLE_HEADING), "{}", none[0].message);
    let empty = check("");
    assert_eq!(messages(&empty), [format!("the section `{RULE_TABLE_HEADING}` has no table rows")]);
    assert!(check_rule_table(None, &read).is_empty(), "a missing ARCHITECTURE.md is rule 7's");
}

#[test]
fn a_row_with_the_wrong_cells_or_a_repeated_id_is_reported() {
    let short = "| `r` | x | `scenarios/floor-deferral.scn` |";
    assert_eq!(messages(&check(short)), ["a row has 4 cells (rule, what it says, owner, proved by), not 3"]);
    let twice = format!("{GOOD_ROW}\n{GOOD_ROW}");
    let violations = check(&twice);
    assert_eq!(violations.len(), 1);
    assert!(
        violations[0].message.starts_with("rule 000§10.2.9 is already listed on line"),
        "{}",
        violations[0].message
    );
}

#[test]
fn an_unreadable_item_is_reported() {
    let row = "| `r` | x | `scenarios/floor-deferral.scn` `expect completed` `'unclosed` | none |";
    let messages = messages(&check(row));
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].contains("`expect completed`: not an item"), "{}", messages[0]);
    assert!(messages[1].contains("closing quote"), "{}", messages[1]);
}

#[test]
fn only_the_rule_section_is_read() {
    let rows = rule_rows(&architecture(GOOD_ROW)).expect("section");
    assert_eq!(rows.len(), 1, "the header, the separator and the table after the next heading are skipped");
    assert_eq!(rows[0].cells.len(), 4);
}

#[test]
fn cells_split_outside_backticks_and_at_escaped_pipes() {
    assert_eq!(split_cells("| a | `x | y` | b \\| c |"), ["a", "`x | y`", "b | c"]);
}

#[test]
fn references_group_items_under_their_path() {
    let refs = references("`a/b.rs` `fn x` `Y::z`; prose `p`; `c/d.js` `function f` and `e/f.md`");
    assert_eq!(
        refs,
        [
            Reference { path: "a/b.rs".into(), items: vec!["fn x".into(), "Y::z".into()] },
            Reference { path: "c/d.js".into(), items: vec!["function f".into()] },
            Reference { path: "e/f.md".into(), items: vec![] },
        ]
    );
}

#[test]
fn needles_read_keywords_names_and_quotes() {
    let word = |w: &str| Needle::Word(w.to_string());
    assert_eq!(needles("fn decide"), Ok(vec![word("fn decide")]));
    assert_eq!(needles("fn decide()"), Ok(vec![word("fn decide")]));
    assert_eq!(needles("impl Engine::handle_tick"), Ok(vec![word("impl Engine"), word("fn handle_tick")]));
    assert_eq!(needles("Commands.#submitted"), Ok(vec![word("submitted")]));
    assert_eq!(needles("Step::FreshContinue"), Ok(vec![word("FreshContinue")]));
    assert_eq!(needles("test 'a title: with, words'"), Ok(vec![Needle::Literal("a title: with, words".into())]));
    assert_eq!(needles("\"aria-live\""), Ok(vec![Needle::Literal("aria-live".into())]));
    assert!(needles("fn two words").is_err());
}

#[test]
fn words_match_only_whole() {
    let text = "fn decide_more() {}\nlet x = decide;\n";
    assert!(!found(text, &Needle::Word("fn decide".into())));
    assert!(found(text, &Needle::Word("decide".into())));
    assert!(!found(text, &Needle::Word("ecide".into())));
}
