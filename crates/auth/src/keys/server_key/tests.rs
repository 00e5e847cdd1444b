use super::*;

/// The bytes 0x00..=0x1f.
fn counting_bytes() -> [u8; 32] {
    std::array::from_fn(|i| u8::try_from(i).unwrap())
}

const COUNTING_HEX: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const COUNTING_BASE64: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

fn parsed_bytes(text: &str) -> [u8; 32] {
    ServerKey::parse(text).unwrap().bytes
}

#[test]
fn parses_hex_in_either_case() {
    assert_eq!(parsed_bytes(COUNTING_HEX), counting_bytes());
    assert_eq!(parsed_bytes(&COUNTING_HEX.to_uppercase()), counting_bytes());
}

#[test]
fn parses_base64_standard_and_url_safe_padded_or_not() {
    assert_eq!(parsed_bytes(COUNTING_BASE64), counting_bytes());
    assert_eq!(
        parsed_bytes(COUNTING_BASE64.trim_end_matches('=')),
        counting_bytes()
    );

    let high = [0xfb, 0xff].repeat(16);
    let url_safe = "-__7__v_-__7__v_-__7__v_-__7__v_-__7__v_-_8=";
    assert_eq!(parsed_bytes(url_safe).to_vec(), high);
    assert_eq!(parsed_bytes(url_safe.trim_end_matches('=')).to_vec(), high);
    let standard = url_safe.replace('-', "+").replace('_', "/");
    assert_eq!(parsed_bytes(&standard).to_vec(), high);
}

/// Unpadded base64 whose characters all happen to be hex digits is still base64: only
/// 64 hex digits are read as hex.
#[test]
fn base64_made_of_hex_digits_is_base64() {
    let text = format!("{}E", "A".repeat(42));
    assert!(text.bytes().all(|b| b.is_ascii_hexdigit()));
    let mut expected = [0; 32];
    expected[31] = 0x01;
    assert_eq!(parsed_bytes(&text), expected);
}

#[test]
fn trims_whitespace() {
    assert_eq!(
        parsed_bytes(&format!("  {COUNTING_HEX}\n")),
        counting_bytes()
    );
    assert_eq!(
        parsed_bytes(&format!("\t{COUNTING_BASE64}\r\n")),
        counting_bytes()
    );
}

#[test]
fn rejects_other_lengths_and_garbage() {
    let bad = [
        String::new(),
        "   ".to_owned(),
        COUNTING_HEX[..62].to_owned(),
        format!("{COUNTING_HEX}00"),
        format!("{}zz", &COUNTING_HEX[..62]),
        "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHg==".to_owned(),
        "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gIQ==".to_owned(),
        "not a key at all".to_owned(),
        "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd Hh8=".to_owned(),
    ];
    for text in bad {
        assert_eq!(
            ServerKey::parse(&text).err(),
            Some(KeyError::InvalidFormat),
            "{text:?}"
        );
    }
}

#[test]
fn error_message_names_the_variable_and_the_forms() {
    assert_eq!(
        KeyError::InvalidFormat.to_string(),
        "MUSTER_SECRET_KEY must be 32 bytes, given as 64 hex characters or base64"
    );
}

#[test]
fn hex_round_trip() {
    let key = ServerKey::generate().unwrap();
    let hex = key.to_hex();
    assert_eq!(hex.len(), 64);
    assert_eq!(hex, hex.to_lowercase());
    let again = ServerKey::parse(&hex).unwrap();
    assert_eq!(again.bytes, key.bytes);
    assert_eq!(again.jwt_signing_key(), key.jwt_signing_key());
    let sealed = key.secret_cipher().seal(b"secret", b"ctx").unwrap();
    assert_eq!(
        again.secret_cipher().open(&sealed, b"ctx").unwrap(),
        b"secret"
    );
}

#[test]
fn generated_keys_differ() {
    assert_ne!(
        ServerKey::generate().unwrap().bytes,
        ServerKey::generate().unwrap().bytes
    );
}

/// Pins the derivation: changing it would make every stored secret unreadable.
/// Expected values computed with an independent HKDF-SHA256 (Python `hmac`).
#[test]
fn subkeys_match_known_answers() {
    let root = counting_bytes();
    assert_eq!(
        hex::encode(derive_subkey(&root, JWT_SIGNING_INFO).unwrap()),
        "45ef5989387e29d0287f49978587eeac9f625e1c06524aaa7df310e8500633fd"
    );
    assert_eq!(
        hex::encode(derive_subkey(&root, SECRET_ENCRYPTION_INFO).unwrap()),
        "a392d30e8622a7aaeb52d3f0e20ff71e493a27747eb1c82853b85ec68192e3e1"
    );
    let key = ServerKey::from_bytes(root).unwrap();
    assert_eq!(
        key.jwt_signing_key(),
        derive_subkey(&root, JWT_SIGNING_INFO).unwrap()
    );
}

#[test]
fn subkeys_differ_from_each_other_and_from_the_root() {
    let key = ServerKey::generate().unwrap();
    let encryption = derive_subkey(&key.bytes, SECRET_ENCRYPTION_INFO).unwrap();
    assert_ne!(key.jwt_signing_key(), encryption);
    assert_ne!(key.jwt_signing_key(), key.bytes);
    assert_ne!(encryption, key.bytes);
}

#[test]
fn debug_shows_no_key_material() {
    let key = ServerKey::parse(COUNTING_HEX).unwrap();
    let shown = format!("{key:?}");
    assert_eq!(shown, "ServerKey { .. }");
}
