//! Muster's web dashboard: the pages people use to see and steer the work agents do,
//! served by `muster serve` under `/ui/`.
//!
//! Pages are rendered on the server (maud) and call the same domain services and
//! policy as the HTTP API, with the signed-in user as the actor: what a user may not
//! do is not shown, and the service refuses it anyway. The session is the API's own
//! token pair, kept in `HttpOnly`, `SameSite=Strict` cookies; every form post carries
//! a CSRF token; every page is sent with a strict Content-Security-Policy. The assets
//! (htmx, the stylesheet, one script) are embedded in the binary.

mod assets;
mod charts;
mod csrf;
mod figures;
mod layout;
mod live;
mod pages;
mod refusal;
mod security;
mod session;

use std::sync::Arc;

use actix_web::web::{self, Data, ServiceConfig};

pub use security::CONTENT_SECURITY_POLICY;
pub use session::{CSRF_COOKIE, REFRESH_COOKIE, SESSION_COOKIE};

/// Where the dashboard lives.
pub const PREFIX: &str = "/ui";

/// The dashboard's own state, shared by every worker: the refreshes in flight, so that
/// two requests of one browser with an expired access token do not both spend its
/// refresh token (which the API would take for theft and end the login).
#[derive(Debug, Clone, Default)]
pub struct Dashboard {
    sessions: Arc<session::Refreshes>,
}

impl Dashboard {
    /// A dashboard with no session renewed yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the dashboard's routes (and the redirect of `/` to it) to an app.
    pub fn configure(&self, cfg: &mut ServiceConfig) {
        cfg.app_data(Data::new(self.clone()))
            .route("/", web::get().to(pages::home::root))
            .route(PREFIX, web::get().to(pages::home::root))
            .service(
                web::scope(PREFIX)
                    .wrap(actix_web::middleware::from_fn(security::headers))
                    .configure(assets::routes)
                    .configure(pages::routes)
                    .route("/live", web::get().to(live::stream)),
            );
    }
}
