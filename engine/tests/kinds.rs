//! Executor kinds: a CLI worker needs a workspace, its commands go only to an executor of
//! its kind (never to a browser), its conversation ids have its kind's form, and a binding
//! reported by an executor of another kind is ignored with a `binding.refused` event.

mod support;
use engine::event::EventKind;
use engine::model::Assignment;
use engine::op::{Operation, SpawnArgs};
use engine::{ExecutorKind, RejectionCode, Workspace};
use support::{World, check};

fn spawn(world: &mut World, name: &str, executor: Option<ExecutorKind>, dir: Option<&str>) -> RejectionCode {
    let args = SpawnArgs {
        run: world.engine.workers().next().expect("the root").run,
        name: name.into(),
        display_name: None,
        task_summary: "Do it".into(),
        assignment: Assignment { objective: "Do it.".into(), ..Assignment::default() },
        worktree: None,
        policy: None,
        start: true,
        executor,
        workspace: dir.map(|d| Workspace { directory: d.into(), branch: None }),
    };
    match world.call(Operation::WorkerSpawn(Box::new(args))) {
        Ok(_) => panic!("expected a rejection"),
        Err(r) => r.code,
    }
}

#[test]
fn a_cli_worker_without_a_directory_is_refused_and_nothing_changes() {
    let mut world = check("run auto\nexecutor e1", "");
    let before = world.engine.workers().count();
    assert_eq!(spawn(&mut world, "/root/a", Some(ExecutorKind::Codex), None), RejectionCode::WorkspaceRequired);
    assert_eq!(
        spawn(&mut world, "/root/a", Some(ExecutorKind::Claude), Some("rel/dir")),
        RejectionCode::InvalidArgument
    );
    assert_eq!(spawn(&mut world, "/root/a", Some(ExecutorKind::Codex), Some("/a\0b")), RejectionCode::InvalidArgument);
    let long = format!("/{}", "d".repeat(engine::limits::WORKSPACE_DIRECTORY_BYTES_MAX));
    assert_eq!(spawn(&mut world, "/root/a", Some(ExecutorKind::Codex), Some(&long)), RejectionCode::InvalidArgument);
    assert_eq!(spawn(&mut world, "/root/a", Some(ExecutorKind::Chatgpt), Some("/x")), RejectionCode::InvalidArgument);
    assert_eq!(world.engine.workers().count(), before, "state intact");
    assert!(world.commands.is_empty());
}

#[test]
fn a_codex_worker_waits_for_a_codex_executor_and_never_reaches_the_browser() {
    let mut world = check(
        "run auto
         executor browser
         spawn web
         spawn cli codex dir=/src/app
         advance 1m",
        "browser create web#1 initial bootstrap/v2",
    );
    assert_eq!(world.worker("cli").spec.executor, ExecutorKind::Codex);
    assert_eq!(world.worker("web").spec.executor, ExecutorKind::Chatgpt, "the default");
    let trace = world.script("executor cli-1 kinds=codex");
    assert_eq!(trace, "cli-1 create cli#1 initial bootstrap/v2");
    let create = world.commands.last().expect("the create");
    assert_eq!(create.executor_kind, ExecutorKind::Codex);
    assert_eq!(create.workspace.as_ref().map(|w| &*w.directory), Some("/src/app"));
    let web = world.commands.iter().find(|c| world.name_of(c.worker) == "web").expect("web's create");
    assert_eq!((web.executor_kind, web.workspace.as_ref()), (ExecutorKind::Chatgpt, None));
    // The CLI executor goes away: the next turn waits for it, the browser gets nothing.
    let trace = world.script("submit cli\ndisconnect cli-1\nidle cli\nadvance 10m");
    assert_eq!(trace, "");
    assert!(
        world.commands.iter().filter(|c| c.executor.to_string() == "browser").all(|c| world.name_of(c.worker) == "web")
    );
}

#[test]
fn a_lane_without_a_kind_inherits_its_parents_kind_and_directory() {
    let world = check(
        "run auto
         executor cli-1 kinds=codex,claude
         spawn a claude dir=/src/app detached
         spawn a/b detached
         spawn c detached",
        "",
    );
    let b = &world.worker("a/b").spec;
    assert_eq!((b.executor, b.workspace.as_ref().map(|w| &*w.directory)), (ExecutorKind::Claude, Some("/src/app")));
    assert_eq!(world.worker("c").spec.executor, ExecutorKind::Chatgpt, "/root's kind");
}

#[test]
fn conversation_ids_follow_the_workers_kind() {
    let mut world = check(
        "run auto
         executor browser
         executor cli-1 kinds=codex
         spawn cli codex dir=/src/app detached
         spawn web detached
         attach cli https://chatgpt.com/c/nope
         attach web codex:thread/nope
         attach cli codex:thread/019a-t1",
        "reject INVALID_ARGUMENT
         reject INVALID_ARGUMENT",
    );
    let b = world.worker("cli").binding.as_ref().expect("bound");
    assert_eq!(&*b.conversation, "codex:thread/019a-t1");
    let trace = world.script("bind cli codex:thread/019a-t1 cli-1\nidle cli\nadvance 3s");
    assert_eq!(trace, "cli-1 send cli#1 initial bootstrap/v2");
}

#[test]
fn a_binding_from_an_executor_of_another_kind_is_ignored_with_an_event() {
    let mut world = check(
        "run auto
         executor browser
         executor cli-1 kinds=codex
         spawn cli codex dir=/src/app detached
         attach cli codex:thread/t1
         bind cli codex:thread/t1 browser",
        "",
    );
    let b = world.worker("cli").binding.clone().expect("bound");
    assert_eq!(b.executor, None, "the browser's report was ignored");
    let refused = world.engine.recent_events().find_map(|e| match &e.kind {
        EventKind::BindingRefused { executor, why, .. } => Some((executor.to_string(), why.to_string())),
        _ => None,
    });
    let (executor, why) = refused.expect("a binding.refused event");
    assert_eq!(executor, "browser");
    assert!(why.contains("does not run codex workers"), "{why}");
    // The right executor with the wrong form is refused too; with the right one it binds.
    world.script("bind cli https://chatgpt.com/c/t1 cli-1\nbind cli codex:thread/t1 cli-1");
    let b = world.worker("cli").binding.clone().expect("bound");
    assert_eq!(b.executor.map(|e| e.to_string()).as_deref(), Some("cli-1"));
    assert_eq!(&*b.conversation, "codex:thread/t1");
}

fn create_run(
    world: &mut World,
    executor: Option<ExecutorKind>,
    dir: Option<&str>,
) -> Result<engine::op::Reply, RejectionCode> {
    let root_executor = Box::new(engine::op::RootExecutor {
        executor,
        workspace: dir.map(|d| Workspace { directory: d.into(), branch: Some("night".into()) }),
    });
    world
        .call(Operation::RunCreate {
            task_name: "Overnight".into(),
            root_conversation_name: "Root".into(),
            context: String::new(),
            default_policy: None,
            root_executor,
        })
        .map_err(|r| r.code)
}

#[test]
fn a_run_can_have_a_cli_root_whose_lanes_inherit_its_kind_and_directory() {
    let mut world = World::new();
    assert_eq!(create_run(&mut world, Some(ExecutorKind::Codex), None).err(), Some(RejectionCode::WorkspaceRequired));
    assert_eq!(
        create_run(&mut world, None, Some("/src/app")).err(),
        Some(RejectionCode::InvalidArgument),
        "a chatgpt root has no workspace"
    );
    assert_eq!(world.engine.workers().count(), 0, "nothing was created");
    create_run(&mut world, Some(ExecutorKind::Codex), Some("/src/app")).expect("a codex root");
    let root = world.engine.workers().next().expect("the root").clone();
    assert_eq!(root.spec.executor, ExecutorKind::Codex);
    assert_eq!(root.spec.workspace, Some(Workspace { directory: "/src/app".into(), branch: Some("night".into()) }));
    let args = SpawnArgs {
        run: root.run,
        name: "/root/lane".into(),
        display_name: None,
        task_summary: "Do it".into(),
        assignment: Assignment { objective: "Do it.".into(), ..Assignment::default() },
        worktree: None,
        policy: None,
        start: false,
        executor: None,
        workspace: None,
    };
    world.call(Operation::WorkerSpawn(Box::new(args))).expect("a lane");
    let lane = world.engine.workers().find(|w| w.spec.name == "/root/lane").expect("the lane").clone();
    assert_eq!(lane.spec.executor, ExecutorKind::Codex, "inherited");
    assert_eq!(
        lane.spec.workspace,
        Some(Workspace { directory: "/src/app".into(), branch: None }),
        "the directory, not the branch"
    );
}

#[test]
fn a_cli_root_started_on_a_chatgpt_conversation_is_refused_before_anything_exists() {
    let mut world = World::new();
    let refused = world.call(Operation::RunStart {
        task_name: "Overnight".into(),
        root_conversation_name: "Root".into(),
        context: String::new(),
        default_policy: None,
        root_conversation: Some("https://chatgpt.com/c/abc".into()),
        root_executor: Box::new(engine::op::RootExecutor {
            executor: Some(ExecutorKind::Codex),
            workspace: Some(Workspace { directory: "/src/app".into(), branch: None }),
        }),
    });
    assert_eq!(refused.err().map(|r| r.code), Some(RejectionCode::InvalidArgument));
    assert_eq!(world.engine.workers().count(), 0, "no root, so no run either");
    assert!(
        matches!(world.call(Operation::RunList { include_terminal: true }), Ok(engine::op::Reply::Runs(r)) if r.is_empty())
    );
}

#[test]
fn a_cli_worker_whose_conversation_is_lost_starts_again_on_its_own_host_only() {
    let mut world = check(
        "run auto
         executor cli-b kinds=codex
         spawn cli codex dir=/src/app
         advance 1m
         executor cli-a kinds=codex",
        "cli-b create cli#1 initial bootstrap/v2",
    );
    // Its session is gone on cli-b (the host that holds /src/app): the fresh one a person
    // asks for is made there again, never on cli-a, whose disk may not hold the workspace.
    let trace = world.script("submit cli\nidle cli\nclosed cli\ncli.continue_now\nadvance 1m");
    assert!(trace.contains("cli-b create cli#"), "re-created on its own host: {trace}");
    assert!(!trace.contains("cli-a"), "never on another host: {trace}");
    // Its host is gone when the next one is lost: it waits for it, nothing goes to cli-a.
    let trace =
        world.script("submit cli\nidle cli\nclosed cli\ndisconnect cli-b\ncli.continue_now\nadvance 30m\nshow cli");
    assert!(!trace.contains("cli-a"), "waits for its host: {trace}");
    let trace = world.script("executor cli-b kinds=codex");
    assert!(trace.contains("cli-b create cli#"), "made on its host when it is back: {trace}");
    // Another host that claims its session is refused with an event naming its host.
    world.script("bind cli codex:thread/elsewhere cli-a");
    assert_eq!(
        world.worker("cli").binding.as_ref().and_then(|b| b.executor.clone()).map(|e| e.to_string()).as_deref(),
        Some("cli-b")
    );
    let why = world
        .engine
        .recent_events()
        .filter_map(|e| match &e.kind {
            EventKind::BindingRefused { executor, why, .. } if executor.to_string() == "cli-a" => Some(why.to_string()),
            _ => None,
        })
        .last();
    assert_eq!(why.as_deref(), Some("the worker is pinned to host cli-b, which holds its workspace"));
}
