//! IANA time zones without a new crate: a TZif reader (RFC 8536) for the zone Claude names
//! in a limit notice ("resets 1pm (Europe/Lisbon)").
//!
//! [`offset_at`] is pure: the UTC offset a TZif file gives at an instant. It reads the
//! 64-bit (version 2+) block and falls back to the version 1 block. An instant after the
//! last transition keeps the last transition's offset; the POSIX rule in the footer is not
//! evaluated. Debian's tzdata is built "fat" (transitions listed to 2037), so that is exact
//! until 2037; with "slim" files it may be an hour off in summer, and the reset is still
//! at most an hour wrong, never a retry loop. [`Zones`] is the seam the core asks; [`TzDir`]
//! reads `/usr/share/zoneinfo` (the only IO here, for the shell).

use std::path::PathBuf;

/// UTC offsets of named zones.
pub trait Zones: std::fmt::Debug {
    /// The offset from UTC, in seconds, of `zone` at `at_s` (Unix seconds); `None` when the
    /// zone is unknown.
    fn offset_s(&self, zone: &str, at_s: i64) -> Option<i32>;
}

/// No zone known: every limit text with a zone is a limit without a time (a pause).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoZones;

impl Zones for NoZones {
    fn offset_s(&self, zone: &str, _at_s: i64) -> Option<i32> {
        matches!(zone, "UTC" | "Etc/UTC" | "GMT" | "Etc/GMT").then_some(0)
    }
}

/// Zones from a tzdata directory (`/usr/share/zoneinfo` by default), read on each question.
#[derive(Debug, Clone)]
pub struct TzDir {
    /// The directory.
    pub root: PathBuf,
}

impl Default for TzDir {
    fn default() -> TzDir {
        TzDir { root: PathBuf::from("/usr/share/zoneinfo") }
    }
}

/// The longest zone name looked up, and the largest TZif file read.
const ZONE_NAME_BYTES_MAX: usize = 64;
const TZIF_BYTES_MAX: u64 = 64 * 1024;

/// A zone name that can only name a file under the root: `Area/City` of `[A-Za-z0-9_+-]`.
pub fn zone_name_ok(zone: &str) -> bool {
    !zone.is_empty()
        && zone.len() <= ZONE_NAME_BYTES_MAX
        && zone.split('/').all(|part| {
            !part.is_empty()
                && !part.starts_with('.')
                && part.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-'))
        })
}

impl Zones for TzDir {
    fn offset_s(&self, zone: &str, at_s: i64) -> Option<i32> {
        if !zone_name_ok(zone) {
            return None;
        }
        let path = self.root.join(zone);
        let size = std::fs::metadata(&path).ok()?.len();
        if size > TZIF_BYTES_MAX {
            return None;
        }
        offset_at(&std::fs::read(path).ok()?, at_s)
    }
}

fn be_u32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// The UTC offset (seconds) that TZif data `tzif` gives at `at_s`; `None` if it is not TZif.
pub fn offset_at(tzif: &[u8], at_s: i64) -> Option<i32> {
    const HEADER: usize = 44;
    if tzif.get(..4)? != b"TZif" {
        return None;
    }
    let counts = |base: usize| -> Option<[usize; 6]> {
        let mut out = [0; 6];
        for (i, slot) in out.iter_mut().enumerate() {
            *slot = be_u32(tzif, base + 20 + 4 * i)? as usize;
        }
        Some(out)
    };
    let [isut, isstd, leap, time, kinds, chars] = counts(0)?;
    let v1_len = time * 5 + kinds * 6 + chars + leap * 8 + isstd + isut;
    let (base, wide) = if tzif[4] >= b'2' { (HEADER + v1_len, true) } else { (0, false) };
    let [_, _, _, time, kinds, _] = if wide { counts(base)? } else { [isut, isstd, leap, time, kinds, chars] };
    if wide && tzif.get(base..base + 4)? != b"TZif" {
        return None;
    }
    let size = if wide { 8 } else { 4 };
    let times = base + HEADER;
    let indices = times + time * size;
    let infos = indices + time;
    if kinds == 0 || tzif.len() < infos + kinds * 6 {
        return None;
    }
    let transition = |i: usize| -> i64 {
        let at = times + i * size;
        if wide {
            i64::from_be_bytes(tzif[at..at + 8].try_into().unwrap_or_default())
        } else {
            i64::from(i32::from_be_bytes(tzif[at..at + 4].try_into().unwrap_or_default()))
        }
    };
    // The last transition at or before `at_s` (binary search over sorted times).
    let (mut lo, mut hi) = (0usize, time);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if transition(mid) <= at_s { lo = mid + 1 } else { hi = mid }
    }
    let kind = if lo == 0 { 0 } else { usize::from(tzif[indices + lo - 1]) };
    if kind >= kinds {
        return None;
    }
    let info = infos + kind * 6;
    Some(i32::from_be_bytes(tzif[info..info + 4].try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_leave_the_root_are_refused() {
        assert!(zone_name_ok("Europe/Lisbon"));
        assert!(zone_name_ok("America/Port-au-Prince"));
        assert!(zone_name_ok("Etc/GMT+5"));
        for bad in ["", "../etc/passwd", "Europe/../x", "/etc", "a//b", ".hidden", "Europe/Lisbon "] {
            assert!(!zone_name_ok(bad), "{bad:?}");
        }
    }

    #[test]
    fn garbage_is_not_tzif() {
        assert_eq!(offset_at(b"", 0), None);
        assert_eq!(offset_at(b"TZif2", 0), None);
        assert_eq!(offset_at(&[b'T', b'Z', b'i', b'f', b'2'].repeat(20), 0), None);
    }

    #[test]
    fn the_system_tzdata() {
        // Debian's tzdata (`.ci/run` installs it where it is missing).
        let dir = TzDir::default();
        assert!(dir.offset_s("Europe/Lisbon", 0).is_some(), "no tzdata under /usr/share/zoneinfo: install tzdata");
        // 2026-12-02T12:00:00Z: Lisbon in winter is UTC; 2026-07-01: UTC+1.
        assert_eq!(dir.offset_s("Europe/Lisbon", 1_796_212_800), Some(0));
        assert_eq!(dir.offset_s("Europe/Lisbon", 1_782_864_000), Some(3_600));
        assert_eq!(dir.offset_s("America/Los_Angeles", 1_796_212_800), Some(-8 * 3_600));
        assert_eq!(dir.offset_s("America/Los_Angeles", 1_782_864_000), Some(-7 * 3_600));
        assert_eq!(dir.offset_s("Nowhere/City", 0), None);
    }
}
