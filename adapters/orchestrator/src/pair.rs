//! The pairing book (docs/operator.md "Pairing"): one-time codes a person reads from
//! `orchestrator pair` (or the first start's output) and types into the extension or
//! `executor-cli --pair`, exchanged once for the executor token. Pure: time and the
//! code's digits are arguments; the route (`pair_route.rs`) brings the clock and the OS
//! CSPRNG.
//!
//! Codes live in memory only, as a keyed SHA-256 (a random key per daemon), never as
//! text: a restart forgets them, which costs a person one more `orchestrator pair` and
//! leaves nothing on disk to steal for the minutes a code lives. A code is good for
//! [`PAIR_CODE_TTL_MS`] and once; at most [`PAIR_CODES_OUTSTANDING_MAX`] are good at once
//! (a new one retires the oldest). Every try passes two budgets (per client address and
//! one shared), and each good code is withdrawn after [`PAIR_WRONG_TRIES_PER_CODE_MAX`]
//! wrong tries made while it was good, so a guesser's chance is bounded per code issued,
//! however long the attack (the math in docs/limits.md).

use oauth::rate::Rate;
use sha2::{Digest, Sha256};

/// How long a code is good, in milliseconds (10 minutes).
pub const PAIR_CODE_TTL_MS: u64 = 10 * 60_000;
/// Codes good at once; issuing one more retires the oldest.
pub const PAIR_CODES_OUTSTANDING_MAX: usize = 4;
/// Tries one client address may make at once...
pub const PAIR_TRIES_PER_ADDRESS_BURST: u64 = 5;
/// ...then one per this many milliseconds (5 a minute).
pub const PAIR_TRY_PER_ADDRESS_INTERVAL_MS: u64 = 12_000;
/// Tries all addresses together may make at once...
pub const PAIR_TRIES_BURST: u64 = 20;
/// ...then one per this many milliseconds (20 a minute).
pub const PAIR_TRY_INTERVAL_MS: u64 = 3_000;
/// Wrong tries (from anyone) a good code survives; then it is withdrawn.
pub const PAIR_WRONG_TRIES_PER_CODE_MAX: u32 = 20;
/// How long a used, expired or withdrawn code is remembered after it stopped being good, so
/// that typing it again says why instead of "wrong".
pub const PAIR_SPENT_REMEMBERED_MS: u64 = 60 * 60_000;
/// Spent codes remembered at most (the oldest forgotten first).
pub const PAIR_SPENT_MAX: usize = 64;
/// The budget key shared by every try.
const EVERYONE: &str = "";

/// Why a try was refused, with a stable code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PairError {
    /// No good code matches (mistyped, or never issued).
    #[error("this pairing code is not right: check it, or get a new one with `orchestrator pair`")]
    Wrong,
    /// The code was good once and its time ran out.
    #[error("this pairing code has expired: get a new one with `orchestrator pair`")]
    Expired,
    /// The code was used already (codes work once).
    #[error("this pairing code was used already (codes work once): get a new one with `orchestrator pair`")]
    Used,
    /// The code was withdrawn after too many wrong tries, or retired by newer codes.
    #[error(
        "this pairing code was withdrawn (too many wrong codes were tried, or newer codes replaced it): get a new one with `orchestrator pair`"
    )]
    Withdrawn,
    /// Too many tries: wait this many milliseconds.
    #[error("too many pairing tries: wait {} s", .0.div_ceil(1_000))]
    RateLimited(u64),
}

impl PairError {
    /// A stable code for the error.
    pub fn code(&self) -> &'static str {
        match self {
            PairError::Wrong => "PAIR_CODE_WRONG",
            PairError::Expired => "PAIR_CODE_EXPIRED",
            PairError::Used => "PAIR_CODE_USED",
            PairError::Withdrawn => "PAIR_CODE_WITHDRAWN",
            PairError::RateLimited(_) => "PAIR_RATE_LIMITED",
        }
    }
}

/// A good code.
#[derive(Debug)]
struct Good {
    /// Its keyed hash (never the digits).
    hash: [u8; 32],
    /// When it stops being good (Unix ms).
    expires_ms: u64,
    /// Wrong tries made while it was good, toward [`PAIR_WRONG_TRIES_PER_CODE_MAX`].
    wrong_seen: u32,
}

/// A code that stopped being good, remembered to say why.
#[derive(Debug)]
struct Spent {
    /// Its keyed hash.
    hash: [u8; 32],
    /// What a try with it is answered.
    why: PairError,
    /// When it is forgotten (Unix ms).
    forget_ms: u64,
}

/// The daemon's codes and its tries' budgets.
#[derive(Debug)]
pub struct PairBook {
    /// The hash key, random per daemon, so that the hashes of the 10^8 codes cannot be
    /// computed ahead.
    key: [u8; 32],
    /// How long a code is good ([`PAIR_CODE_TTL_MS`] unless a test shortened it).
    ttl_ms: u64,
    /// The good codes, oldest first.
    good: Vec<Good>,
    /// The spent codes, oldest first.
    spent: Vec<Spent>,
    /// Per client address.
    per_address: Rate,
    /// Shared by every address.
    everyone: Rate,
}

impl PairBook {
    /// An empty book with this hash key and code lifetime.
    pub fn new(key: [u8; 32], ttl_ms: u64) -> PairBook {
        PairBook {
            key,
            ttl_ms,
            good: Vec::new(),
            spent: Vec::new(),
            per_address: Rate::new(PAIR_TRIES_PER_ADDRESS_BURST, PAIR_TRY_PER_ADDRESS_INTERVAL_MS),
            everyone: Rate::new(PAIR_TRIES_BURST, PAIR_TRY_INTERVAL_MS),
        }
    }

    /// How long a code is good, in milliseconds.
    pub fn ttl_ms(&self) -> u64 {
        self.ttl_ms
    }

    fn hash(&self, digits: &str) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(self.key);
        h.update(digits.as_bytes());
        h.finalize().into()
    }

    /// Makes `digits` (from the CSPRNG, [`address::pair::PAIR_CODE_DIGITS`] of them) a good
    /// code from `now_ms`; the oldest good code is retired past the cap.
    pub fn issue(&mut self, digits: &str, now_ms: u64) {
        self.sweep(now_ms);
        let hash = self.hash(digits);
        self.good.push(Good { hash, expires_ms: now_ms.saturating_add(self.ttl_ms), wrong_seen: 0 });
        while self.good.len() > PAIR_CODES_OUTSTANDING_MAX {
            let old = self.good.remove(0);
            self.spend(old.hash, PairError::Withdrawn, now_ms);
        }
    }

    /// One try of `typed` from `address` at `now_ms`: `Ok` spends the code.
    pub fn redeem(&mut self, typed: &str, address: &str, now_ms: u64) -> Result<(), PairError> {
        self.per_address.admit(address, now_ms).map_err(PairError::RateLimited)?;
        self.everyone.admit(EVERYONE, now_ms).map_err(PairError::RateLimited)?;
        self.sweep(now_ms);
        if let Some(digits) = address::pair::normalize_code(typed) {
            let hash = self.hash(&digits);
            // Every good code is compared, without an early exit.
            let mut found = None;
            for (i, g) in self.good.iter().enumerate() {
                if edge::headers::constant_time_eq(&g.hash, &hash) {
                    found = Some(i);
                }
            }
            if let Some(i) = found {
                let g = self.good.remove(i);
                self.spend(g.hash, PairError::Used, now_ms);
                return Ok(());
            }
            if let Some(s) = self.spent.iter().find(|s| s.hash == hash) {
                return Err(s.why);
            }
        }
        for g in &mut self.good {
            g.wrong_seen += 1;
        }
        let (withdrawn, kept): (Vec<Good>, Vec<Good>) =
            std::mem::take(&mut self.good).into_iter().partition(|g| g.wrong_seen >= PAIR_WRONG_TRIES_PER_CODE_MAX);
        self.good = kept;
        for g in withdrawn {
            self.spend(g.hash, PairError::Withdrawn, now_ms);
        }
        Err(PairError::Wrong)
    }

    /// Good codes whose time ran out become spent ([`PairError::Expired`]); spent codes
    /// past their memory are forgotten.
    fn sweep(&mut self, now_ms: u64) {
        let (expired, good): (Vec<Good>, Vec<Good>) =
            std::mem::take(&mut self.good).into_iter().partition(|g| g.expires_ms <= now_ms);
        self.good = good;
        for g in expired {
            self.spend(g.hash, PairError::Expired, now_ms);
        }
        self.spent.retain(|s| s.forget_ms > now_ms);
    }

    fn spend(&mut self, hash: [u8; 32], why: PairError, now_ms: u64) {
        self.spent.push(Spent { hash, why, forget_ms: now_ms.saturating_add(PAIR_SPENT_REMEMBERED_MS) });
        if self.spent.len() > PAIR_SPENT_MAX {
            self.spent.remove(0);
        }
    }

    /// Good codes now (for tests and the first start's check).
    pub fn good_count(&self) -> usize {
        self.good.len()
    }
}

/// Eight uniform decimal digits from `random` (rejection sampling over `u32`s, so no
/// digit string is likelier than another); `None` if the source fails.
pub fn code_digits(mut random: impl FnMut() -> Option<u32>) -> Option<String> {
    const SPACE: u32 = 100_000_000;
    // The largest multiple of SPACE that fits: values at or above it are drawn again.
    let limit = u32::MAX - u32::MAX % SPACE;
    loop {
        let n = random()?;
        if n < limit {
            return Some(format!("{:08}", n % SPACE));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_000_000;

    fn book() -> PairBook {
        PairBook::new([7; 32], PAIR_CODE_TTL_MS)
    }

    #[test]
    fn a_code_works_once_then_says_it_was_used() {
        let mut b = book();
        b.issue("48217730", T0);
        assert_eq!(b.redeem("4821-7730", "a", T0 + 1), Ok(()));
        assert_eq!(b.redeem("48217730", "a", T0 + 2), Err(PairError::Used));
        assert_eq!(b.good_count(), 0);
    }

    #[test]
    fn wrong_and_expired_codes_are_told_apart() {
        let mut b = book();
        b.issue("11112222", T0);
        assert_eq!(b.redeem("11112223", "a", T0), Err(PairError::Wrong));
        assert_eq!(b.redeem("not a code", "a", T0), Err(PairError::Wrong));
        assert_eq!(b.redeem("1111-2222", "a", T0 + PAIR_CODE_TTL_MS), Err(PairError::Expired));
        assert_eq!(b.redeem("1111-2222", "b", T0 + PAIR_CODE_TTL_MS + PAIR_SPENT_REMEMBERED_MS), Err(PairError::Wrong));
    }

    #[test]
    fn a_flood_is_paced_per_address_and_in_all() {
        let mut b = book();
        for i in 0..PAIR_TRIES_PER_ADDRESS_BURST {
            assert_eq!(b.redeem(&format!("{i:08}"), "a", T0), Err(PairError::Wrong));
        }
        assert_eq!(b.redeem("00000099", "a", T0), Err(PairError::RateLimited(PAIR_TRY_PER_ADDRESS_INTERVAL_MS)));
        // Other addresses have their own budget until the shared one is spent.
        let mut refused = 0;
        for i in 0..40 {
            if matches!(b.redeem("00000000", &format!("b{i}"), T0), Err(PairError::RateLimited(_))) {
                refused += 1;
            }
        }
        assert_eq!(refused, 40 - (PAIR_TRIES_BURST - PAIR_TRIES_PER_ADDRESS_BURST) as usize);
        // The lockout ends by itself.
        assert_eq!(b.redeem("00000098", "a", T0 + 60_000), Err(PairError::Wrong));
    }

    #[test]
    fn a_good_code_is_withdrawn_after_too_many_wrong_tries() {
        let mut b = book();
        b.issue("12345678", T0);
        for i in 0..PAIR_WRONG_TRIES_PER_CODE_MAX {
            let now = T0 + u64::from(i) * PAIR_TRY_INTERVAL_MS;
            assert_eq!(b.redeem("00000000", &format!("x{i}"), now), Err(PairError::Wrong));
        }
        let later = T0 + PAIR_TRY_INTERVAL_MS * u64::from(PAIR_WRONG_TRIES_PER_CODE_MAX);
        assert_eq!(b.redeem("12345678", "y", later), Err(PairError::Withdrawn));
    }

    #[test]
    fn newer_codes_retire_the_oldest_past_the_cap() {
        let mut b = book();
        for i in 0..=PAIR_CODES_OUTSTANDING_MAX {
            b.issue(&format!("{i:08}"), T0);
        }
        assert_eq!(b.good_count(), PAIR_CODES_OUTSTANDING_MAX);
        assert_eq!(b.redeem("00000000", "a", T0), Err(PairError::Withdrawn));
        assert_eq!(b.redeem(&format!("{PAIR_CODES_OUTSTANDING_MAX:08}"), "a", T0), Ok(()));
    }

    #[test]
    fn digits_are_uniform_and_drawn_again_above_the_limit() {
        let mut draws = vec![u32::MAX, 123].into_iter();
        assert_eq!(code_digits(|| draws.next()).as_deref(), Some("00000123"));
        assert_eq!(code_digits(|| None), None);
    }
}
