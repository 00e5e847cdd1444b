//! Recovery codes: single-use stand-ins for a TOTP code, `XXXX-XXXX`.

use crate::keys::{KeyError, random_bytes};

/// Recovery codes issued at a time.
pub const RECOVERY_CODE_COUNT: usize = 10;

/// The 32 characters of recovery codes: upper-case letters and digits without the
/// look-alikes `0`, `O`, `1` and `I`. A power of two, so a random byte masked to five
/// bits picks each uniformly.
const ALPHABET: &[u8; 32] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/// Characters on each side of the dash.
const HALF: usize = 4;

/// Draws beyond [`RECOVERY_CODE_COUNT`] tolerated before giving up on distinct codes
/// (40 random bits each: a repeat is already a one-in-ten-billion event).
const SPARE_DRAWS: usize = 10;

/// [`RECOVERY_CODE_COUNT`] distinct fresh recovery codes, `XXXX-XXXX` over an
/// unambiguous alphabet (40 random bits each).
pub fn new_recovery_codes() -> Result<Vec<String>, KeyError> {
    let mut codes: Vec<String> = Vec::with_capacity(RECOVERY_CODE_COUNT);
    for _ in 0..RECOVERY_CODE_COUNT + SPARE_DRAWS {
        let code = new_recovery_code()?;
        if !codes.contains(&code) {
            codes.push(code);
        }
        if codes.len() == RECOVERY_CODE_COUNT {
            return Ok(codes);
        }
    }
    Err(KeyError::Random)
}

/// One fresh recovery code.
fn new_recovery_code() -> Result<String, KeyError> {
    let bytes: [u8; 2 * HALF] = random_bytes()?;
    let mut code = String::with_capacity(2 * HALF + 1);
    for (i, byte) in bytes.iter().enumerate() {
        if i == HALF {
            code.push('-');
        }
        code.push(char::from(ALPHABET[usize::from(byte & 0x1f)]));
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use muster_domain::service::accounts::normalize_recovery_code;

    use super::*;

    fn well_formed(code: &str) -> bool {
        let bytes = code.as_bytes();
        bytes.len() == 9
            && bytes[4] == b'-'
            && bytes
                .iter()
                .enumerate()
                .all(|(i, b)| i == 4 || ALPHABET.contains(b))
    }

    #[test]
    fn alphabet_has_no_look_alikes_or_repeats() {
        for ambiguous in b"0O1I" {
            assert!(!ALPHABET.contains(ambiguous));
        }
        let mut sorted = ALPHABET.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 32);
    }

    #[test]
    fn ten_distinct_well_formed_codes() {
        let codes = new_recovery_codes().unwrap();
        assert_eq!(codes.len(), 10);
        for code in &codes {
            assert!(well_formed(code), "{code}");
            assert_eq!(normalize_recovery_code(code).as_ref(), Some(code));
        }
        let mut distinct = codes.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 10);
        assert_ne!(new_recovery_codes().unwrap(), codes);
    }
}
