//! Headers every dashboard response carries: a strict Content-Security-Policy (only the
//! dashboard's own scripts, styles and connections; no inline code; no framing), no
//! MIME sniffing, no caching of pages, and the cookies the request decided to set.

use actix_web::HttpMessage;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY as CSP, HeaderValue, REFERRER_POLICY,
    X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use actix_web::middleware::Next;

use crate::session::SetCookies;

/// The policy every dashboard response is sent with. `img-src data:` is for the TOTP
/// QR code, which comes as a PNG data URL.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; \
     frame-ancestors 'none'; base-uri 'none'";

/// Adds the headers and queued cookies to a dashboard response.
pub(crate) async fn headers(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let mut res = next.call(req).await?;
    let queued = res.request().extensions_mut().remove::<SetCookies>();
    if let Some(SetCookies(cookies)) = queued {
        for cookie in cookies {
            res.response_mut().add_cookie(&cookie)?;
        }
    }
    let headers = res.headers_mut();
    headers.insert(CSP, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    if !headers.contains_key(CACHE_CONTROL) {
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    Ok(res)
}
