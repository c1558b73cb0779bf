//! The nonce of a Claude prompt: the stream-json user line's `uuid`, derived from the
//! command's idempotency key.
//!
//! Recorded against 2.1.332 (`tests/fixtures/claude-2.1.332/`): a user line's `uuid` is
//! kept as the message's uuid: it comes back in `command_lifecycle.command_uuid`, the
//! `--replay-user-messages` echo, `result.user_message_uuids`, and the transcript's `user`
//! entry (`uuid`) or, for a line absorbed mid-turn, its `queued_command` attachment
//! (`source_uuid`). A line whose `uuid` the session already holds is **not run again**:
//! it is echoed without a `timestamp` and no turn starts (`duplicate-uuid.jsonl`, and
//! across processes after `--resume`, `resume.jsonl`). The model never sees the uuid, so
//! the prompt text stays as the engine wrote it.
//!
//! The CLI accepted a non-UUID string there too, but the field is named and used as a
//! uuid (the transcript's `parentUuid` chain), so the key is hashed into one:
//! FNV-1a 128 of the key's bytes, its halves mixed with the splitmix64 finalizer, shaped as
//! an RFC 9562 version-8 UUID. Deterministic, so reconciliation after a crash computes the
//! same uuid from the journaled key (`tests/mock/record_claude.py` has the same function).
//! Not cryptographic: keys come from our own daemon, never from an adversary.

use serde_json::{Value, json};

const FNV_OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
const FNV_PRIME: u128 = 0x0000000001000000000000000000013B;

fn mix64(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d049bb133111eb);
    x ^ (x >> 31)
}

/// The uuid a prompt with idempotency key `key` carries.
pub fn nonce_uuid(key: &str) -> String {
    let hash = key.bytes().fold(FNV_OFFSET, |h, byte| (h ^ u128::from(byte)).wrapping_mul(FNV_PRIME));
    let (high, low) = ((hash >> 64) as u64, hash as u64);
    let high = mix64(high ^ mix64(low));
    let low = mix64(low ^ high);
    let mut value = (u128::from(high) << 64) | u128::from(low);
    value = (value & !(0xF << 76)) | (0x8 << 76); // version 8
    value = (value & !(0x3 << 62)) | (0x2 << 62); // variant 10
    let hex = format!("{value:032x}");
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

/// The session id a `conversation.create` with idempotency key `key` mints: a retried
/// create names the same session, which the CLI refuses to start twice.
pub fn session_uuid(key: &str) -> String {
    nonce_uuid(&format!("session:{key}"))
}

/// The stream-json user line for `text` with nonce `uuid` (without the newline).
pub fn user_line(uuid: &str, text: &str) -> String {
    let line: Value = json!({"type": "user", "uuid": uuid, "message": {"role": "user", "content": text}});
    line.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_nonces_are_reproduced() {
        // The uuids `record_claude.py` wrote into the fixtures.
        assert_eq!(nonce_uuid("conversation.create:exe-1"), "fb4fe5b7-a9ee-8521-bd7b-74f0ac6e4e07");
        assert_eq!(session_uuid("conversation.create:exe-1"), "b172ea10-babc-8b1e-a409-9ba79326cd1f");
        assert_eq!(nonce_uuid("conversation.send:exe-1"), "b2271a29-bd79-8a99-b142-967faaf96895");
        assert_eq!(nonce_uuid("conversation.send:exe-2"), "3eaf0e14-263b-81c8-8901-06b8b744d541");
        assert_eq!(nonce_uuid("conversation.steer:exe-2"), "297ecf14-da9b-826e-a172-995aab6c5128");
        assert_eq!(nonce_uuid(""), "55c251c0-a92e-8aed-b3d9-4aa3386ee4b7");
        assert_ne!(session_uuid("k"), nonce_uuid("k"));
    }

    #[test]
    fn a_user_line_is_one_json_line() {
        let line = user_line("u-1", "two\nlines \"quoted\"");
        assert!(!line.contains('\n'));
        let value: Value = serde_json::from_str(&line).expect("json");
        assert_eq!(value["message"]["content"], "two\nlines \"quoted\"");
        assert_eq!(value["uuid"], "u-1");
    }
}
