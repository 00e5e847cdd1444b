//! Which `Content-Type` a request body may have (decision D-103): `application/json`, with
//! any parameters (`; charset=utf-8`), the type in any case; on the A2A routes also the
//! protocol's own `application/a2a+json`. Anything else, a missing type included, is
//! 415 when the body holds anything but whitespace; so is a repeated header with one
//! value that is not JSON.
//!
//! A browser sends a cross-site `POST` without asking first only with a form's types or
//! `text/plain` (or a typeless blob): refusing those keeps a page from posting to a route
//! whose credential is in its URL (an inbound webhook key) or needs none (auth mode
//! `none`). An empty body (`POST /agents/:id/suspend`) needs no type.

use actix_web::HttpRequest;
use actix_web::http::StatusCode;
use actix_web::http::header::{CONTENT_TYPE, HeaderValue};

use crate::error::{ApiError, codes};

/// The JSON media type every JSON route takes.
const JSON: &str = "application/json";

/// The A2A routes' own media type, and where it is taken.
const A2A_JSON: &str = "application/a2a+json";
const A2A_PREFIX: &str = "/a2a/";

/// Refuses (415) a request whose non-blank `body` is not declared as JSON.
pub(crate) fn check(req: &HttpRequest, body: &[u8]) -> Result<(), ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    let a2a = req.path().starts_with(A2A_PREFIX);
    let taken = |value: &HeaderValue| {
        value.to_str().is_ok_and(|value| {
            let essence = essence(value);
            essence == JSON || a2a && essence == A2A_JSON
        })
    };
    // Every type the request declares must be JSON (a client may repeat the header).
    let mut declared = req.headers().get_all(CONTENT_TYPE).peekable();
    if declared.peek().is_some() && declared.all(taken) {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            codes::UNSUPPORTED_MEDIA_TYPE,
            if a2a {
                format!("Content-Type must be {JSON} or {A2A_JSON}")
            } else {
                format!("Content-Type must be {JSON}")
            },
        ))
    }
}

/// `type/subtype` of a media type, lowercase, without its parameters.
fn essence(value: &str) -> String {
    value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    fn status(path: &str, content_types: &[&str], body: &str) -> Option<u16> {
        let mut request = TestRequest::post().uri(path);
        for value in content_types {
            request = request.append_header((CONTENT_TYPE, *value));
        }
        check(&request.to_http_request(), body.as_bytes())
            .err()
            .map(|e| actix_web::ResponseError::status_code(&e).as_u16())
    }

    #[test]
    fn json_in_any_case_and_with_parameters_is_taken() {
        for value in [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON;charset=UTF-8",
            " application/json ; charset=\"utf-8\"",
        ] {
            assert_eq!(status("/tasks", &[value], "{}"), None, "{value}");
        }
        let twice = ["application/json", "application/json; charset=utf-8"];
        assert_eq!(status("/tasks", &twice, "{}"), None);
    }

    #[test]
    fn other_types_a_missing_type_and_a_second_other_type_are_415() {
        for types in [
            &["text/plain"][..],
            &["application/x-www-form-urlencoded"],
            &["multipart/form-data; boundary=x"],
            &["application/jsonx"],
            &["application/a2a+json"],
            &[],
            &["application/json", "text/plain"],
            &["text/plain", "application/json"],
            &["application/json, text/plain"],
        ] {
            assert_eq!(status("/tasks", types, "{}"), Some(415), "{types:?}");
        }
    }

    #[test]
    fn a2a_routes_also_take_their_own_type() {
        assert_eq!(
            status("/a2a/jsonrpc", &["application/a2a+json"], "{}"),
            None
        );
        assert_eq!(
            status("/a2a/rest/message:send", &["application/A2A+JSON"], "{}"),
            None
        );
        assert_eq!(status("/a2a/jsonrpc", &["text/plain"], "{}"), Some(415));
    }

    #[test]
    fn a_blank_body_needs_no_type() {
        assert_eq!(status("/agents/x/suspend", &[], ""), None);
        assert_eq!(status("/agents/x/suspend", &["text/plain"], " \n"), None);
    }
}
