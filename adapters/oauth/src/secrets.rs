//! Secret values of the OAuth server: random tokens and codes from the OS CSPRNG, their
//! SHA-256 (the only form in which tokens are stored), PKCE S256 and the human code.

use sha2::{Digest, Sha256};

/// Random bytes in every token, code and request handle: 256 bits.
pub const SECRET_BYTES: usize = 32;
/// Letters of the human code: no 0/O, 1/I/L, so it reads aloud and types back.
const HUMAN_ALPHABET: &[u8] = b"23456789ABCDEFGHJKMNPQRSTUVWXYZ";
/// Characters of the human code (shown as two groups of four).
pub const HUMAN_CODE_CHARS: usize = 8;

/// `n` random bytes; `None` when the OS random source fails (the caller refuses).
fn random<const N: usize>() -> Option<[u8; N]> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes)
}

/// A fresh secret: `prefix` then 64 hex characters (256 random bits). The prefix
/// (`oat_`, `ort_`, ...) tells a person what a leaked value is.
pub fn token(prefix: &str) -> Option<String> {
    Some(format!("{prefix}{}", hex(&random::<SECRET_BYTES>()?)))
}

/// The human code of a pending authorization, e.g. `K7QH-2MPD`.
pub fn human_code() -> Option<String> {
    let bytes = random::<HUMAN_CODE_CHARS>()?;
    let chars: String = bytes.iter().map(|b| HUMAN_ALPHABET[usize::from(*b) % HUMAN_ALPHABET.len()] as char).collect();
    Some(format!("{}-{}", &chars[..4], &chars[4..]))
}

/// A human code as typed (any case, with or without the dash or spaces), normalized.
pub fn normalize_human_code(typed: &str) -> String {
    let chars: String = typed.chars().filter(|c| c.is_ascii_alphanumeric()).map(|c| c.to_ascii_uppercase()).collect();
    if chars.len() == HUMAN_CODE_CHARS { format!("{}-{}", &chars[..4], &chars[4..]) } else { chars }
}

/// SHA-256 as lowercase hex: how tokens and codes are kept.
pub fn sha256_hex(value: &str) -> String {
    hex(&Sha256::digest(value.as_bytes()))
}

/// PKCE S256: `BASE64URL(SHA256(verifier)) == challenge`, compared in constant time.
pub fn s256_matches(verifier: &str, challenge: &str) -> bool {
    let computed = base64url(&Sha256::digest(verifier.as_bytes()));
    edge::headers::constant_time_eq(computed.as_bytes(), challenge.as_bytes())
}

/// The S256 challenge of `verifier` (for clients and tests).
pub fn s256_challenge(verifier: &str) -> String {
    base64url(&Sha256::digest(verifier.as_bytes()))
}

/// A PKCE verifier's shape (RFC 7636 §4.1): 43 to 128 unreserved characters.
pub fn verifier_well_formed(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// A PKCE S256 challenge's shape: 43 base64url characters (a SHA-256).
pub fn challenge_well_formed(challenge: &str) -> bool {
    challenge.len() == 43 && challenge.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Base64url without padding (RFC 4648 §5), as PKCE uses it.
pub fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert!(s256_matches(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        assert!(!s256_matches(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN"));
        assert!(verifier_well_formed(verifier) && !verifier_well_formed("short"));
        assert!(challenge_well_formed("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        assert_eq!(base64url(b"f"), "Zg");
        assert_eq!(base64url(b"foob"), "Zm9vYg");
    }

    #[test]
    fn tokens_and_codes() {
        let a = token("oat_").expect("random");
        assert_eq!(a.len(), 4 + 64);
        assert_ne!(a, token("oat_").expect("random"));
        assert_eq!(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        let code = human_code().expect("random");
        assert_eq!(code.len(), 9);
        assert_eq!(normalize_human_code(&code.to_lowercase().replace('-', " ")), code);
    }
}
