//! Cross-site request forgery: every form post and script call carries the token of
//! the browser's `muster_csrf` cookie (a hidden field, or the `X-CSRF-Token` header),
//! and a post another site's page started (`Origin`, `Sec-Fetch-Site`) is refused
//! before anything else is read.

use actix_web::dev::Payload;
use actix_web::http::StatusCode;
use actix_web::web::Bytes;
use actix_web::{FromRequest, HttpRequest, HttpResponse, ResponseError};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures_util::future::LocalBoxFuture;
use ring::rand::{SecureRandom, SystemRandom};
use serde::de::DeserializeOwned;

use crate::session::{CSRF_COOKIE, cookie, set_cookies};

/// The header scripts send the token in.
pub(crate) const HEADER: &str = "x-csrf-token";

/// The form field pages send it in.
pub(crate) const FIELD: &str = "csrf";

/// The largest form the dashboard reads.
const MAX_FORM_BYTES: usize = 64 * 1024;

/// Random bytes in a token.
const TOKEN_BYTES: usize = 32;

/// The browser's token, or a new one set on the response.
pub(crate) fn token_of(req: &HttpRequest) -> String {
    if let Some(existing) = req.cookie(CSRF_COOKIE).filter(|c| well_formed(c.value())) {
        return existing.value().to_owned();
    }
    renew(req)
}

/// A new token, set on the response (at sign-in and sign-out, so that a token known
/// before never outlives the session change).
pub(crate) fn renew(req: &HttpRequest) -> String {
    let mut bytes = [0_u8; TOKEN_BYTES];
    // The system's generator does not fail on Linux; if it ever did, no token is set and
    // the empty one answered never matches a cookie: every post is refused (fail closed).
    if SystemRandom::new().fill(&mut bytes).is_err() {
        return String::new();
    }
    let token = URL_SAFE_NO_PAD.encode(bytes);
    set_cookies(req, [cookie(req, CSRF_COOKIE, token.clone())]);
    token
}

fn well_formed(token: &str) -> bool {
    URL_SAFE_NO_PAD
        .decode(token)
        .is_ok_and(|bytes| bytes.len() == TOKEN_BYTES)
}

/// Equal without an early exit, so timing tells nothing about the token.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0_u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A post another site's page could have started: refused.
fn cross_site(req: &HttpRequest) -> bool {
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    if header("sec-fetch-site").is_some_and(|site| site != "same-origin" && site != "none") {
        return true;
    }
    // The origin's host must be the one the request was sent to; its scheme is not
    // compared, since a TLS-terminating proxy may not say the page was https.
    header("origin").is_some_and(|origin| {
        let host = header("host").unwrap_or_default();
        let authority = origin
            .strip_prefix("https://")
            .or_else(|| origin.strip_prefix("http://"));
        authority.is_none_or(|authority| host.is_empty() || authority != host)
    })
}

/// Checks a post's token against the cookie, and where it came from.
pub(crate) fn check(req: &HttpRequest, field: Option<&str>) -> Result<(), Refused> {
    if cross_site(req) {
        return Err(Refused::forbidden(
            "this form was sent from another site; use the dashboard's own page",
        ));
    }
    let presented = req
        .headers()
        .get(HEADER)
        .and_then(|v| v.to_str().ok())
        .or(field);
    let held = req.cookie(CSRF_COOKIE);
    match (presented, held) {
        (Some(presented), Some(held))
            if well_formed(held.value()) && same(presented.as_bytes(), held.value().as_bytes()) =>
        {
            Ok(())
        }
        _ => Err(Refused::forbidden(
            "the page was too old or not the dashboard's (CSRF token missing or wrong); reload it and try again",
        )),
    }
}

/// A form that carries nothing but its CSRF token (a one-button form).
#[derive(Debug, serde::Deserialize)]
pub(crate) struct Nothing {}

/// A form post whose CSRF token matched, read into `T`.
#[derive(Debug)]
pub(crate) struct Posted<T>(pub T);

/// A post refused before any change: its origin or token, or a form that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct Refused {
    status: StatusCode,
    message: String,
}

impl Refused {
    fn forbidden(message: &str) -> Self {
        Self {
            status: StatusCode::FORBIDDEN,
            message: message.to_owned(),
        }
    }

    fn bad_request(message: String) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            message,
        }
    }
}

impl ResponseError for Refused {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        HttpResponse::build(self.status)
            .content_type("text/plain; charset=utf-8")
            .body(self.message.clone())
    }
}

impl<T: DeserializeOwned + 'static> FromRequest for Posted<T> {
    type Error = Refused;
    type Future = LocalBoxFuture<'static, Result<Self, Refused>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let body = Bytes::from_request(&req, payload);
        Box::pin(async move {
            let body = body
                .await
                .map_err(|e| Refused::bad_request(format!("cannot read the form: {e}")))?;
            if body.len() > MAX_FORM_BYTES {
                return Err(Refused {
                    status: StatusCode::PAYLOAD_TOO_LARGE,
                    message: format!("the form is larger than {MAX_FORM_BYTES} bytes"),
                });
            }
            let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(&body)
                .map_err(|e| Refused::bad_request(format!("cannot read the form: {e}")))?;
            let field = pairs
                .iter()
                .find(|(name, _)| name == FIELD)
                .map(|(_, value)| value.as_str());
            check(&req, field)?;
            let form = serde_urlencoded::from_bytes(&body)
                .map_err(|e| Refused::bad_request(format!("cannot read the form: {e}")))?;
            Ok(Self(form))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_by_content_and_length() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"abcd"));
        assert!(!same(b"", b"a"));
    }

    #[test]
    fn a_token_is_32_random_bytes_in_base64url() {
        assert!(well_formed(&URL_SAFE_NO_PAD.encode([7_u8; 32])));
        assert!(!well_formed(&URL_SAFE_NO_PAD.encode([7_u8; 31])));
        assert!(!well_formed("not base64 at all!"));
        assert!(!well_formed(""));
    }
}
