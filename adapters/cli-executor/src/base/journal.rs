//! The executor's durable journal: what it received, how far each command got, which
//! thread each worker is bound to, and the state sequence high-water of each worker.
//! Written and fsynced before anything is written to a child or published to the daemon.
//! It is the executor protocol's journal (what `hello.journal` reports), the counterpart
//! of the browser executor's `extension/src/core/journal.js`; the store's
//! `journal_scan.rs` reads fjall's write-ahead journal, which shares nothing with it.
//!
//! One append-only JSON Lines file, `<state_dir>/journal.jsonl` (0600, in a 0700
//! directory). Every line is a whole record; the last record of a command (or worker)
//! wins:
//!
//! - `{"t":"cmd", "command": <the command as received>, "phase", "stateSeq", "thread"?,
//!   "cwd"?, "outcome"?}`: `received` (the prompt is kept so a restart can still submit
//!   it), `submission-started` (journaled just before the prompt's line is written to the
//!   child; the prompt is dropped from then on), `submitted` or `completed` (with the
//!   `command.result` outcome that was sent); a steer's `landed` (`{landed, seq}`) once its
//!   `steer.landed` is journaled, before it is sent.
//! - `{"t":"bind", "worker", "thread"?, "cwd"?}`: the worker's thread (`None`: closed).
//! - `{"t":"seq", "worker", "seq", "observation"}`: persisted before the state with that
//!   `seq` is published, so sequences keep growing across restarts, an unchanged state is
//!   never republished with a larger `seq` (that would read as a new turn end), and the
//!   next `hello` carries the binding's last state.
//!
//! Opening compacts the file (the reduced records written to a temporary file, synced,
//! renamed over it) and bounds it: at most [`JOURNAL_COMMANDS_MAX`] commands, the oldest
//! finished ones dropped first. A line that does not parse is never taken for "nothing
//! happened": if a command id can be read from it, that command is finished as
//! `AMBIGUOUS_SUBMISSION` (never resent on doubt); and every worker's sequence jumps by
//! [`SEQ_SKIP_ON_DOUBT`], since a lost `seq` line must not let sequences go backwards.
//! Each such line is reported as [`Error::JournalCorrupt`].

use crate::Error;
use crate::base::limits::{JOURNAL_BYTES_MAX, JOURNAL_COMMANDS_MAX, JOURNAL_LINES_COMPACT, SEQ_SKIP_ON_DOUBT};
use engine::ids::{CommandId, WorkerId};
use executor_protocol::{
    CommandWire, ErrorKindWire, ExecutorKindWire, JournalWire, KindWire, LandedWire, ObservationWire, OutcomeWire,
    PhaseWire,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The journal file's name in the state directory.
pub const JOURNAL_FILE_NAME: &str = "journal.jsonl";

/// One command, as journaled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The command as the daemon sent it (its prompt emptied once submission began).
    pub command: CommandWire,
    /// How far it got.
    pub phase: PhaseWire,
    /// The worker's state sequence when submission began (0 before).
    pub state_seq: u64,
    /// The thread the prompt went (or goes) to, once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
    /// The working directory the command named (`workspace.directory`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The `command.result` outcome sent, once completed: a repeated command id gets it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<OutcomeWire>,
    /// For a steer: where it landed (`steer.landed`), journaled before it is sent, so an
    /// executor restarted before the daemon heard it says it again after `hello`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landed: Option<Landing>,
}

/// Where a steer landed, as reported (`steer.landed`'s `landed` and `seq`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Landing {
    /// `merged` or `next_turn`.
    pub landed: LandedWire,
    /// The `seq` the report names (for `next_turn`: the state ending the missed turn).
    pub seq: u64,
}

/// A worker's binding: its thread (or session) and the directory its child runs in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bound {
    /// The Codex thread or Claude session (the conversation is `codex:thread/<thread>` or
    /// `claude:session/<thread>`).
    pub thread: String,
    /// The working directory of the worker's child.
    pub cwd: String,
    /// Which CLI runs it (absent in journals written before Claude workers: Codex).
    #[serde(default = "codex_kind", skip_serializing_if = "is_codex")]
    pub kind: ExecutorKindWire,
}

impl Bound {
    /// The conversation id on the wire (`codex:thread/<id>`, `claude:session/<id>`).
    pub fn conversation_url(&self) -> String {
        let kind = engine::ExecutorKind::from(self.kind);
        kind.conversation_id(&self.thread).unwrap_or_else(|| self.thread.clone())
    }
}

fn codex_kind() -> ExecutorKindWire {
    ExecutorKindWire::Codex
}

fn is_codex(kind: &ExecutorKindWire) -> bool {
    *kind == ExecutorKindWire::Codex
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t")]
enum Line {
    #[serde(rename = "cmd")]
    Command(Box<Entry>),
    #[serde(rename = "bind")]
    Bind {
        #[serde(with = "printed")]
        worker: WorkerId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bound: Option<Bound>,
    },
    #[serde(rename = "seq")]
    Seq {
        #[serde(with = "printed")]
        worker: WorkerId,
        seq: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        observation: Option<ObservationWire>,
    },
}

/// The journal, in memory and on disk.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    /// The open file, appended to and synced after every record.
    file: File,
    entries: BTreeMap<CommandId, Entry>,
    bindings: BTreeMap<WorkerId, Bound>,
    seqs: BTreeMap<WorkerId, u64>,
    /// The last state published for each worker (its `seq` is the high-water's).
    observed: BTreeMap<WorkerId, ObservationWire>,
    /// Lines appended since the last compaction.
    appended: usize,
}

impl Journal {
    /// Opens (or creates) the journal in `state_dir`, compacted; also returns one
    /// [`Error::JournalCorrupt`] per line that did not parse (already acted on, see the
    /// module doc), for the log.
    pub fn open(state_dir: &Path) -> Result<(Journal, Vec<Error>), Error> {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(state_dir)
            .map_err(|e| Error::io("create", state_dir, &e))?;
        let path = state_dir.join(JOURNAL_FILE_NAME);
        let bytes = read_bounded(&path)?;
        let mut entries = BTreeMap::new();
        let mut bindings = BTreeMap::new();
        let mut seqs: BTreeMap<WorkerId, u64> = BTreeMap::new();
        let mut observed = BTreeMap::new();
        let mut doubts = Vec::new();
        let mut doubtful = Vec::new();
        for (number, raw) in bytes.split(|&b| b == b'\n').enumerate() {
            if raw.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Line>(raw) {
                Ok(Line::Command(entry)) => {
                    entries.insert(entry.command.command_id, *entry);
                }
                Ok(Line::Bind { worker, bound: Some(bound) }) => {
                    bindings.insert(worker, bound);
                }
                Ok(Line::Bind { worker, bound: None }) => {
                    bindings.remove(&worker);
                }
                Ok(Line::Seq { worker, seq, observation }) => {
                    let high = seqs.entry(worker).or_default();
                    if seq >= *high {
                        *high = seq;
                        match observation {
                            Some(o) => observed.insert(worker, o),
                            None => observed.remove(&worker),
                        };
                    }
                }
                Err(e) => {
                    doubts.push(Error::JournalCorrupt { line: number + 1, detail: e.to_string() });
                    doubtful.extend(command_id_in(raw));
                }
            }
        }
        if !doubts.is_empty() {
            for entry in entries.values() {
                seqs.entry(entry.command.worker_id).or_default();
            }
            for worker in bindings.keys() {
                seqs.entry(*worker).or_default();
            }
            seqs.values_mut().for_each(|seq| *seq = seq.saturating_add(SEQ_SKIP_ON_DOUBT));
            observed.clear();
        }
        for id in doubtful {
            if let Some(entry) = entries.get_mut(&id).filter(|e| e.phase != PhaseWire::Completed) {
                entry.phase = PhaseWire::Completed;
                entry.command.prompt.clear();
                entry.outcome = Some(OutcomeWire::Failed {
                    code: "AMBIGUOUS_SUBMISSION".to_string(),
                    detail: "the executor's journal line for this command could not be read".to_string(),
                });
            }
        }
        let file = append_handle(&path)?;
        let mut journal = Journal { path, file, entries, bindings, seqs, observed, appended: 0 };
        journal.compact()?;
        Ok((journal, doubts))
    }

    /// The entry of a command, if it was received.
    pub fn entry(&self, id: CommandId) -> Option<&Entry> {
        self.entries.get(&id)
    }

    /// Every entry, oldest command first.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }

    /// Journals a new command as `received`, with the working directory it named.
    pub fn receive(&mut self, command: &CommandWire, cwd: Option<&str>) -> Result<(), Error> {
        if !self.entries.contains_key(&command.command_id) && self.entries.len() >= JOURNAL_COMMANDS_MAX {
            self.prune();
            if self.entries.len() >= JOURNAL_COMMANDS_MAX {
                return Err(Error::JournalFull);
            }
        }
        let entry = Entry {
            command: command.clone(),
            phase: PhaseWire::Received,
            state_seq: 0,
            thread: None,
            cwd: cwd.map(str::to_string),
            outcome: None,
            landed: None,
        };
        self.put(entry)
    }

    /// Submission of `id` into `thread` begins: returns the worker's state sequence now,
    /// which its `submitted` result will carry.
    pub fn submission_started(&mut self, id: CommandId, thread: &str) -> Result<u64, Error> {
        let mut entry = self.entries.get(&id).cloned().ok_or(Error::NotJournaled { command: id.to_string() })?;
        let seq = self.seq(entry.command.worker_id);
        entry.phase = PhaseWire::SubmissionStarted;
        entry.state_seq = seq;
        entry.thread = Some(thread.to_string());
        entry.command.prompt.clear();
        self.put(entry)?;
        Ok(seq)
    }

    /// The command finished with `outcome` (sent to the daemon next).
    pub fn complete(&mut self, id: CommandId, outcome: &OutcomeWire) -> Result<(), Error> {
        let mut entry = self.entries.get(&id).cloned().ok_or(Error::NotJournaled { command: id.to_string() })?;
        entry.phase = PhaseWire::Completed;
        entry.command.prompt.clear();
        entry.outcome = Some(outcome.clone());
        self.put(entry)
    }

    /// Where steer `id` landed (sent to the daemon next).
    pub fn landed(&mut self, id: CommandId, landing: Landing) -> Result<(), Error> {
        let mut entry = self.entries.get(&id).cloned().ok_or(Error::NotJournaled { command: id.to_string() })?;
        entry.landed = Some(landing);
        self.put(entry)
    }

    /// A cancel for a command never received: journaled as completed `CANCELLED`, so the
    /// command itself, should it come later, is never submitted.
    pub fn withdrawn(&mut self, command: &CommandWire, outcome: &OutcomeWire) -> Result<(), Error> {
        self.receive(command, None)?;
        self.complete(command.command_id, outcome)
    }

    /// Binds `worker` to `thread` of a `kind` CLI, its child running in `cwd`.
    pub fn bind(&mut self, worker: WorkerId, thread: &str, cwd: &str, kind: ExecutorKindWire) -> Result<(), Error> {
        let bound = Bound { thread: thread.to_string(), cwd: cwd.to_string(), kind };
        if self.bindings.get(&worker) == Some(&bound) {
            return Ok(());
        }
        self.append(&Line::Bind { worker, bound: Some(bound.clone()) })?;
        self.bindings.insert(worker, bound);
        Ok(())
    }

    /// Forgets `worker`'s binding (`conversation.close`).
    pub fn unbind(&mut self, worker: WorkerId) -> Result<(), Error> {
        if self.bindings.contains_key(&worker) {
            self.append(&Line::Bind { worker, bound: None })?;
            self.bindings.remove(&worker);
        }
        Ok(())
    }

    /// The worker's binding.
    pub fn binding(&self, worker: WorkerId) -> Option<&Bound> {
        self.bindings.get(&worker)
    }

    /// Every binding.
    pub fn bindings(&self) -> impl Iterator<Item = (WorkerId, &Bound)> {
        self.bindings.iter().map(|(w, b)| (*w, b))
    }

    /// The worker's last published state sequence (0: none yet).
    pub fn seq(&self, worker: WorkerId) -> u64 {
        self.seqs.get(&worker).copied().unwrap_or(0)
    }

    /// The sequence for publishing `observation` (its own `seq` ignored), persisted with
    /// it first; `None` when it equals the last state published for the worker, which is
    /// then not published again.
    pub fn publish(&mut self, worker: WorkerId, observation: &ObservationWire) -> Result<Option<u64>, Error> {
        let seq = self.seq(worker) + 1;
        let observation = ObservationWire { seq, ..observation.clone() };
        if self.observed.get(&worker).is_some_and(|last| ObservationWire { seq, ..last.clone() } == observation) {
            return Ok(None);
        }
        self.append(&Line::Seq { worker, seq, observation: Some(observation.clone()) })?;
        self.seqs.insert(worker, seq);
        self.observed.insert(worker, observation);
        Ok(Some(seq))
    }

    /// The last state published for the worker.
    pub fn observed(&self, worker: WorkerId) -> Option<&ObservationWire> {
        self.observed.get(&worker)
    }

    /// The reset (`untilMs`) of the usage or rate limit the worker's conversation was last
    /// published under, if that is its last state: kept across restarts with it.
    pub fn limit_until(&self, worker: WorkerId) -> Option<u64> {
        let limited =
            |o: &&ObservationWire| matches!(o.error_kind, Some(ErrorKindWire::UsageLimit | ErrorKindWire::RateLimited));
        self.observed(worker).filter(limited).and_then(|o| o.until_ms)
    }

    /// The nonces (idempotency keys) sent on `thread`, oldest first: the new child's core
    /// tells our turns from foreign ones with them.
    pub fn nonces(&self, thread: &str) -> Vec<String> {
        let sent = |e: &&Entry| e.phase != PhaseWire::Received && e.thread.as_deref() == Some(thread);
        self.entries.values().filter(sent).map(|e| e.command.idempotency_key.clone()).collect()
    }

    /// The journal lines for `hello`. A finished command that failed is left out (as the
    /// extension does): the daemon reads `completed` as submitted, so it re-sends that
    /// command instead, and it is answered with the stored failure.
    pub fn hello_lines(&self) -> Vec<JournalWire> {
        let failed = |e: &Entry| matches!(e.outcome, Some(OutcomeWire::Failed { .. }));
        let journaled =
            |e: &&Entry| !failed(e) && matches!(e.command.kind, KindWire::Create | KindWire::Send | KindWire::Steer);
        self.entries
            .values()
            .filter(journaled)
            .map(|e| JournalWire {
                command_id: e.command.command_id,
                phase: e.phase,
                state_seq: e.state_seq,
                conversation_url: match (&e.command.kind, &e.outcome) {
                    (KindWire::Create, Some(OutcomeWire::Submitted { conversation_url, .. })) => {
                        conversation_url.clone()
                    }
                    _ => None,
                },
            })
            .collect()
    }

    fn put(&mut self, entry: Entry) -> Result<(), Error> {
        self.append(&Line::Command(Box::new(entry.clone())))?;
        self.entries.insert(entry.command.command_id, entry);
        if self.appended >= JOURNAL_LINES_COMPACT {
            self.compact()?;
        }
        Ok(())
    }

    /// Appends one record and syncs it to disk.
    fn append(&mut self, line: &Line) -> Result<(), Error> {
        let mut text = serde_json::to_vec(line).map_err(|e| Error::io_text("encode journal", &self.path, e))?;
        text.push(b'\n');
        self.file
            .write_all(&text)
            .and_then(|()| self.file.sync_data())
            .map_err(|e| Error::io("append journal", &self.path, &e))?;
        self.appended += 1;
        Ok(())
    }

    /// Drops the oldest finished commands past the bound.
    fn prune(&mut self) {
        let over = self.entries.len().saturating_sub(JOURNAL_COMMANDS_MAX.saturating_sub(1));
        let done: Vec<CommandId> = self
            .entries
            .iter()
            .filter(|(_, e)| e.phase == PhaseWire::Completed)
            .map(|(id, _)| *id)
            .take(over)
            .collect();
        done.iter().for_each(|id| {
            self.entries.remove(id);
        });
    }

    /// Rewrites the file with one record per command, binding and worker sequence.
    fn compact(&mut self) -> Result<(), Error> {
        if self.entries.len() > JOURNAL_COMMANDS_MAX {
            self.prune();
        }
        let mut text = Vec::new();
        let lines = self
            .bindings
            .iter()
            .map(|(w, b)| Line::Bind { worker: *w, bound: Some(b.clone()) })
            .chain(self.seqs.iter().map(|(w, s)| Line::Seq {
                worker: *w,
                seq: *s,
                observation: self.observed.get(w).cloned(),
            }))
            .chain(self.entries.values().map(|e| Line::Command(Box::new(e.clone()))));
        for line in lines {
            serde_json::to_writer(&mut text, &line).map_err(|e| Error::io_text("encode journal", &self.path, e))?;
            text.push(b'\n');
        }
        let temp = self.path.with_extension("jsonl.tmp");
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temp)
            .and_then(|mut f| f.write_all(&text).and_then(|()| f.sync_all()))
            .map_err(|e| Error::io("write journal", &temp, &e))?;
        fs::rename(&temp, &self.path).map_err(|e| Error::io("replace journal", &self.path, &e))?;
        if let Some(dir) = self.path.parent() {
            File::open(dir).and_then(|d| d.sync_all()).map_err(|e| Error::io("sync", dir, &e))?;
        }
        self.file = append_handle(&self.path)?;
        self.appended = 0;
        Ok(())
    }
}

/// The journal's bytes, at most [`JOURNAL_BYTES_MAX`] ([`Error::JournalTooLarge`] past it).
fn read_bounded(path: &Path) -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::new();
    match File::open(path) {
        Ok(file) => {
            file.take(JOURNAL_BYTES_MAX + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| Error::io("read journal", path, &e))?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(bytes),
        Err(e) => return Err(Error::io("open journal", path, &e)),
    }
    if bytes.len() as u64 > JOURNAL_BYTES_MAX {
        return Err(Error::JournalTooLarge { path: path.display().to_string() });
    }
    Ok(bytes)
}

fn append_handle(path: &Path) -> Result<File, Error> {
    OpenOptions::new().append(true).create(true).mode(0o600).open(path).map_err(|e| Error::io("open journal", path, &e))
}

/// The command id an unreadable line names (`"commandId":"cmd-N"`), if one can be read.
fn command_id_in(raw: &[u8]) -> Option<CommandId> {
    let text = String::from_utf8_lossy(raw);
    let rest = &text[text.find("\"commandId\":\"cmd-")? + "\"commandId\":\"cmd-".len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let attempt = format!("exe-{digits}").parse().ok()?;
    Some(CommandId { attempt })
}

/// Serde for worker ids in their printed form (`wrk-7`).
mod printed {
    use engine::ids::WorkerId;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(id: &WorkerId, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(id)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<WorkerId, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests;
