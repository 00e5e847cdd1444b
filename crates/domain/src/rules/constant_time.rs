//! Comparing secrets without telling an attacker, through timing, how much of a guess
//! was right.

/// Whether `a` and `b` are equal, in time that depends on their lengths only.
///
/// ```
/// use muster_domain::rules::constant_time::eq;
/// assert!(eq(b"abc", b"abc"));
/// assert!(!eq(b"abc", b"abd"));
/// ```
pub fn eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::eq;

    #[test]
    fn equal_only_when_every_byte_is() {
        assert!(eq(b"abc", b"abc"));
        assert!(eq(b"", b""));
        assert!(!eq(b"abc", b"abd"));
        assert!(!eq(b"abc", b"ab"));
        assert!(!eq(b"abd", b"abc"));
        assert!(!eq(b"sha256=abc", b"abc"));
        assert!(!eq(b"\x00", b"\x01"));
        // Two differences that would cancel out if combined carelessly.
        assert!(!eq(b"10", b"01"));
        assert!(!eq(b"\x01\x01", b"\x00\x00"));
    }
}
