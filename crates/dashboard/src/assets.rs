//! The files pages load, embedded in the binary: htmx (vendored from npm, 0BSD), the
//! stylesheet and the dashboard's one script. Their names carry a version, so browsers
//! may keep them.

use actix_web::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use actix_web::web::{self, ServiceConfig};
use actix_web::{HttpResponse, Responder};

/// htmx, as published on npm (`htmx.org`, `dist/htmx.min.js`).
pub(crate) const HTMX: &str = "/ui/assets/htmx-2.0.11.min.js";
/// The stylesheet.
pub(crate) const STYLE: &str = "/ui/assets/muster-2.css";
/// The board's drag and drop, live updates and small helpers.
pub(crate) const SCRIPT: &str = "/ui/assets/muster-2.js";

const FILES: [(&str, &str, &str); 3] = [
    (
        HTMX,
        "text/javascript; charset=utf-8",
        include_str!("../assets/htmx-2.0.11.min.js"),
    ),
    (
        STYLE,
        "text/css; charset=utf-8",
        include_str!("../assets/muster.css"),
    ),
    (
        SCRIPT,
        "text/javascript; charset=utf-8",
        include_str!("../assets/muster.js"),
    ),
];

pub(crate) fn routes(cfg: &mut ServiceConfig) {
    for (path, content_type, body) in FILES {
        let local = path.trim_start_matches(crate::PREFIX);
        cfg.route(
            local,
            web::get().to(move || async move { asset(content_type, body) }),
        );
    }
}

fn asset(content_type: &'static str, body: &'static str) -> impl Responder {
    HttpResponse::Ok()
        .insert_header((CONTENT_TYPE, content_type))
        .insert_header((CACHE_CONTROL, "public, max-age=86400, immutable"))
        .body(body)
}
