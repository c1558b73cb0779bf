//! The child kept in hand, against a scripted stand-in (`standin/codex_standin.py`) that
//! replays the real `codex app-server` 0.169.0 recordings: a two-turn session through the
//! real pump and core, the isolated environment, the group stop, the lease and its reaper,
//! an over-long line, a crash. Every wait has a deadline; `/proc` is polled, never slept on.

mod support;

use cli_executor::base::child::{Child, ENV_PASS_DEFAULT, Spawn};
use cli_executor::base::group;
use cli_executor::base::lease::{Leases, Reaped};
use cli_executor::base::limits::{LINE_BYTES_MAX, STOP_GRACE_MS};
use cli_executor::base::pump::{Event, Gate, Pump};
use cli_executor::codex::home::CONFIG_TOML_BASE;
use cli_executor::codex::{Codex, Config, Effect, Outcome};
use engine::effect::CommandKind::{Create, Inspect, Send};
use engine::ids::WorkerId;
use engine::model::ConversationState::{Generating, Idle};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use support::{WORKER, command};

/// How long any one wait of these tests may take before it fails.
const WAIT_MS_MAX: u64 = 20_000;

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Python interpreter itself, not a wrapper on `PATH` (a pyenv shim is a shell script
/// that adds its own variables, which would blur the environment test).
fn python() -> PathBuf {
    static PYTHON: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let out = std::process::Command::new("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .expect("python3 on PATH");
            PathBuf::from(String::from_utf8(out.stdout).expect("utf-8").trim())
        })
        .clone()
}

/// A stand-in child for `session`, replaying `two-turns.jsonl`, with `extra` arguments.
fn spec(dirs: &Dirs, session: &str, extra: &[&str]) -> Spawn {
    let mut spec = Spawn::codex(session, &dirs.work, &dirs.data);
    spec.program = python();
    let standin = manifest().join("tests/standin/codex_standin.py");
    let fixture = manifest().join("tests/fixtures/codex-0.169.0/two-turns.jsonl");
    spec.args = vec![standin.display().to_string(), "--fixture".into(), fixture.display().to_string()];
    spec.args.extend(extra.iter().map(|s| s.to_string()));
    spec
}

/// A gate that journals nothing (these tests look at the child, not the journal).
fn open_gate() -> Box<dyn Gate> {
    Box::new(|_, _, _: &str| Ok(()))
}

/// A test's own working directory and executor data dir.
struct Dirs {
    _root: tempfile::TempDir,
    work: PathBuf,
    data: PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir().expect("temp dir");
    let (work, data) = (root.path().join("work"), root.path().join("data"));
    std::fs::create_dir_all(&work).expect("work dir");
    Dirs { _root: root, work, data }
}

/// Far enough ahead that no command of these tests misses its deadline.
fn deadline() -> u64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_millis();
    u64::try_from(now).expect("ms") + 600_000
}

async fn next(session: &mut Pump<Codex>) -> Event<Effect> {
    tokio::time::timeout(Duration::from_millis(WAIT_MS_MAX), session.next())
        .await
        .expect("an event in time")
        .expect("no pump error")
}

/// Pumps until an idle report, returning every event on the way.
async fn until_idle(session: &mut Pump<Codex>) -> Vec<Event<Effect>> {
    let mut seen = Vec::new();
    loop {
        let event = next(session).await;
        let idle = matches!(&event, Event::Effect(Effect::State { report, .. }) if report.state == Idle);
        seen.push(event);
        if idle {
            return seen;
        }
    }
}

/// Asks the stand-in for its environment (`standin/env`).
async fn env_of(child: &mut Child) -> Value {
    child.write_line(&json!({"id": 1, "method": "standin/env"}).to_string()).await.expect("write");
    let line = tokio::time::timeout(Duration::from_millis(WAIT_MS_MAX), child.read_line())
        .await
        .expect("an answer in time")
        .expect("readable")
        .expect("a line");
    let answer: Value = serde_json::from_str(&line).expect("json");
    answer["result"].clone()
}

/// Polls `/proc` until `done` holds, failing after [`WAIT_MS_MAX`].
fn wait_for(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_millis(WAIT_MS_MAX);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Not running any more: no `/proc` entry, or a zombie awaiting its parent.
fn ended(pid: i32) -> bool {
    group::stat(pid).is_none_or(|s| !s.lives())
}

fn lease_path(dirs: &Dirs, session: &str) -> PathBuf {
    dirs.data.join("leases").join(format!("{session}.lease"))
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).expect("metadata").permissions().mode() & 0o777
}

#[tokio::test]
async fn a_two_turn_session_runs_through_the_real_pump_and_core() {
    let dirs = dirs();
    let (leases, reaped) = Leases::open(&dirs.data).await.expect("leases");
    assert_eq!(reaped, []);
    let spec = spec(&dirs, "s-two", &[]);
    let mut session =
        Pump::start(&spec, &leases, Codex::new(Config::unattended(&dirs.work.display().to_string())), open_gate())
            .await
            .expect("started");
    session.command(command(Create, 1, "nonce-a", "", "first prompt", deadline())).await.expect("create");
    let first = until_idle(&mut session).await;
    let thread = first
        .iter()
        .find_map(|e| match e {
            Event::Effect(Effect::Result { outcome: Outcome::Submitted { thread, .. }, .. }) => Some(thread.clone()),
            _ => None,
        })
        .expect("the create was submitted");
    session.command(command(Send, 2, "nonce-b", &thread, "second prompt", deadline())).await.expect("send");
    let second = until_idle(&mut session).await;
    session.command(command(Inspect, 2, "", &thread, "", deadline())).await.expect("inspect");
    let mut third = vec![next(&mut session).await];
    while !matches!(third.last(), Some(Event::Effect(Effect::Thread { .. }))) {
        third.push(next(&mut session).await);
    }
    let events: Vec<Event<Effect>> = first.into_iter().chain(second).chain(third).collect();
    let states: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Effect(Effect::State { report, .. }) => Some((report.state, report.block.clone())),
            _ => None,
        })
        .collect();
    let reply = |n: u32| Some(format!("mock reply {n}"));
    assert_eq!(states, [(Generating, None), (Idle, reply(1)), (Generating, None), (Idle, reply(2)), (Idle, reply(2))]);
    let submitted = events.iter().filter(|e| matches!(e, Event::Effect(Effect::Result { .. }))).count();
    assert_eq!(submitted, 2);
    assert!(!events.iter().any(|e| matches!(e, Event::Effect(Effect::Foreign { .. }))), "our nonces, our turns");
    let Some(Event::Effect(Effect::Thread { worker, record })) = events.last() else { panic!("no thread/read") };
    assert_eq!(*worker, WORKER);
    assert!(record.find("nonce-a").is_some() && record.find("nonce-b").is_some(), "both nonces stored");
    let pgid = session.child().expect("running").pgid();
    let exit = session.stop().await.expect("stopped");
    // Stdin is closed just before the group's SIGTERM: the stand-in ends on either, well
    // within the grace, never by SIGKILL.
    assert!(exit.signal == Some(15) || exit.code == Some(0), "{exit:?}");
    assert!(group::stat(pgid).is_none(), "the leader is reaped, not a zombie");
    assert!(!lease_path(&dirs, "s-two").exists(), "the lease is released");
}

#[tokio::test]
async fn the_child_sees_only_the_allowlist_and_its_own_codex_home() {
    let dirs = dirs();
    let (leases, _) = Leases::open(&dirs.data).await.expect("leases");
    let spec = spec(&dirs, "s-env", &[]);
    let mut child = Child::spawn(&spec, &leases).expect("spawned");
    let seen = env_of(&mut child).await;
    let env = seen["env"].as_object().expect("env");
    let allowed: Vec<&str> = ENV_PASS_DEFAULT.iter().copied().chain(["CODEX_HOME"]).collect();
    let extra: Vec<&String> = env.keys().filter(|k| !allowed.contains(&k.as_str())).collect();
    assert_eq!(extra, Vec::<&String>::new(), "only allowlisted variables");
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some() && !env.contains_key("CARGO_MANIFEST_DIR"));
    assert!(env.contains_key("PATH") && env.contains_key("HOME"));
    let home = spec.home();
    assert_eq!(env["CODEX_HOME"], home.display().to_string());
    assert!(home.starts_with(dirs.data.join("sessions").join("s-env")));
    assert_eq!(seen["config"], CONFIG_TOML_BASE);
    assert_eq!(seen["configMode"], 0o600);
    assert_eq!(mode(&home), 0o700);
    assert_eq!(seen["cwd"], dirs.work.display().to_string());
    assert_eq!(seen["pgid"], seen["pid"], "the child leads its own process group");
    assert_eq!(seen["pid"], child.pgid());
    let lease = lease_path(&dirs, "s-env");
    assert_eq!(mode(&lease), 0o600);
    let text = std::fs::read_to_string(&lease).expect("lease");
    assert!(text.contains(&format!("pgid={}\n", child.pgid())) && text.contains("session=s-env\n"), "{text}");
    let tmp = spec.tmp().expect("a TMPDIR of its own");
    assert_eq!((env["TMPDIR"].as_str(), tmp.root), (Some(&*tmp.path.display().to_string()), None));
    assert_eq!(mode(&tmp.path), 0o700);
    child.stop().await.expect("stopped");
    assert!(!tmp.path.exists(), "the stop removed the child's TMPDIR");
}

#[tokio::test]
async fn a_long_data_dir_gives_the_child_a_short_private_tmpdir_removed_at_its_stop() {
    let dirs = dirs();
    let data = dirs.data.join("d".repeat(100));
    let (leases, _) = Leases::open(&data).await.expect("leases");
    let mut spec = spec(&dirs, "s-long", &[]);
    spec.data_dir.clone_from(&data);
    let tmp = spec.tmp().expect("a TMPDIR of its own");
    let root = tmp.root.clone().expect("a short one");
    // Something a killed child left there: cleared before the next child starts.
    cli_executor::base::tmpdir::prepare(&tmp, &spec.home()).expect("an earlier child's");
    std::fs::write(tmp.path.join("left.sock"), "").expect("left over");
    let mut child = Child::spawn(&spec, &leases).expect("spawned");
    let seen = env_of(&mut child).await;
    assert_eq!(seen["env"]["TMPDIR"].as_str(), Some(&*tmp.path.display().to_string()));
    assert!(tmp.path.as_os_str().len() <= cli_executor::base::limits::TMPDIR_BYTES_MAX, "{tmp:?}");
    assert!(!spec.home().starts_with(&tmp.path));
    assert_eq!((mode(&root), mode(&tmp.path)), (0o700, 0o700));
    assert!(!tmp.path.join("left.sock").exists(), "an earlier child's leftovers are gone");
    child.stop().await.expect("stopped");
    assert!(!tmp.path.exists(), "the stop removed the child's TMPDIR");
}

#[tokio::test]
async fn stop_ends_a_group_that_ignores_sigterm_and_forks() {
    let dirs = dirs();
    let (leases, _) = Leases::open(&dirs.data).await.expect("leases");
    let mut child = Child::spawn(&spec(&dirs, "s-stubborn", &["--ignore-term", "--fork"]), &leases).expect("spawned");
    let seen = env_of(&mut child).await;
    let (pid, grandchild) = (child.pgid(), seen["grandchild"].as_i64().expect("forked") as i32);
    assert_eq!(group::stat(grandchild).expect("grandchild runs").pgrp, pid, "same group");
    let started = Instant::now();
    let exit = child.stop().await.expect("stopped");
    assert_eq!(exit.signal, Some(9), "SIGTERM was ignored, SIGKILL was not: {exit:?}");
    assert!(started.elapsed() >= Duration::from_millis(STOP_GRACE_MS), "the grace came first");
    assert!(group::stat(pid).is_none(), "the leader is reaped");
    wait_for("the grandchild ends", || ended(grandchild));
    assert_eq!(group::members(pid), Vec::<i32>::new());
    assert!(!lease_path(&dirs, "s-stubborn").exists());
}

#[tokio::test]
async fn a_second_child_for_a_leased_session_is_refused() {
    let dirs = dirs();
    let (leases, _) = Leases::open(&dirs.data).await.expect("leases");
    let first = Child::spawn(&spec(&dirs, "s-one", &[]), &leases).expect("first");
    let refused = Child::spawn(&spec(&dirs, "s-one", &[]), &leases).expect_err("second");
    assert_eq!(refused.code(), "LEASED");
    assert_eq!(refused, cli_executor::Error::Leased { session: "s-one".into(), pgid: first.pgid() });
    let other = Child::spawn(&spec(&dirs, "s-other", &[]), &leases).expect("another session is free");
    let bad = Child::spawn(&spec(&dirs, "../escape", &[]), &leases).expect_err("bad id");
    assert_eq!(bad.code(), "BAD_SESSION");
    first.stop().await.expect("stopped");
    other.stop().await.expect("stopped");
    let again = Child::spawn(&spec(&dirs, "s-one", &[]), &leases).expect("free after the stop");
    again.stop().await.expect("stopped");
}

/// A process of the test's own, in its own group, as a crashed executor would leave it;
/// returned once it answered `standin/env` (its signal handling is set up by then).
fn orphan(spec: &Spawn) -> std::process::Child {
    use std::io::{BufRead, Write};
    use std::os::unix::process::CommandExt;
    let mut child = std::process::Command::new(&spec.program)
        .args(&spec.args)
        .env("CODEX_HOME", spec.home())
        .process_group(0)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("orphan");
    let stdin = child.stdin.as_mut().expect("stdin");
    stdin.write_all(b"{\"id\": 1, \"method\": \"standin/env\"}\n").and_then(|()| stdin.flush()).expect("ask");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = tx.send(std::io::BufReader::new(stdout).read_line(&mut line).map(|_| line));
    });
    let line = rx.recv_timeout(Duration::from_millis(WAIT_MS_MAX)).expect("ready in time").expect("answer");
    assert!(line.contains("\"pgid\""), "{line}");
    child
}

#[tokio::test]
async fn stale_leases_are_reaped_at_start_dead_removed_live_killed_reused_spared() {
    let dirs = dirs();
    let (leases, _) = Leases::open(&dirs.data).await.expect("leases");
    // A live stand-in that ignores SIGTERM, under the lease of a crashed executor.
    let live_spec = spec(&dirs, "live", &["--ignore-term"]);
    let mut live = orphan(&live_spec);
    leases.acquire("live", &live_spec.home()).expect("lease").record(live.id() as i32).expect("record");
    // A lease whose group has ended since.
    let dead_spec = spec(&dirs, "dead", &[]);
    let mut dead = orphan(&dead_spec);
    leases.acquire("dead", &dead_spec.home()).expect("lease").record(dead.id() as i32).expect("record");
    drop(dead.stdin.take());
    dead.wait().expect("dead ended");
    // A lease naming a live group that is not the session's (the pid was reused).
    let mut stranger = orphan(&spec(&dirs, "stranger", &[]));
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").expect("boot id");
    let reused = format!("session=reused\npgid={}\nstart=1\nboot={}\nhome=/nowhere\n", stranger.id(), boot.trim());
    std::fs::write(lease_path(&dirs, "reused"), reused).expect("reused lease");
    std::fs::write(lease_path(&dirs, "junk"), "not a lease").expect("junk lease");
    drop(leases);
    // The crashed executor's children left their TMPDIRs.
    let tmps: Vec<PathBuf> = [&live_spec, &dead_spec]
        .map(|spec| {
            let tmp = spec.tmp().expect("a TMPDIR");
            cli_executor::base::tmpdir::prepare(&tmp, &spec.home()).expect("left behind");
            tmp.path
        })
        .into();

    let (leases, reaped) = Leases::open(&dirs.data).await.expect("reopened");
    let junk = lease_path(&dirs, "junk").display().to_string();
    let (live_pid, stranger_pid) = (live.id() as i32, stranger.id() as i32);
    assert_eq!(
        reaped,
        [
            Reaped::Gone { session: "dead".into() },
            Reaped::Corrupt { path: junk },
            Reaped::Killed { session: "live".into(), pgid: live_pid },
            Reaped::Reused { session: "reused".into(), pgid: stranger_pid },
        ]
    );
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(live.wait().expect("reaped").signal(), Some(9), "killed as a group, past its ignored SIGTERM");
    assert!(group::stat(stranger_pid).expect("spared").lives(), "a reused id is never signalled");
    drop(stranger.stdin.take());
    stranger.wait().expect("stranger ends");
    assert_eq!(std::fs::read_dir(dirs.data.join("leases")).expect("dir").count(), 0, "every lease removed");
    for tmp in &tmps {
        assert!(!tmp.exists(), "a reaped session's TMPDIR is removed: {tmp:?}");
    }
    let child = Child::spawn(&live_spec, &leases).expect("the session is free again");
    child.stop().await.expect("stopped");
}

#[tokio::test]
async fn an_over_long_line_is_a_typed_error_and_the_next_line_still_reads() {
    let dirs = dirs();
    let (leases, _) = Leases::open(&dirs.data).await.expect("leases");
    let long = (LINE_BYTES_MAX + 1).to_string();
    let mut child = Child::spawn(&spec(&dirs, "s-long", &["--long-line", &long]), &leases).expect("spawned");
    let error = child.read_line().await.expect_err("too long");
    assert_eq!(error.code(), "LINE_TOO_LONG");
    assert!(matches!(error, cli_executor::Error::LineTooLong { bytes } if bytes > LINE_BYTES_MAX));
    let seen = env_of(&mut child).await;
    assert_eq!(seen["pid"], child.pgid(), "the rest of the long line was skipped");
    child.stop().await.expect("stopped");
}

#[tokio::test]
async fn a_child_crash_is_an_event_and_the_session_keeps_its_thread() {
    let dirs = dirs();
    let (leases, _) = Leases::open(&dirs.data).await.expect("leases");
    let spec = spec(&dirs, "s-crash", &["--exit-after", "turn/start"]);
    let mut session =
        Pump::start(&spec, &leases, Codex::new(Config::unattended(&dirs.work.display().to_string())), open_gate())
            .await
            .expect("started");
    session.command(command(Create, 1, "nonce-a", "", "first prompt", deadline())).await.expect("create");
    let events = until_idle(&mut session).await;
    let Some(Event::Effect(Effect::State { thread, .. })) = events.last() else { panic!("idle") };
    let thread = thread.clone();
    let exited = next(&mut session).await;
    let Event::Exited { exit } = exited else { panic!("not an exit: {exited:?}") };
    assert_eq!(exit.code, Some(3));
    assert_eq!(exit.stderr_tail, "standin: crashing after turn/start\n", "stderr drained");
    let threads: Vec<(WorkerId, String)> = session.core().threads().map(|(w, t)| (w, t.to_string())).collect();
    assert_eq!(threads, [(WORKER, thread)], "kept for thread/resume");
    assert!(session.child().is_none());
    // Between children the pump has nothing to read and the core no deadline: it waits.
    let idle = tokio::time::timeout(Duration::from_millis(50), session.next()).await;
    assert!(idle.is_err(), "no event without a child: {idle:?}");
    assert!(!lease_path(&dirs, "s-crash").exists(), "the lease went with the child");
}
