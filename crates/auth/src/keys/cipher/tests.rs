use super::*;
use crate::keys::ServerKey;

fn cipher(fill: u8) -> SecretCipher {
    SecretCipher::from_key(&[fill; 32]).unwrap()
}

#[test]
fn round_trip() {
    let cipher = cipher(7);
    for plaintext in [&b""[..], b"x", &[0xab; 64], &[0; 1000]] {
        let sealed = cipher.seal(plaintext).unwrap();
        assert_eq!(cipher.open(&sealed).unwrap(), plaintext);
    }
}

#[test]
fn layout_is_version_nonce_ciphertext_tag() {
    let plaintext = [b'f'; 64];
    let sealed = cipher(7).seal(&plaintext).unwrap();
    assert_eq!(sealed[0], 1);
    assert_eq!(sealed.len(), 1 + 12 + 64 + 16);
}

#[test]
fn two_seals_of_the_same_plaintext_differ() {
    let cipher = cipher(7);
    let first = cipher.seal(b"secret").unwrap();
    let second = cipher.seal(b"secret").unwrap();
    assert_ne!(first, second);
    assert_ne!(first[1..13], second[1..13], "nonces must differ");
}

#[test]
fn any_altered_byte_is_detected() {
    let cipher = cipher(7);
    let sealed = cipher.seal(b"secret").unwrap();
    for index in 1..sealed.len() {
        let mut altered = sealed.clone();
        altered[index] ^= 0x01;
        assert_eq!(
            cipher.open(&altered),
            Err(CipherError::Open),
            "byte {index}"
        );
    }
}

#[test]
fn altered_version_is_rejected() {
    let cipher = cipher(7);
    let mut sealed = cipher.seal(b"secret").unwrap();
    sealed[0] = 2;
    assert_eq!(cipher.open(&sealed), Err(CipherError::UnknownVersion(2)));
}

#[test]
fn truncated_values_are_rejected() {
    let cipher = cipher(7);
    let sealed = cipher.seal(b"").unwrap();
    assert_eq!(sealed.len(), 1 + 12 + 16);
    for len in 0..sealed.len() {
        assert!(cipher.open(&sealed[..len]).is_err(), "length {len}");
    }
    assert_eq!(cipher.open(&[]), Err(CipherError::Truncated));
    assert_eq!(cipher.open(&sealed[..28]), Err(CipherError::Truncated));
}

#[test]
fn wrong_key_fails() {
    let sealed = cipher(7).seal(b"secret").unwrap();
    assert_eq!(cipher(8).open(&sealed), Err(CipherError::Open));

    let first = ServerKey::generate().unwrap().secret_cipher();
    let second = ServerKey::generate().unwrap().secret_cipher();
    let sealed = first.seal(b"secret").unwrap();
    assert_eq!(second.open(&sealed), Err(CipherError::Open));
}

#[test]
fn debug_shows_no_key() {
    let shown = format!("{:?}", cipher(0xab));
    assert_eq!(shown, r#"SecretCipher { algorithm: "AES-256-GCM", .. }"#);
}
