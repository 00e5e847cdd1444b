use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use muster_domain::model::{Email, UserId};
use muster_domain::ports::TotpAuthority;
use muster_domain::service::accounts::normalize_recovery_code;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::*;
use crate::keys::ServerKey;

/// The RFC 6238 appendix B SHA-1 secret.
const RFC_SECRET: &[u8] = b"12345678901234567890";

/// RFC 6238 appendix B, SHA-1: Unix time and 8-digit code.
const RFC_VECTORS: [(u64, &str); 5] = [
    (59, "94287082"),
    (1_111_111_109, "07081804"),
    (1_111_111_111, "14050471"),
    (1_234_567_890, "89005924"),
    (2_000_000_000, "69279037"),
];

fn service() -> TotpService {
    TotpService::from_server_key(&ServerKey::from_bytes([9; 32]).unwrap())
}

fn user(n: u128) -> UserId {
    UserId::from_uuid(Uuid::from_u128(n))
}

fn at(unix_time: u64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(i64::try_from(unix_time).unwrap()).unwrap()
}

/// The RFC secret sealed for user 1.
fn sealed_rfc_secret(service: &TotpService) -> Vec<u8> {
    service
        .cipher
        .seal(RFC_SECRET, user(1).as_uuid().as_bytes())
        .unwrap()
}

fn step_of(unix_time: u64) -> i64 {
    i64::try_from(unix_time / 30).unwrap()
}

#[test]
fn rfc_6238_vectors() {
    let service = service();
    let sealed = sealed_rfc_secret(&service);
    for (time, eight_digits) in RFC_VECTORS {
        let code = &eight_digits[2..];
        assert_eq!(code_for_secret(RFC_SECRET, time), code, "{time}");
        assert_eq!(
            service.current_code(user(1), &sealed, at(time)).unwrap(),
            code
        );
        let checked = service.check(user(1), &sealed, code, at(time)).unwrap();
        assert_eq!(checked, Some(step_of(time)), "{time}");
    }
}

#[test]
fn one_step_either_way_is_accepted_and_two_are_not() {
    let service = service();
    let sealed = sealed_rfc_secret(&service);
    let now: u64 = 1_234_567_890;
    for (offset, accepted) in [
        (-60, false),
        (-30, true),
        (0, true),
        (30, true),
        (60, false),
    ] {
        let code_time = now.checked_add_signed(offset).unwrap();
        let code = code_for_secret(RFC_SECRET, code_time);
        let checked = service.check(user(1), &sealed, &code, at(now)).unwrap();
        let expected = accepted.then(|| step_of(code_time));
        assert_eq!(checked, expected, "offset {offset}");
    }
}

#[test]
fn malformed_codes_are_refused() {
    let service = service();
    let sealed = sealed_rfc_secret(&service);
    let code = code_for_secret(RFC_SECRET, 59);
    for typed in [
        "",
        "28708",
        "2870822",
        " 287082",
        "287082 ",
        "28708a",
        "２８７０８２",
        "+87082",
        "94287082",
    ] {
        let checked = service.check(user(1), &sealed, typed, at(59)).unwrap();
        assert_eq!(checked, None, "{typed:?}");
    }
    assert_eq!(
        service.check(user(1), &sealed, &code, at(59)).unwrap(),
        Some(1)
    );
}

#[test]
fn new_secret_opens_only_for_its_user() {
    let service = service();
    let email = Email::new("ada@example.com").unwrap();
    let secret = service.new_secret(user(1), &email).unwrap();
    assert_eq!(secret.sealed.len(), 1 + 12 + 20 + 16);
    let now = OffsetDateTime::now_utc();
    let code = service.current_code(user(1), &secret.sealed, now).unwrap();
    assert_eq!(code.len(), 6);
    let step = service.check(user(1), &secret.sealed, &code, now).unwrap();
    assert!(step.is_some());

    assert!(matches!(
        service.current_code(user(2), &secret.sealed, now),
        Err(TotpError::Open(_))
    ));
    assert!(service.check(user(2), &secret.sealed, &code, now).is_err());
    let other_key = TotpService::from_server_key(&ServerKey::from_bytes([10; 32]).unwrap());
    assert!(
        other_key
            .check(user(1), &secret.sealed, &code, now)
            .is_err()
    );
}

#[test]
fn new_secrets_differ() {
    let service = service();
    let email = Email::new("ada@example.com").unwrap();
    let first = service.new_secret(user(1), &email).unwrap();
    let second = service.new_secret(user(1), &email).unwrap();
    assert_ne!(first.sealed, second.sealed);
    assert_ne!(first.qr_code, second.qr_code);
    assert_eq!(format!("{first:?}"), "NewTotpSecret(***)");
}

#[test]
fn qr_code_is_a_png_data_url() {
    let email = Email::new("ada@example.com").unwrap();
    let secret = service().new_secret(user(1), &email).unwrap();
    let encoded = secret
        .qr_code
        .strip_prefix("data:image/png;base64,")
        .unwrap();
    let png = STANDARD.decode(encoded).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");

    let mut reader = png::Decoder::new(png.as_slice()).read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    assert_eq!(frame.width, frame.height);
    assert_eq!(frame.color_type, png::ColorType::Grayscale);
    // The URI (about 120 bytes) needs a version 4..=10 code: 33..=57 modules, plus the
    // quiet zone, at 6 pixels per module.
    assert!(
        (6 * (33 + 8)..=6 * (57 + 8)).contains(&frame.width),
        "{}",
        frame.width
    );
    assert_eq!(frame.width % 6, 0);
    let pixels = &pixels[..frame.buffer_size()];
    assert!(pixels.iter().all(|p| *p == 0 || *p == 255));
    // The top-left corner is quiet zone, then the finder pattern's dark border starts.
    let width = usize::try_from(frame.width).unwrap();
    assert_eq!(pixels[0], 255);
    assert_eq!(pixels[4 * 6 * width + 4 * 6], 0);
    // The quiet zone (4 modules) is light all around, and only it: the code's own
    // corners are dark (finder patterns).
    let modules = width / 6 - 8;
    let module_at = |x: usize, y: usize| pixels[(y * 6) * width + x * 6];
    for i in 0..modules + 8 {
        for edge in [
            0,
            1,
            2,
            3,
            modules + 4,
            modules + 5,
            modules + 6,
            modules + 7,
        ] {
            assert_eq!(module_at(i, edge), 255, "row {edge}, column {i}");
            assert_eq!(module_at(edge, i), 255, "column {edge}, row {i}");
        }
    }
    for (x, y) in [(4, 4), (modules + 3, 4), (4, modules + 3)] {
        assert_eq!(module_at(x, y), 0, "finder corner at {x},{y}");
    }
}

#[test]
fn recovery_codes_through_the_port() {
    let codes = service().recovery_codes().unwrap();
    assert_eq!(codes.len(), RECOVERY_CODE_COUNT);
    for code in &codes {
        assert_eq!(
            normalize_recovery_code(code.expose()).as_deref(),
            Some(code.expose())
        );
    }
}

#[test]
fn times_before_the_epoch_count_as_the_epoch() {
    let before = OffsetDateTime::UNIX_EPOCH - Duration::days(1);
    assert_eq!(unix_time(before), 0);
    assert_eq!(unix_time(at(59)), 59);
}

#[test]
fn constant_time_eq_compares_whole_slices() {
    assert!(constant_time_eq(b"123456", b"123456"));
    assert!(!constant_time_eq(b"123456", b"123457"));
    assert!(!constant_time_eq(b"123456", b"12345"));
    assert!(constant_time_eq(b"", b""));
    // Two differences that would cancel each other out if combined carelessly.
    assert!(!constant_time_eq(b"10", b"01"));
    assert!(!constant_time_eq(b"123456", b"213456"));
}

#[test]
fn a_malformed_code_is_refused_before_the_secret_is_opened() {
    // The sealed secret is garbage: opening it would fail, so a `None` shows it was not
    // opened (a malformed code costs no decryption).
    let service = service();
    for typed in ["", "28708", "2870822", "28708a", "abcdef"] {
        let checked = service.check(user(1), b"not a sealed secret", typed, at(59));
        assert!(matches!(checked, Ok(None)), "{typed:?}: {checked:?}");
    }
    assert!(
        service
            .check(user(1), b"not a sealed secret", "287082", at(59))
            .is_err()
    );
}
