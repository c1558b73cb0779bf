//! Continuation policy (spec 000 §7.1): when a worker may be resumed, and how often; and a
//! run's dead-man policy (spec 000 §12.0: off, notify or recover, and its threshold), which
//! the same patch sets and the dead-man rules (`deadman/`) read.

use crate::limits::*;
use crate::reject::{Rejection, RejectionCode};
use crate::time::MINUTE_MS;
use serde::{Deserialize, Serialize};

/// Whether the backend resumes an unfinished worker by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Mode {
    /// Only explicit operator or root actions start another turn (the conservative default).
    Manual,
    /// The scheduler resumes the worker whenever it is runnable and its turn ended.
    Auto,
}

impl Mode {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Manual => "manual",
            Mode::Auto => "auto",
        }
    }
}

/// All the knobs of spec 000 §7.1. Every field is validated by [`ContinuationPolicy::validate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContinuationPolicy {
    /// Manual or automatic continuation.
    pub mode: Mode,
    /// How long a conversation must stay idle before an idle wake is acted on.
    pub idle_grace_ms: u64,
    /// Lower bound of the jittered active keepalive, measured from the last submission.
    pub active_keepalive_min_ms: u64,
    /// Upper bound of the jittered active keepalive.
    pub active_keepalive_max_ms: u64,
    /// Anti-spam floor between a continuation delivery and the next non-idle one.
    pub min_continuation_spacing_ms: u64,
    /// Whether an idle conversation may be resumed before the floor expires.
    pub idle_may_bypass_min_spacing: bool,
    /// Reserved by the spec for a later heartbeat requirement; recorded, not yet enforced.
    pub require_progress_heartbeat: bool,
    /// Attempts without durable progress before a stall warning (`None` disables).
    pub stall_warning_after_no_progress_attempts: Option<u32>,
    /// Attempts without durable progress before the worker is paused for stall.
    pub stall_pause_after_no_progress_attempts: Option<u32>,
    /// Time without durable progress before a stall warning.
    pub stall_warning_after_no_progress_ms: Option<u64>,
    /// Time without durable progress before the worker is paused for stall.
    pub stall_pause_after_no_progress_ms: Option<u64>,
}

impl ContinuationPolicy {
    /// The recommended defaults of spec 000 §7.1 with `mode = manual`.
    pub const DEFAULT: ContinuationPolicy = ContinuationPolicy {
        mode: Mode::Manual,
        idle_grace_ms: 3_000,
        active_keepalive_min_ms: 20 * MINUTE_MS,
        active_keepalive_max_ms: 21 * MINUTE_MS,
        min_continuation_spacing_ms: 15 * MINUTE_MS,
        idle_may_bypass_min_spacing: true,
        require_progress_heartbeat: false,
        stall_warning_after_no_progress_attempts: Some(10),
        stall_pause_after_no_progress_attempts: Some(20),
        stall_warning_after_no_progress_ms: Some(30 * MINUTE_MS),
        stall_pause_after_no_progress_ms: Some(60 * MINUTE_MS),
    };

    /// Checks every field against the limits; the first violation names its field.
    pub fn validate(&self) -> Result<(), Rejection> {
        check_range("idleGraceMs", self.idle_grace_ms, IDLE_GRACE_MS_MIN, IDLE_GRACE_MS_MAX)?;
        check_range("activeKeepaliveMinMs", self.active_keepalive_min_ms, KEEPALIVE_MS_MIN, KEEPALIVE_MS_MAX)?;
        check_range("activeKeepaliveMaxMs", self.active_keepalive_max_ms, KEEPALIVE_MS_MIN, KEEPALIVE_MS_MAX)?;
        if self.active_keepalive_min_ms > self.active_keepalive_max_ms {
            return Err(invalid("activeKeepaliveMinMs must not exceed activeKeepaliveMaxMs"));
        }
        check_range(
            "minContinuationSpacingMs",
            self.min_continuation_spacing_ms,
            CONTINUATION_SPACING_MS_MIN,
            CONTINUATION_SPACING_MS_MAX,
        )?;
        let attempts = [
            ("stallWarningAfterNoProgressAttempts", self.stall_warning_after_no_progress_attempts),
            ("stallPauseAfterNoProgressAttempts", self.stall_pause_after_no_progress_attempts),
        ];
        for (field, value) in attempts {
            if let Some(v) = value {
                check_range(field, u64::from(v), 1, u64::from(STALL_ATTEMPTS_MAX))?;
            }
        }
        let times = [
            ("stallWarningAfterNoProgressMs", self.stall_warning_after_no_progress_ms),
            ("stallPauseAfterNoProgressMs", self.stall_pause_after_no_progress_ms),
        ];
        for (field, value) in times {
            if let Some(v) = value {
                check_range(field, v, STALL_MS_MIN, STALL_MS_MAX)?;
            }
        }
        if let (Some(w), Some(p)) =
            (self.stall_warning_after_no_progress_attempts, self.stall_pause_after_no_progress_attempts)
            && w > p
        {
            return Err(invalid(
                "stallWarningAfterNoProgressAttempts must not exceed stallPauseAfterNoProgressAttempts",
            ));
        }
        if let (Some(w), Some(p)) = (self.stall_warning_after_no_progress_ms, self.stall_pause_after_no_progress_ms)
            && w > p
        {
            return Err(invalid("stallWarningAfterNoProgressMs must not exceed stallPauseAfterNoProgressMs"));
        }
        Ok(())
    }

    /// This policy with the fields a patch sets replaced.
    pub fn patched(&self, patch: &PolicyPatch) -> ContinuationPolicy {
        ContinuationPolicy {
            mode: patch.mode.unwrap_or(self.mode),
            idle_grace_ms: patch.idle_grace_ms.unwrap_or(self.idle_grace_ms),
            active_keepalive_min_ms: patch.active_keepalive_min_ms.unwrap_or(self.active_keepalive_min_ms),
            active_keepalive_max_ms: patch.active_keepalive_max_ms.unwrap_or(self.active_keepalive_max_ms),
            min_continuation_spacing_ms: patch.min_continuation_spacing_ms.unwrap_or(self.min_continuation_spacing_ms),
            idle_may_bypass_min_spacing: patch.idle_may_bypass_min_spacing.unwrap_or(self.idle_may_bypass_min_spacing),
            require_progress_heartbeat: patch.require_progress_heartbeat.unwrap_or(self.require_progress_heartbeat),
            stall_warning_after_no_progress_attempts: patch
                .stall_warning_after_no_progress_attempts
                .unwrap_or(self.stall_warning_after_no_progress_attempts),
            stall_pause_after_no_progress_attempts: patch
                .stall_pause_after_no_progress_attempts
                .unwrap_or(self.stall_pause_after_no_progress_attempts),
            stall_warning_after_no_progress_ms: patch
                .stall_warning_after_no_progress_ms
                .unwrap_or(self.stall_warning_after_no_progress_ms),
            stall_pause_after_no_progress_ms: patch
                .stall_pause_after_no_progress_ms
                .unwrap_or(self.stall_pause_after_no_progress_ms),
        }
    }
}

impl Default for ContinuationPolicy {
    fn default() -> Self {
        ContinuationPolicy::DEFAULT
    }
}

/// A partial policy: the fields a caller wants to change. For the nullable stall
/// thresholds, `Some(None)` disables the threshold and `None` leaves it as it is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyPatch {
    /// See [`ContinuationPolicy::mode`].
    pub mode: Option<Mode>,
    /// See [`ContinuationPolicy::idle_grace_ms`].
    pub idle_grace_ms: Option<u64>,
    /// See [`ContinuationPolicy::active_keepalive_min_ms`].
    pub active_keepalive_min_ms: Option<u64>,
    /// See [`ContinuationPolicy::active_keepalive_max_ms`].
    pub active_keepalive_max_ms: Option<u64>,
    /// See [`ContinuationPolicy::min_continuation_spacing_ms`].
    pub min_continuation_spacing_ms: Option<u64>,
    /// See [`ContinuationPolicy::idle_may_bypass_min_spacing`].
    pub idle_may_bypass_min_spacing: Option<bool>,
    /// See [`ContinuationPolicy::require_progress_heartbeat`].
    pub require_progress_heartbeat: Option<bool>,
    /// See [`ContinuationPolicy::stall_warning_after_no_progress_attempts`].
    pub stall_warning_after_no_progress_attempts: Option<Option<u32>>,
    /// See [`ContinuationPolicy::stall_pause_after_no_progress_attempts`].
    pub stall_pause_after_no_progress_attempts: Option<Option<u32>>,
    /// See [`ContinuationPolicy::stall_warning_after_no_progress_ms`].
    pub stall_warning_after_no_progress_ms: Option<Option<u64>>,
    /// See [`ContinuationPolicy::stall_pause_after_no_progress_ms`].
    pub stall_pause_after_no_progress_ms: Option<Option<u64>>,
    /// A run field: see [`DeadManPolicy::mode`].
    pub dead_man: Option<DeadManMode>,
    /// A run field: see [`DeadManPolicy::after_ms`] (`Some(None)` disables).
    pub dead_man_after_ms: Option<Option<u64>>,
}

impl PolicyPatch {
    /// A patch that only switches the mode.
    pub fn mode(mode: Mode) -> PolicyPatch {
        PolicyPatch { mode: Some(mode), ..PolicyPatch::default() }
    }

    /// Whether the patch sets a field that belongs to the run (the dead-man policy).
    pub fn has_run_fields(&self) -> bool {
        self.dead_man.is_some() || self.dead_man_after_ms.is_some()
    }

    /// Refuses run fields where a worker's policy is set: the dead-man layer watches runs.
    pub fn check_worker_fields(&self) -> Result<(), Rejection> {
        if self.has_run_fields() {
            return Err(invalid("deadMan and deadManAfterMs are run policy: set them with the run's default policy"));
        }
        Ok(())
    }
}

fn check_range(field: &'static str, value: u64, min: u64, max: u64) -> Result<(), Rejection> {
    if value < min || value > max {
        return Err(invalid(&format!("{field} must be between {min} and {max}, got {value}")));
    }
    Ok(())
}

fn invalid(message: &str) -> Rejection {
    Rejection::new(RejectionCode::InvalidPolicy, message)
}

/// A run's policy patch applied to its dead-man policy (the patch's run fields).
impl DeadManPolicy {
    /// This policy with the dead-man fields of a patch applied, validated.
    pub fn patched(&self, patch: &PolicyPatch) -> Result<DeadManPolicy, Rejection> {
        let p = DeadManPolicy {
            mode: patch.dead_man.unwrap_or(self.mode),
            after_ms: patch.dead_man_after_ms.unwrap_or(self.after_ms),
        };
        // The caller's value is checked; an inherited one (the daemon's default, which its
        // tests shorten) is not the caller's to answer for.
        if let Some(Some(ms)) = patch.dead_man_after_ms
            && !(DEADMAN_AFTER_MS_MIN..=DEADMAN_AFTER_MS_MAX).contains(&ms)
        {
            let message =
                format!("deadManAfterMs must be between {DEADMAN_AFTER_MS_MIN} and {DEADMAN_AFTER_MS_MAX}, got {ms}");
            return Err(Rejection::new(RejectionCode::InvalidPolicy, &message));
        }
        Ok(p)
    }
}

/// What the dead-man layer does for a run that stopped moving.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DeadManMode {
    /// Nothing: the layer is disabled.
    Off,
    /// Raise the run's "stopped moving" alert (Needs you) and record the firing.
    Notify,
    /// Notify, and recover `/root` once into a fresh conversation.
    Recover,
}

impl DeadManMode {
    /// The stable wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            DeadManMode::Off => "off",
            DeadManMode::Notify => "notify",
            DeadManMode::Recover => "recover",
        }
    }
}

/// A run's dead-man policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadManPolicy {
    /// Off, notify or recover.
    pub mode: DeadManMode,
    /// How long a run may go without moving before the layer acts (`None` disables it).
    pub after_ms: Option<u64>,
}

impl DeadManPolicy {
    /// Off, with the conservative threshold ready for when a run turns it on. Off by
    /// default so that runs which never asked for the layer behave exactly as before it.
    pub const DEFAULT: DeadManPolicy =
        DeadManPolicy { mode: DeadManMode::Off, after_ms: Some(DEADMAN_AFTER_MS_DEFAULT) };

    /// The threshold, when the layer is on.
    pub(crate) fn armed_ms(&self) -> Option<u64> {
        if self.mode == DeadManMode::Off { None } else { self.after_ms }
    }
}

impl Default for DeadManPolicy {
    fn default() -> Self {
        DeadManPolicy::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_manual() {
        assert_eq!(ContinuationPolicy::DEFAULT.validate(), Ok(()));
        assert_eq!(ContinuationPolicy::DEFAULT.mode, Mode::Manual);
    }

    #[test]
    fn min_above_max_is_rejected() {
        let p = ContinuationPolicy { active_keepalive_min_ms: 30 * MINUTE_MS, ..ContinuationPolicy::DEFAULT };
        let err = p.validate().unwrap_err();
        assert_eq!(err.code, RejectionCode::InvalidPolicy);
        assert!(err.message.contains("activeKeepaliveMinMs"), "{}", err.message);
    }

    #[test]
    fn zero_thresholds_are_rejected() {
        let p = ContinuationPolicy { stall_pause_after_no_progress_attempts: Some(0), ..ContinuationPolicy::DEFAULT };
        assert!(p.validate().is_err());
        let p = ContinuationPolicy { min_continuation_spacing_ms: 0, ..ContinuationPolicy::DEFAULT };
        assert!(p.validate().is_err());
    }

    #[test]
    fn warning_above_pause_is_rejected() {
        let p =
            ContinuationPolicy { stall_warning_after_no_progress_attempts: Some(30), ..ContinuationPolicy::DEFAULT };
        assert!(p.validate().is_err());
    }

    #[test]
    fn disabled_thresholds_are_valid() {
        let patch = PolicyPatch {
            stall_pause_after_no_progress_ms: Some(None),
            stall_warning_after_no_progress_ms: Some(None),
            ..PolicyPatch::default()
        };
        let p = ContinuationPolicy::DEFAULT.patched(&patch);
        assert_eq!(p.stall_pause_after_no_progress_ms, None);
        assert_eq!(p.validate(), Ok(()));
    }

    #[test]
    fn a_caller_s_dead_man_threshold_is_checked_an_inherited_one_is_not() {
        let on = PolicyPatch { dead_man: Some(DeadManMode::Notify), ..PolicyPatch::default() };
        let short = DeadManPolicy { mode: DeadManMode::Off, after_ms: Some(3_000) };
        assert_eq!(short.patched(&on), Ok(DeadManPolicy { mode: DeadManMode::Notify, after_ms: Some(3_000) }));
        let asked = PolicyPatch { dead_man_after_ms: Some(Some(3_000)), ..on };
        assert_eq!(DeadManPolicy::DEFAULT.patched(&asked).map_err(|e| e.code), Err(RejectionCode::InvalidPolicy));
    }
}
