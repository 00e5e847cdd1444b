//! Reading the raw body once (the signature covers it) and parsing it with errors that
//! name the field.

use actix_web::HttpRequest;
use actix_web::dev::Payload;
use actix_web::http::{StatusCode, header};
use actix_web::web::{Bytes, BytesMut};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// Largest request body accepted (decision D-5).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

fn too_large() -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("request body must be at most {MAX_BODY_BYTES} bytes"),
    )
}

/// Reads the whole body, refusing more than [`MAX_BODY_BYTES`] (413) before buffering it.
pub(crate) async fn read_body(req: &HttpRequest, mut payload: Payload) -> Result<Bytes, ApiError> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|len| len > MAX_BODY_BYTES) {
        return Err(too_large());
    }
    let mut body = BytesMut::with_capacity(declared.unwrap_or(0));
    while let Some(chunk) = payload.next().await {
        let chunk =
            chunk.map_err(|e| ApiError::bad_request(format!("cannot read request body: {e}")))?;
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// Parses a JSON body, which must be an object, into `T`. Messages name the offending
/// field: "property x should not exist", "title is required", "status: unknown variant
/// `x`, expected one of ...".
pub fn parse_json<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let not_an_object = || ApiError::bad_request("request body must be a JSON object");
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(not_an_object());
    }
    // Well-formed JSON of the wrong shape must name the field, so tell the two apart
    // first: serde_json files some type errors (a number where an enum goes) as syntax.
    if let Err(err) = serde_json::from_slice::<serde::de::IgnoredAny>(body) {
        return Err(ApiError::bad_request(format!("malformed JSON: {err}")));
    }
    // Every body is an object. serde would also fill a struct from an array, field by
    // field in order (`["new title"]` as `{"title": "new title"}`): a wrong JSON type,
    // refused like any other (decision D-4).
    if body.trim_ascii_start().first() != Some(&b'{') {
        return Err(not_an_object());
    }
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|err| {
        let path = err.path().to_string();
        ApiError::bad_request(describe(&path, &err.into_inner().to_string()))
    })?;
    Ok(value)
}

/// [`parse_json`] for bodies that may be left out: an empty body is `T::default()`.
pub fn parse_optional_json<T: DeserializeOwned + Default>(body: &[u8]) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        Ok(T::default())
    } else {
        parse_json(body)
    }
}

/// Parses a query string into `T`, with the same kind of messages as [`parse_json`].
pub fn parse_query<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    let deserializer =
        serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
    serde_path_to_error::deserialize(deserializer).map_err(|err| {
        let path = err.path().to_string();
        ApiError::bad_request(describe(&path, &err.into_inner().to_string()))
    })
}

/// Turns serde's wording into the contract's, keeping the field path in front.
fn describe(path: &str, message: &str) -> String {
    let message = message.split(" at line ").next().unwrap_or(message);
    if let Some(field) = backticked(message, "unknown field `") {
        return format!("property {field} should not exist");
    }
    if let Some(field) = backticked(message, "missing field `") {
        return format!("{field} is required");
    }
    if path.is_empty() || path == "." {
        if message.contains("expected struct") {
            return "request body must be a JSON object".to_owned();
        }
        message.to_owned()
    } else {
        format!("{path}: {message}")
    }
}

fn backticked<'a>(message: &'a str, prefix: &str) -> Option<&'a str> {
    message.strip_prefix(prefix)?.split('`').next()
}
