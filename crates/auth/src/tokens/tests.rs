use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use muster_domain::model::{AccessGrant, OrgId, UserId, UserRole};
use muster_domain::ports::{SecretKind, TokenMinter};
use serde_json::json;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

use super::*;
use crate::keys::ServerKey;

const RAW_KEY: [u8; 32] = [7; 32];

fn server_key() -> ServerKey {
    ServerKey::from_bytes(RAW_KEY).unwrap()
}

fn service() -> TokenService {
    TokenService::new(&server_key())
}

fn now() -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_795_000_000).unwrap()
}

fn grant() -> AccessGrant {
    AccessGrant {
        user_id: UserId::from_uuid(Uuid::from_u128(0x0193_0000_0000_7000_8000_0000_0000_0001)),
        org_id: OrgId::from_uuid(Uuid::from_u128(0x0193_0000_0000_7000_8000_0000_0000_0002)),
        role: UserRole::Operator,
    }
}

/// Valid claims of [`grant`] issued at [`now`], as JSON, for hand-made tokens.
fn claims() -> serde_json::Value {
    let iat = now().unix_timestamp();
    json!({
        "sub": grant().user_id.to_string(),
        "org": grant().org_id.to_string(),
        "role": "operator",
        "typ": "access",
        "iss": "muster",
        "aud": "muster-api",
        "iat": iat,
        "exp": iat + 900,
    })
}

fn sign(alg: Algorithm, claims: &serde_json::Value, key: &[u8]) -> String {
    jsonwebtoken::encode(&Header::new(alg), claims, &EncodingKey::from_secret(key)).unwrap()
}

fn b64(value: &serde_json::Value) -> String {
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(value).unwrap())
}

fn payload(token: &str) -> serde_json::Value {
    let part = token.split('.').nth(1).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
}

#[test]
fn round_trip() {
    let service = service();
    let token = service.access_token(&grant(), now()).unwrap();
    assert_eq!(token.expires_in, 900);
    let verified = service.verify_access(token.token.expose(), now()).unwrap();
    assert_eq!(verified, grant());
    let later = now() + Duration::seconds(899);
    assert_eq!(
        service.verify_access(token.token.expose(), later).unwrap(),
        grant()
    );
}

#[test]
fn claims_are_exactly_the_documented_ones() {
    let token = service().access_token(&grant(), now()).unwrap();
    assert_eq!(payload(token.token.expose()), claims());
    let header = jsonwebtoken::decode_header(token.token.expose()).unwrap();
    assert_eq!(header.alg, Algorithm::HS256);
}

#[test]
fn every_role_round_trips() {
    let service = service();
    for role in [UserRole::Admin, UserRole::Operator, UserRole::Viewer] {
        let grant = AccessGrant { role, ..grant() };
        let token = service.access_token(&grant, now()).unwrap();
        assert_eq!(
            service.verify_access(token.token.expose(), now()).unwrap(),
            grant
        );
    }
}

#[test]
fn expired_token_is_refused() {
    let service = service();
    let token = service.access_token(&grant(), now()).unwrap();
    for after in [900, 901, 86_400] {
        let at = now() + Duration::seconds(after);
        assert_eq!(
            service.verify_access(token.token.expose(), at),
            Err(AccessTokenError::Expired),
            "{after}"
        );
    }
    assert_eq!(
        AccessTokenError::Expired.to_string(),
        "access token expired"
    );
}

#[test]
fn wrong_audience_or_issuer_is_refused() {
    let key = server_key();
    let token = service().access_token(&grant(), now()).unwrap();
    for other in [
        TokenService::with_names(&key, "muster", "someone-else"),
        TokenService::with_names(&key, "someone-else", "muster-api"),
    ] {
        assert_eq!(
            other.verify_access(token.token.expose(), now()),
            Err(AccessTokenError::Invalid),
            "{other:?}"
        );
    }
}

#[test]
fn missing_claims_are_refused() {
    for claim in ["iss", "aud", "sub", "exp", "typ", "org", "role"] {
        let mut claims = claims();
        claims.as_object_mut().unwrap().remove(claim);
        let token = sign(Algorithm::HS256, &claims, &server_key().jwt_signing_key());
        assert_eq!(
            service().verify_access(&token, now()),
            Err(AccessTokenError::Invalid),
            "{claim}"
        );
    }
}

#[test]
fn hand_made_valid_token_is_accepted() {
    let token = sign(Algorithm::HS256, &claims(), &server_key().jwt_signing_key());
    assert_eq!(service().verify_access(&token, now()).unwrap(), grant());
}

#[test]
fn token_of_another_server_key_is_refused() {
    let other = TokenService::new(&ServerKey::from_bytes([8; 32]).unwrap());
    let token = other.access_token(&grant(), now()).unwrap();
    assert_eq!(
        service().verify_access(token.token.expose(), now()),
        Err(AccessTokenError::Invalid)
    );
}

#[test]
fn token_signed_with_the_raw_server_key_is_refused() {
    let token = sign(Algorithm::HS256, &claims(), &RAW_KEY);
    assert_eq!(
        service().verify_access(&token, now()),
        Err(AccessTokenError::Invalid)
    );
}

#[test]
fn other_algorithms_are_refused_even_with_the_right_key() {
    let key = server_key().jwt_signing_key();
    for alg in [Algorithm::HS384, Algorithm::HS512] {
        let token = sign(alg, &claims(), &key);
        assert_eq!(
            service().verify_access(&token, now()),
            Err(AccessTokenError::Invalid),
            "{alg:?}"
        );
    }
}

#[test]
fn alg_none_is_refused() {
    let header = b64(&json!({"alg": "none", "typ": "JWT"}));
    let token = format!("{header}.{}.", b64(&claims()));
    assert_eq!(
        service().verify_access(&token, now()),
        Err(AccessTokenError::Invalid)
    );
}

#[test]
fn rs256_header_is_refused() {
    let header = b64(&json!({"alg": "RS256", "typ": "JWT"}));
    let body = format!("{header}.{}", b64(&claims()));
    // An HMAC of the body under the real key, labelled RS256 (the key-confusion attack
    // turned around), and garbage.
    let tag = ring::hmac::sign(
        &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &server_key().jwt_signing_key()),
        body.as_bytes(),
    );
    for signature in [
        URL_SAFE_NO_PAD.encode(tag.as_ref()),
        "c2lnbmF0dXJl".to_owned(),
    ] {
        let token = format!("{body}.{signature}");
        assert_eq!(
            service().verify_access(&token, now()),
            Err(AccessTokenError::Invalid)
        );
    }
}

#[test]
fn other_token_type_is_refused() {
    let mut claims = claims();
    claims["typ"] = json!("refresh");
    let token = sign(Algorithm::HS256, &claims, &server_key().jwt_signing_key());
    assert_eq!(
        service().verify_access(&token, now()),
        Err(AccessTokenError::Invalid)
    );
}

#[test]
fn unparseable_claims_are_refused() {
    let key = server_key().jwt_signing_key();
    for (claim, value) in [
        ("role", json!("owner")),
        ("sub", json!("not-a-uuid")),
        ("org", json!(42)),
        ("exp", json!("tomorrow")),
    ] {
        let mut claims = claims();
        claims[claim] = value;
        let token = sign(Algorithm::HS256, &claims, &key);
        assert_eq!(
            service().verify_access(&token, now()),
            Err(AccessTokenError::Invalid),
            "{claim}"
        );
    }
}

#[test]
fn garbage_is_refused() {
    let service = service();
    let token = service.access_token(&grant(), now()).unwrap();
    let mut tampered = token.token.expose().to_owned();
    tampered.pop();
    tampered.push(if token.token.expose().ends_with('A') {
        'B'
    } else {
        'A'
    });
    for text in ["", "garbage", "a.b.c", "..", "msk_abc", &tampered] {
        let result = service.verify_access(text, now());
        assert_eq!(result, Err(AccessTokenError::Invalid), "{text:?}");
    }
    assert_eq!(
        AccessTokenError::Invalid.to_string(),
        "invalid access token"
    );
}

#[test]
fn secrets_have_their_prefix_and_43_base64url_characters() {
    let service = service();
    for (kind, prefix) in [
        (SecretKind::RefreshToken, "mrt_"),
        (SecretKind::ApiKey, "msk_"),
    ] {
        let secret = service.new_secret(kind).unwrap();
        let rest = secret.expose().strip_prefix(prefix).unwrap();
        assert_eq!(rest.len(), 43);
        assert_eq!(URL_SAFE_NO_PAD.decode(rest).unwrap().len(), 32);
        assert_ne!(service.new_secret(kind).unwrap(), secret);
    }
}

#[test]
fn hash_is_sha256_of_the_text() {
    let hash = service().hash("abc");
    assert_eq!(
        hex::encode(hash.0),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(token_hash("abc"), hash);
}

#[test]
fn debug_shows_no_key() {
    let debug = format!("{:?}", service());
    assert!(debug.starts_with("TokenService"), "{debug}");
    assert!(!debug.contains("7, 7"), "{debug}");
}

#[test]
fn a_service_writes_and_reports_the_names_it_was_given() {
    let named = TokenService::with_names(&server_key(), "https://id.example", "agents");
    assert_eq!(named.issuer(), "https://id.example");
    assert_eq!(named.audience(), "agents");
    let token = named.access_token(&grant(), now()).unwrap();
    let claims = payload(token.token.expose());
    assert_eq!(claims["iss"], "https://id.example");
    assert_eq!(claims["aud"], "agents");
    let default = service();
    assert_eq!(default.issuer(), DEFAULT_ISSUER);
    assert_eq!(default.audience(), DEFAULT_AUDIENCE);
}

#[test]
fn only_expiry_counts_as_expired() {
    assert!(AccessTokenError::Expired.is_expired());
    assert!(!AccessTokenError::Invalid.is_expired());
}
