//! Reading the raw body once (the signature covers it) and parsing it with errors that
//! name the field.

use actix_web::HttpRequest;
use actix_web::dev::Payload;
use actix_web::http::{StatusCode, header};
use actix_web::web::{Bytes, BytesMut};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use muster_domain::service::PageRequest;

use crate::dto::paging::PageQuery;
use crate::error::{ApiError, codes};

/// Parses a UUID from a path segment or query value, naming the field on failure.
pub fn parse_uuid(field: &str, value: &str) -> Result<uuid::Uuid, ApiError> {
    uuid::Uuid::parse_str(value)
        .map_err(|_| ApiError::bad_request(format!("{field} must be a UUID")))
}

/// Largest request body accepted (decision D-5).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

fn too_large() -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        codes::PAYLOAD_TOO_LARGE,
        format!("request body must be at most {MAX_BODY_BYTES} bytes"),
    )
}

/// Reads the whole body, refusing more than [`MAX_BODY_BYTES`] (413) before buffering it,
/// and a body that is not declared as JSON (415; see [`crate::media_type`]).
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
        let chunk = chunk.map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                codes::BAD_REQUEST,
                format!("cannot read request body: {e}"),
            )
        })?;
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    crate::media_type::check(req, &body)?;
    Ok(body.freeze())
}

/// Parses a JSON body into `T`. Messages name the offending field: "property x should
/// not exist", "title is required", "status: unknown variant `x`, expected one of ...".
pub fn parse_json<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(not_an_object());
    }
    // Well-formed JSON of the wrong shape must name the field, so tell the two apart
    // first: serde_json files some type errors (a number where an enum goes) as syntax.
    if let Err(err) = serde_json::from_slice::<serde::de::IgnoredAny>(body) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            codes::INVALID_JSON,
            format!("malformed JSON: {err}"),
        ));
    }
    // Our bodies are JSON objects (decisions D-3, D-4). Serde would also fill a struct
    // from an array of its fields in order (`["<uuid>", true]`), so refuse any other
    // top-level value before it gets the chance.
    if !is_an_object(body) {
        return Err(not_an_object());
    }
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    match serde_path_to_error::deserialize(&mut deserializer) {
        Ok(value) => Ok(value),
        Err(err) => {
            // JSON has one number type: `3.0` is the integer 3 (and an OpenAPI `integer`).
            // Only on this rare path, try again with whole floats read as integers.
            if let Some(value) = with_whole_numbers(body) {
                return Ok(value);
            }
            let path = err.path().to_string();
            Err(ApiError::bad_request(describe(
                &path,
                &err.into_inner().to_string(),
            )))
        }
    }
}

/// 400 `invalid_json`: an empty body, or one that is not a JSON object.
fn not_an_object() -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        codes::INVALID_JSON,
        "request body must be a JSON object",
    )
}

/// Whether `body`'s first value starts as a JSON object (whitespace aside).
pub(crate) fn is_an_object(body: &[u8]) -> bool {
    body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// `body` parsed again with every float that has no fractional part (and fits an `i64`)
/// turned into an integer; `None` when there was none or `T` still does not fit.
pub(crate) fn with_whole_numbers<T: DeserializeOwned>(body: &[u8]) -> Option<T> {
    fn whole(value: &mut serde_json::Value) -> bool {
        match value {
            serde_json::Value::Number(n) if n.is_f64() => {
                match muster_domain::rules::numbers::whole_number(value) {
                    Some(integer) => {
                        *value = serde_json::Value::from(integer);
                        true
                    }
                    None => false,
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().fold(false, |c, v| whole(v) | c),
            serde_json::Value::Object(map) => map.values_mut().fold(false, |c, v| whole(v) | c),
            _ => false,
        }
    }
    let mut value: serde_json::Value = serde_json::from_slice(body).ok()?;
    if !whole(&mut value) {
        return None;
    }
    serde_json::from_value(value).ok()
}

/// [`parse_json`] for bodies that may be left out: an empty body is `T::default()`;
/// `null` is a JSON value of the wrong type, refused as any other (decision D-4).
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

/// The page a list's query asks for: its `limit` and `cursor` (decision D-7), with
/// the cursor as the list's id type. The range of `limit` is the use case's to check.
pub fn parse_page<C: From<uuid::Uuid>>(query: &str) -> Result<PageRequest<C>, ApiError> {
    let query: PageQuery = parse_query(query)?;
    Ok(query.request()?)
}

/// Turns serde's wording into the contract's, keeping the field path in front.
fn describe(path: &str, message: &str) -> String {
    let message = message.split(" at line ").next().unwrap_or(message);
    // A field of a nested object is named with its path: `tasks[1].title is required`.
    let within = if path.is_empty() || path == "." {
        String::new()
    } else {
        format!("{path}.")
    };
    if let Some(field) = backticked(message, "unknown field `") {
        // Here the path ends with the unknown field itself.
        let container = path
            .strip_suffix(field)
            .map_or("", |c| c.trim_end_matches('.'));
        let within = if container.is_empty() || container == "." {
            String::new()
        } else {
            format!("{container}.")
        };
        return format!("property {within}{field} should not exist");
    }
    if let Some(field) = backticked(message, "missing field `") {
        return format!("{within}{field} is required");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Pair {
        #[allow(dead_code)] // only whether it parses matters
        depends_on_id: uuid::Uuid,
        #[serde(default)]
        #[allow(dead_code)]
        blocking: bool,
    }

    #[test]
    fn only_objects_fill_a_struct() {
        let id = "0190a7c4-0000-7000-8000-000000000000";
        assert!(parse_json::<Pair>(format!(r#" {{"dependsOnId":"{id}"}}"#).as_bytes()).is_ok());
        for body in [
            format!(r#"["{id}"]"#),
            format!(r#" ["{id}", true]"#),
            "null".to_owned(),
            "42".to_owned(),
            format!(r#""{id}""#),
        ] {
            let err = parse_json::<Pair>(body.as_bytes()).unwrap_err();
            assert_eq!(
                err.message(),
                "request body must be a JSON object",
                "{body}"
            );
        }
    }
}

#[cfg(test)]
mod nested_names {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Item {
        #[allow(dead_code)] // only whether it parses matters
        title: String,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Batch {
        #[allow(dead_code)]
        tasks: Vec<Item>,
    }

    fn message(body: &str) -> String {
        parse_json::<Batch>(body.as_bytes())
            .unwrap_err()
            .message()
            .to_owned()
    }

    #[test]
    fn nested_fields_are_named_with_their_path() {
        assert_eq!(
            message(r#"{"tasks":[{"title":"a"},{}]}"#),
            "tasks[1].title is required"
        );
        assert_eq!(
            message(r#"{"tasks":[{"title":"a","x":1}]}"#),
            "property tasks[0].x should not exist"
        );
        assert_eq!(
            message(r#"{"x":1,"tasks":[]}"#),
            "property x should not exist"
        );
        assert_eq!(message(r"{}"), "tasks is required");
    }
}
