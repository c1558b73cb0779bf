//! Continuation policy on the wire: a partial patch in, the full policy out.

use engine::deadman::DeadManMode;
use engine::op::PolicySource;
use engine::policy::{ContinuationPolicy, Mode, PolicyPatch};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

/// Manual or automatic continuation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ModeArg {
    /// Only explicit operator or root actions start another turn (the default).
    Manual,
    /// The orchestrator resumes the worker whenever it is runnable and its turn ended.
    Auto,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Manual => Mode::Manual,
            ModeArg::Auto => Mode::Auto,
        }
    }
}

/// Fields of the continuation policy to change; absent fields keep their value. For the
/// four stall thresholds, `null` disables the threshold.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyPatchArgs {
    /// `manual` (default) or `auto` (resume automatically when a turn ends and the worker is unfinished).
    #[serde(default)]
    pub mode: Option<ModeArg>,
    /// How long a conversation must stay idle before an idle resume goes out (0-600000 ms; default 3000).
    #[serde(default)]
    pub idle_grace_ms: Option<u64>,
    /// Lower bound of the jittered active keepalive checkpoint (ms; default 1200000).
    #[serde(default)]
    pub active_keepalive_min_ms: Option<u64>,
    /// Upper bound of the jittered active keepalive checkpoint (ms; default 1260000).
    #[serde(default)]
    pub active_keepalive_max_ms: Option<u64>,
    /// Anti-spam floor between continuation deliveries that are not idle resumes (ms; default 900000).
    #[serde(default)]
    pub min_continuation_spacing_ms: Option<u64>,
    /// Whether an idle conversation may be resumed before the anti-spam floor expires (default true).
    #[serde(default)]
    pub idle_may_bypass_min_spacing: Option<bool>,
    /// Reserved: recorded, not yet enforced.
    #[serde(default)]
    pub require_progress_heartbeat: Option<bool>,
    /// Attempts without durable progress before a stall warning (default 10; null disables).
    #[serde(default, deserialize_with = "present")]
    pub stall_warning_after_no_progress_attempts: Option<Option<u32>>,
    /// Attempts without durable progress before the worker is paused for stall (default 20; null disables).
    #[serde(default, deserialize_with = "present")]
    pub stall_pause_after_no_progress_attempts: Option<Option<u32>>,
    /// Execution time without durable progress before a stall warning (ms; default 1800000; null disables).
    #[serde(default, deserialize_with = "present")]
    pub stall_warning_after_no_progress_ms: Option<Option<u64>>,
    /// Execution time without durable progress before a stall pause (ms; default 3600000; null disables).
    #[serde(default, deserialize_with = "present")]
    pub stall_pause_after_no_progress_ms: Option<Option<u64>>,
    /// Run policy only (run_create, run_set_default_continuation): what happens when the run
    /// stops moving while nobody looks: `off` (default), `notify` (raise "stopped moving" for
    /// the operator) or `recover` (notify, and reopen /root once in a fresh conversation).
    #[serde(default)]
    pub dead_man: Option<DeadManModeArg>,
    /// Run policy only: how long the run may go without a delivered turn or durable progress
    /// before the dead-man layer acts (60000-604800000 ms; default 2700000; null disables).
    #[serde(default, deserialize_with = "present")]
    pub dead_man_after_ms: Option<Option<u64>>,
}

/// What the dead-man layer does when a run stops moving.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeadManModeArg {
    /// Nothing (the default).
    Off,
    /// Raise "stopped moving" for the operator; nothing is typed.
    Notify,
    /// Notify, and reopen /root once in a fresh conversation with the recovery prompt.
    Recover,
}

impl From<DeadManModeArg> for DeadManMode {
    fn from(m: DeadManModeArg) -> DeadManMode {
        match m {
            DeadManModeArg::Off => DeadManMode::Off,
            DeadManModeArg::Notify => DeadManMode::Notify,
            DeadManModeArg::Recover => DeadManMode::Recover,
        }
    }
}

/// A present field (even `null`) is `Some(..)`; an absent one stays `None` by `default`.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

impl From<PolicyPatchArgs> for PolicyPatch {
    fn from(p: PolicyPatchArgs) -> PolicyPatch {
        PolicyPatch {
            mode: p.mode.map(Mode::from),
            idle_grace_ms: p.idle_grace_ms,
            active_keepalive_min_ms: p.active_keepalive_min_ms,
            active_keepalive_max_ms: p.active_keepalive_max_ms,
            min_continuation_spacing_ms: p.min_continuation_spacing_ms,
            idle_may_bypass_min_spacing: p.idle_may_bypass_min_spacing,
            require_progress_heartbeat: p.require_progress_heartbeat,
            stall_warning_after_no_progress_attempts: p.stall_warning_after_no_progress_attempts,
            stall_pause_after_no_progress_attempts: p.stall_pause_after_no_progress_attempts,
            stall_warning_after_no_progress_ms: p.stall_warning_after_no_progress_ms,
            stall_pause_after_no_progress_ms: p.stall_pause_after_no_progress_ms,
            dead_man: p.dead_man.map(DeadManMode::from),
            dead_man_after_ms: p.dead_man_after_ms,
        }
    }
}

/// A complete continuation policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyOut {
    /// `manual` or `auto`.
    pub mode: String,
    /// Idle grace before an idle resume, ms.
    pub idle_grace_ms: u64,
    /// Keepalive checkpoint window start, ms after a submission.
    pub active_keepalive_min_ms: u64,
    /// Keepalive checkpoint window end, ms after a submission.
    pub active_keepalive_max_ms: u64,
    /// Anti-spam floor for non-idle deliveries, ms.
    pub min_continuation_spacing_ms: u64,
    /// Whether idle resumes bypass the floor.
    pub idle_may_bypass_min_spacing: bool,
    /// Reserved.
    pub require_progress_heartbeat: bool,
    /// Stall warning after this many attempts without progress (null: never).
    pub stall_warning_after_no_progress_attempts: Option<u32>,
    /// Stall pause after this many attempts without progress (null: never).
    pub stall_pause_after_no_progress_attempts: Option<u32>,
    /// Stall warning after this much execution time without progress, ms (null: never).
    pub stall_warning_after_no_progress_ms: Option<u64>,
    /// Stall pause after this much execution time without progress, ms (null: never).
    pub stall_pause_after_no_progress_ms: Option<u64>,
}

impl From<&ContinuationPolicy> for PolicyOut {
    fn from(p: &ContinuationPolicy) -> PolicyOut {
        PolicyOut {
            mode: p.mode.as_str().to_string(),
            idle_grace_ms: p.idle_grace_ms,
            active_keepalive_min_ms: p.active_keepalive_min_ms,
            active_keepalive_max_ms: p.active_keepalive_max_ms,
            min_continuation_spacing_ms: p.min_continuation_spacing_ms,
            idle_may_bypass_min_spacing: p.idle_may_bypass_min_spacing,
            require_progress_heartbeat: p.require_progress_heartbeat,
            stall_warning_after_no_progress_attempts: p.stall_warning_after_no_progress_attempts,
            stall_pause_after_no_progress_attempts: p.stall_pause_after_no_progress_attempts,
            stall_warning_after_no_progress_ms: p.stall_warning_after_no_progress_ms,
            stall_pause_after_no_progress_ms: p.stall_pause_after_no_progress_ms,
        }
    }
}

/// The stable name of where a policy comes from.
pub(crate) fn source_name(source: PolicySource) -> String {
    source.as_str().to_string()
}
