//! The recipe's own tests (the signing vectors byte for byte, RFC 4231, verification)
//! are in `muster-signing`; here, what this module adds to it.

use super::*;

/// The secret of the agent vectors in `signing-vectors.md`.
const VECTOR_SECRET: &str = "7f3a9c2e5b8d1f4a6c0e9b2d5f8a1c4e7b0d3f6a9c2e5b8d1f4a7c0e3b6d9f2a";

/// (request target, raw body, expected X-Signature) of two POST vectors, signed at
/// `1795000000` with nonce `0f8e9d2c-4b6a-4e1f-9a3d-7c5b2e1f0a9d`.
const POST_VECTORS: [(&str, &str, &str); 2] = [
    (
        "/tasks",
        r#"{"title":"Write the report","priority":"high","tags":["q4"]}"#,
        "184d5eb61965750d632fb9668d371ab59a2978bdc7e077607e8bc7ba0a75dd99",
    ),
    (
        "/tasks/01936f7e-8a4b-7c3d-9e2f-1a2b3c4d5e6f/transition",
        r#"{"status": "in_progress", "reason": "starting"}"#,
        "583ec40485bfbd46a8b3a016badcf9e857eb07e3ecfb248cdc61e5af2f0ed672",
    ),
];

fn vector_message(target: &str, body: &str) -> Vec<u8> {
    canonical_message(
        "POST",
        target,
        "1795000000",
        "0f8e9d2c-4b6a-4e1f-9a3d-7c5b2e1f0a9d",
        body.as_bytes(),
    )
}

/// The port adapter the webhook and code-host signers use is the same HMAC.
#[test]
fn the_message_signer_port_signs_the_vectors() {
    for (target, body, expected) in POST_VECTORS {
        let message = vector_message(target, body);
        assert_eq!(
            HmacSha256.sign_hex(VECTOR_SECRET.as_bytes(), &message),
            expected
        );
    }
}

/// What this module re-exports is the recipe the agent authenticator verifies with.
#[test]
fn the_reexported_recipe_signs_and_verifies_the_vectors() {
    for (target, body, expected) in POST_VECTORS {
        let message = vector_message(target, body);
        assert_eq!(sign(VECTOR_SECRET, &message), expected);
        assert!(verify(VECTOR_SECRET, &message, expected));
        assert!(verify_with_key(
            VECTOR_SECRET.as_bytes(),
            &message,
            expected
        ));
    }
}
