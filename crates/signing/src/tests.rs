use super::*;

/// The secret of the agent vectors in `signing-vectors.md`.
const VECTOR_SECRET: &str = "7f3a9c2e5b8d1f4a6c0e9b2d5f8a1c4e7b0d3f6a9c2e5b8d1f4a7c0e3b6d9f2a";
const VECTOR_TIMESTAMP: &str = "1795000000";
const VECTOR_NONCE: &str = "0f8e9d2c-4b6a-4e1f-9a3d-7c5b2e1f0a9d";

/// (method, request target, raw body, expected X-Signature).
const AGENT_VECTORS: [(&str, &str, &str, &str); 4] = [
    (
        "GET",
        "/tasks?status=todo&limit=5",
        "",
        "43b7abef5102706f37f7ca86c8fb99f4e0e3b957000ec16ea611bf1b344f0e62",
    ),
    (
        "POST",
        "/tasks",
        r#"{"title":"Write the report","priority":"high","tags":["q4"]}"#,
        "184d5eb61965750d632fb9668d371ab59a2978bdc7e077607e8bc7ba0a75dd99",
    ),
    (
        "POST",
        "/tasks/01936f7e-8a4b-7c3d-9e2f-1a2b3c4d5e6f/transition",
        r#"{"status": "in_progress", "reason": "starting"}"#,
        "583ec40485bfbd46a8b3a016badcf9e857eb07e3ecfb248cdc61e5af2f0ed672",
    ),
    (
        "DELETE",
        "/tasks/01936f7e-8a4b-7c3d-9e2f-1a2b3c4d5e6f/dependencies/01936f7e-8a4b-7c3d-9e2f-000000000001",
        "",
        "0c8904fb6052df951e7afa4ff11ee6de7abe7f7b62e097b38421a282890c91f6",
    ),
];

fn vector_message(method: &str, target: &str, body: &str) -> Vec<u8> {
    canonical_message(
        method,
        target,
        VECTOR_TIMESTAMP,
        VECTOR_NONCE,
        body.as_bytes(),
    )
}

#[test]
fn canonical_message_concatenates_without_separators() {
    let message = canonical_message("POST", "/tasks?a=1", "17", "n", b"{\"x\": 1}");
    assert_eq!(message, b"POST/tasks?a=117n{\"x\": 1}".to_vec());
    assert_eq!(
        canonical_message("GET", "/", "0", "n", b""),
        b"GET/0n".to_vec()
    );
}

#[test]
fn agent_vectors_sign_byte_for_byte() {
    for (method, target, body, expected) in AGENT_VECTORS {
        let message = vector_message(method, target, body);
        assert_eq!(sign(VECTOR_SECRET, &message), expected, "{method} {target}");
    }
}

#[test]
fn a_request_signature_carries_its_timestamp_nonce_and_the_vector() {
    for (method, target, body, expected) in AGENT_VECTORS {
        let signed = RequestSignature::at(
            VECTOR_SECRET,
            method,
            target,
            VECTOR_TIMESTAMP,
            VECTOR_NONCE,
            body.as_bytes(),
        );
        assert_eq!(signed.timestamp, VECTOR_TIMESTAMP);
        assert_eq!(signed.nonce, VECTOR_NONCE);
        assert_eq!(signed.signature, expected, "{method} {target}");
    }
}

#[test]
fn a_request_signed_now_is_current_and_verifies() {
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let signed = RequestSignature::now(VECTOR_SECRET, "POST", "/tasks", b"{}");
    let at: u64 = signed.timestamp.parse().unwrap();
    assert!(at >= before && at <= before + 5, "{at} vs {before}");
    let message = canonical_message("POST", "/tasks", &signed.timestamp, &signed.nonce, b"{}");
    assert!(verify(VECTOR_SECRET, &message, &signed.signature));
    let again = RequestSignature::now(VECTOR_SECRET, "POST", "/tasks", b"{}");
    assert_ne!(again.nonce, signed.nonce);
}

#[test]
fn agent_vectors_verify() {
    for (method, target, body, expected) in AGENT_VECTORS {
        let message = vector_message(method, target, body);
        assert!(
            verify(VECTOR_SECRET, &message, expected),
            "{method} {target}"
        );
    }
}

#[test]
fn body_is_signed_as_sent_not_reserialized() {
    let (method, target, _, expected) = AGENT_VECTORS[2];
    let compact = vector_message(
        method,
        target,
        r#"{"status":"in_progress","reason":"starting"}"#,
    );
    assert!(!verify(VECTOR_SECRET, &compact, expected));
}

/// RFC 4231 HMAC-SHA256 test cases 1-4, 6 and 7 (case 5 tests truncation, which the
/// contract does not use).
#[test]
fn rfc4231_test_cases() {
    let range_key: Vec<u8> = (0x01..=0x19).collect();
    let cases: [(Vec<u8>, Vec<u8>, &str); 6] = [
        (
            vec![0x0b; 20],
            b"Hi There".to_vec(),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
        ),
        (
            b"Jefe".to_vec(),
            b"what do ya want for nothing?".to_vec(),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
        ),
        (
            vec![0xaa; 20],
            vec![0xdd; 50],
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
        ),
        (
            range_key,
            vec![0xcd; 50],
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
        ),
        (
            vec![0xaa; 131],
            b"Test Using Larger Than Block-Size Key - Hash Key First".to_vec(),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
        ),
        (
            vec![0xaa; 131],
            b"This is a test using a larger than block-size key and a larger than block-size \
              data. The key needs to be hashed before being used by the HMAC algorithm."
                .to_vec(),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
        ),
    ];
    for (index, (key, data, expected)) in cases.iter().enumerate() {
        assert_eq!(sign_with_key(key, data), *expected, "case index {index}");
        assert!(verify_with_key(key, data, expected), "case index {index}");
    }
}

#[test]
fn the_key_is_the_secret_text_not_its_hex_decoding() {
    let message = vector_message("GET", "/tasks", "");
    let decoded = hex::decode(VECTOR_SECRET).unwrap();
    assert_ne!(
        sign_with_key(&decoded, &message),
        sign(VECTOR_SECRET, &message)
    );
}

#[test]
fn verify_rejects_a_one_character_change() {
    let (method, target, body, expected) = AGENT_VECTORS[0];
    let message = vector_message(method, target, body);
    for index in 0..expected.len() {
        let mut changed = expected.as_bytes().to_vec();
        changed[index] = if changed[index] == b'0' { b'1' } else { b'0' };
        let changed = String::from_utf8(changed).unwrap();
        assert!(
            !verify(VECTOR_SECRET, &message, &changed),
            "position {index}"
        );
    }
}

#[test]
fn verify_rejects_a_changed_message_or_secret() {
    let (method, target, body, expected) = AGENT_VECTORS[1];
    let message = vector_message(method, target, body);
    assert!(!verify(VECTOR_SECRET, &message[1..], expected));
    assert!(!verify(&VECTOR_SECRET[1..], &message, expected));
}

#[test]
fn verify_accepts_uppercase_hex() {
    let (method, target, body, expected) = AGENT_VECTORS[3];
    let message = vector_message(method, target, body);
    assert!(verify(VECTOR_SECRET, &message, &expected.to_uppercase()));
}

#[test]
fn verify_rejects_wrong_length_and_bad_hex() {
    let (method, target, body, expected) = AGENT_VECTORS[0];
    let message = vector_message(method, target, body);
    assert!(!verify(VECTOR_SECRET, &message, &expected[..62]));
    assert!(!verify(VECTOR_SECRET, &message, &format!("{expected}00")));
    assert!(!verify(VECTOR_SECRET, &message, &expected[..63]));
    assert!(!verify(VECTOR_SECRET, &message, ""));
    assert!(!verify(
        VECTOR_SECRET,
        &message,
        &format!("{}zz", &expected[..62])
    ));
    assert!(!verify(
        VECTOR_SECRET,
        &message,
        &format!("sha256={expected}")
    ));
}
