use super::*;
use crate::keys::ServerKey;

const CONTEXT: &[u8] = b"01936f7e-8a4b-7c3d-9e2f-1a2b3c4d5e6f";

fn cipher(fill: u8) -> SecretCipher {
    SecretCipher::from_key(&[fill; 32]).unwrap()
}

#[test]
fn round_trip() {
    let cipher = cipher(7);
    for plaintext in [&b""[..], b"x", &[0xab; 64], &[0; 1000]] {
        let sealed = cipher.seal(plaintext, CONTEXT).unwrap();
        assert_eq!(cipher.open(&sealed, CONTEXT).unwrap(), plaintext);
    }
}

#[test]
fn layout_is_version_nonce_ciphertext_tag() {
    let plaintext = [b'f'; 64];
    let sealed = cipher(7).seal(&plaintext, CONTEXT).unwrap();
    assert_eq!(sealed[0], 1);
    assert_eq!(sealed.len(), 1 + 12 + 64 + 16);
}

#[test]
fn two_seals_of_the_same_plaintext_differ() {
    let cipher = cipher(7);
    let first = cipher.seal(b"secret", CONTEXT).unwrap();
    let second = cipher.seal(b"secret", CONTEXT).unwrap();
    assert_ne!(first, second);
    assert_ne!(first[1..13], second[1..13], "nonces must differ");
}

#[test]
fn any_altered_byte_is_detected() {
    let cipher = cipher(7);
    let sealed = cipher.seal(b"secret", CONTEXT).unwrap();
    for index in 1..sealed.len() {
        let mut altered = sealed.clone();
        altered[index] ^= 0x01;
        assert_eq!(
            cipher.open(&altered, CONTEXT),
            Err(CipherError::Open),
            "byte {index}"
        );
    }
}

#[test]
fn altered_version_is_rejected() {
    let cipher = cipher(7);
    let mut sealed = cipher.seal(b"secret", CONTEXT).unwrap();
    sealed[0] = 2;
    assert_eq!(
        cipher.open(&sealed, CONTEXT),
        Err(CipherError::UnknownVersion(2))
    );
}

#[test]
fn truncated_values_are_rejected() {
    let cipher = cipher(7);
    let sealed = cipher.seal(b"", CONTEXT).unwrap();
    assert_eq!(sealed.len(), 1 + 12 + 16);
    for len in 0..sealed.len() {
        assert!(
            cipher.open(&sealed[..len], CONTEXT).is_err(),
            "length {len}"
        );
    }
    assert_eq!(cipher.open(&[], CONTEXT), Err(CipherError::Truncated));
    assert_eq!(
        cipher.open(&sealed[..28], CONTEXT),
        Err(CipherError::Truncated)
    );
}

#[test]
fn wrong_key_fails() {
    let sealed = cipher(7).seal(b"secret", CONTEXT).unwrap();
    assert_eq!(cipher(8).open(&sealed, CONTEXT), Err(CipherError::Open));

    let first = ServerKey::generate().unwrap().secret_cipher();
    let second = ServerKey::generate().unwrap().secret_cipher();
    let sealed = first.seal(b"secret", CONTEXT).unwrap();
    assert_eq!(second.open(&sealed, CONTEXT), Err(CipherError::Open));
}

#[test]
fn debug_shows_no_key() {
    let shown = format!("{:?}", cipher(0xab));
    assert_eq!(shown, r#"SecretCipher { algorithm: "AES-256-GCM", .. }"#);
}

#[test]
fn another_context_does_not_open() {
    let cipher = cipher(7);
    let sealed = cipher.seal(b"secret", b"agent-a").unwrap();
    assert_eq!(cipher.open(&sealed, b"agent-a").unwrap(), b"secret");
    assert_eq!(cipher.open(&sealed, b"agent-b"), Err(CipherError::Open));
}

#[test]
fn vault_secrets_open_only_for_their_purpose_and_owner() {
    use muster_domain::ports::SecretVault;
    let cipher = cipher(7);
    let owner = uuid::Uuid::from_u128(7);
    let sealed = SecretVault::seal(&cipher, "webhook", owner, "whsec-1").unwrap();
    assert_eq!(
        SecretVault::open(&cipher, "webhook", owner, &sealed).unwrap(),
        "whsec-1"
    );
    assert!(SecretVault::open(&cipher, "inbound_webhook", owner, &sealed).is_err());
    assert!(SecretVault::open(&cipher, "webhook", uuid::Uuid::from_u128(8), &sealed).is_err());
    let hex = SecretVault::random_hex(&cipher, 32).unwrap();
    assert_eq!(hex.len(), 64);
    assert!(
        hex.chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    );
    assert_ne!(hex, SecretVault::random_hex(&cipher, 32).unwrap());
}

/// Through the domain's port, an agent's secret is sealed bound to the agent's id.
#[test]
fn the_sealer_port_binds_a_secret_to_its_agent() {
    use muster_domain::model::{AgentId, AgentSecret};
    use uuid::Uuid;

    let cipher = cipher(7);
    let agent = AgentId::from_uuid(Uuid::from_u128(5));
    let secret = AgentSecret::new("s3cret-of-agent-five".to_owned());
    let sealed = SecretSealer::seal(&cipher, agent, &secret).unwrap();
    assert_eq!(
        cipher.open(&sealed, agent.as_uuid().as_bytes()).unwrap(),
        b"s3cret-of-agent-five"
    );
    let other = AgentId::from_uuid(Uuid::from_u128(6));
    assert!(cipher.open(&sealed, other.as_uuid().as_bytes()).is_err());
}
