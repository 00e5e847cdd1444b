//! `GET /openapi.json` and the browsable reference at `/docs`: Swagger UI, its assets
//! embedded in the binary, so the page needs no network.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use actix_web::http::header::{self, CacheControl, CacheDirective};
use actix_web::web::{Bytes, Path};
use actix_web::{HttpRequest, HttpResponse};
use utoipa_swagger_ui::Config;

use crate::error::{ApiError, ErrorBody};
use crate::fallback;
use crate::route_table::{Table, at};

/// What the reference page may load: its own assets and the document, nothing else.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; \
form-action 'none'; frame-ancestors 'none'";

/// Adds the reference's routes to `table`.
pub(crate) fn register(table: &mut Table<'_>) {
    table
        .add(at("/openapi.json").get(openapi))
        .add(at("/docs").get(docs_root))
        .add(at("/docs/{file:.*}").get(docs_file));
}

/// `GET /openapi.json`: the document.
#[utoipa::path(
    get,
    path = "/openapi.json",
    operation_id = "openapi",
    tag = "service",
    summary = "This document (OpenAPI 3.1)",
    responses((status = 200, description = "The OpenAPI document", content_type = "application/json", body = Object)),
    security(())
)]
pub(super) async fn openapi() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .insert_header(CacheControl(vec![CacheDirective::NoCache]))
        .body(super::json())
}

/// `GET /docs`: to `/docs/`, so the page's relative asset links resolve.
#[utoipa::path(
    get,
    path = "/docs",
    operation_id = "docsRedirect",
    tag = "service",
    summary = "The browsable reference (redirects to /docs/)",
    responses((status = 308, description = "To `/docs/`", headers(("Location" = String)))),
    security(())
)]
pub(super) async fn docs_root() -> HttpResponse {
    HttpResponse::PermanentRedirect()
        .insert_header((header::LOCATION, "/docs/"))
        .finish()
}

/// `GET /docs/{file}`: the reference page (`/docs/`) and its assets.
#[utoipa::path(
    get,
    path = "/docs/{file}",
    operation_id = "docsAsset",
    tag = "service",
    summary = "The browsable reference: the page (empty `file`) and its assets",
    params(("file" = String, Path, description = "An asset of the page; empty for the page itself")),
    responses(
        (status = 200, description = "The page or the asset", content_type = "text/html", body = String),
        (status = 404, description = "No such asset", body = ErrorBody)
    ),
    security(())
)]
pub(super) async fn docs_file(req: HttpRequest, file: Path<String>) -> HttpResponse {
    match utoipa_swagger_ui::serve(&file, config()) {
        Ok(Some(asset)) => {
            let mut response = HttpResponse::Ok();
            response
                .content_type(asset.content_type)
                .insert_header((header::CONTENT_SECURITY_POLICY, CSP))
                .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
                .insert_header((header::REFERRER_POLICY, "no-referrer"));
            if asset.gzpipped {
                response.insert_header((header::CONTENT_ENCODING, "gzip"));
            }
            // The assets are embedded: answer them without copying (the bundle is
            // 1.4 MB; a copy per request held it to ~2,100 answers/s here).
            match asset.bytes {
                Cow::Borrowed(bytes) => response.body(Bytes::from_static(bytes)),
                Cow::Owned(bytes) => response.body(bytes),
            }
        }
        Ok(None) => actix_web::ResponseError::error_response(&fallback::no_route(&req)),
        Err(error) => actix_web::ResponseError::error_response(&ApiError::internal(error.as_ref())),
    }
}

/// Swagger UI's settings: this server's document, no online validator.
fn config() -> Arc<Config<'static>> {
    static CONFIG: OnceLock<Arc<Config<'static>>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            Arc::new(
                Config::new(["/openapi.json"])
                    .validator_url("none")
                    .display_operation_id(true)
                    .filter(true)
                    .deep_linking(true),
            )
        })
        .clone()
}
