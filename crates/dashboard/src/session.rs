//! Who is looking: the signed-in user from the session cookies, renewed with the
//! refresh token when the access token has run out; in auth mode `none`, the
//! deployment's owner.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use actix_web::cookie::{Cookie, SameSite};
use actix_web::dev::Payload;
use actix_web::http::StatusCode;
use actix_web::http::header::LOCATION;
use actix_web::web::Data;
use actix_web::{FromRequest, HttpMessage, HttpRequest, HttpResponse, ResponseError};
use futures_util::future::LocalBoxFuture;
use muster_domain::model::{Actor, TokenPair};
use muster_domain::service::{AccountService, ServiceError};
use muster_http::{AppState, AuthMode};
use tokio::sync::Mutex;

use crate::Dashboard;
use crate::csrf;

/// The access token (the API's, 15 minutes).
pub const SESSION_COOKIE: &str = "muster_session";
/// The refresh token that renews it.
pub const REFRESH_COOKIE: &str = "muster_refresh";
/// The CSRF token forms and scripts send back.
pub const CSRF_COOKIE: &str = "muster_csrf";

/// How long a renewed pair is handed to other requests that show the same refresh token:
/// long enough for the requests a page load starts together, short enough that the
/// retired token is not a second key for long.
const RENEWAL_SHARED_FOR: Duration = Duration::from_secs(10);

/// The person a page is for.
#[derive(Debug, Clone)]
pub(crate) struct Viewer {
    /// The user, as the API sees them.
    pub actor: Actor,
    /// The token every form of the page carries.
    pub csrf: String,
    /// `false` in auth mode `none` (there is no session to end).
    pub signed_in: bool,
}

/// Cookies a request decided to set, added to its response by [`crate::security::headers`].
#[derive(Debug, Default)]
pub(crate) struct SetCookies(pub Vec<Cookie<'static>>);

/// Queues `cookies` for the response to `req`.
pub(crate) fn set_cookies(req: &HttpRequest, cookies: impl IntoIterator<Item = Cookie<'static>>) {
    let mut extensions = req.extensions_mut();
    let queued = extensions.get_mut::<SetCookies>();
    match queued {
        Some(queued) => queued.0.extend(cookies),
        None => {
            extensions.insert(SetCookies(cookies.into_iter().collect()));
        }
    }
}

/// A dashboard cookie: `HttpOnly`, `SameSite=Strict`, only sent to `/ui`, `Secure`
/// when the page was served over https; it lasts as long as the browser session.
/// Whether it was is the edge's answer: a client's own `X-Forwarded-Proto` is not
/// believed, a trusted proxy's is.
pub(crate) fn cookie(req: &HttpRequest, name: &'static str, value: String) -> Cookie<'static> {
    let https = req
        .app_data::<Data<AppState>>()
        .is_some_and(|state| state.edge.https(req));
    Cookie::build(name, value)
        .path(crate::PREFIX)
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(https)
        .finish()
}

/// The cookies that end a session.
pub(crate) fn cleared(req: &HttpRequest) -> Vec<Cookie<'static>> {
    [SESSION_COOKIE, REFRESH_COOKIE]
        .into_iter()
        .map(|name| {
            let mut gone = cookie(req, name, String::new());
            gone.make_removal();
            gone
        })
        .collect()
}

/// The cookies of a new or renewed session.
pub(crate) fn session_cookies(req: &HttpRequest, pair: &TokenPair) -> [Cookie<'static>; 2] {
    [
        cookie(req, SESSION_COOKIE, pair.access.token.expose().to_owned()),
        cookie(req, REFRESH_COOKIE, pair.refresh_token.expose().to_owned()),
    ]
}

/// Renewals of the last seconds, by refresh token digest.
#[derive(Debug, Default)]
pub(crate) struct Refreshes {
    recent: Mutex<HashMap<Vec<u8>, (TokenPair, Instant)>>,
}

impl Refreshes {
    /// Trades `refresh` for a new pair once; a request showing the same token within
    /// [`RENEWAL_SHARED_FOR`] gets the same pair instead of spending the token again.
    async fn renew(
        &self,
        accounts: &AccountService,
        refresh: &str,
    ) -> Result<TokenPair, ServiceError> {
        let key = digest(refresh);
        let mut recent = self.recent.lock().await;
        recent.retain(|_, (_, at)| at.elapsed() < RENEWAL_SHARED_FOR);
        if let Some((pair, _)) = recent.get(&key) {
            return Ok(pair.clone());
        }
        let pair = accounts.refresh(refresh).await?;
        recent.insert(key, (pair.clone(), Instant::now()));
        Ok(pair)
    }

    /// Forgets every renewal that involves `refresh` (as the token shown or the one
    /// handed out): after sign-out, no request gets a pair of that login any more.
    pub(crate) async fn forget(&self, refresh: &str) {
        let key = digest(refresh);
        self.recent
            .lock()
            .await
            .retain(|shown, (pair, _)| *shown != key && pair.refresh_token.expose() != refresh);
    }
}

fn digest(token: &str) -> Vec<u8> {
    ring::digest::digest(&ring::digest::SHA256, token.as_bytes())
        .as_ref()
        .to_vec()
}

/// No session: pages send the browser to the sign-in page; scripts get a 401.
#[derive(Debug, thiserror::Error)]
#[error("sign in to use the dashboard")]
pub(crate) struct NotSignedIn {
    script: bool,
}

impl ResponseError for NotSignedIn {
    fn status_code(&self) -> StatusCode {
        if self.script {
            StatusCode::UNAUTHORIZED
        } else {
            StatusCode::SEE_OTHER
        }
    }

    fn error_response(&self) -> HttpResponse {
        if self.script {
            HttpResponse::Unauthorized()
                .content_type("text/plain; charset=utf-8")
                .body("Your session has ended: sign in again.")
        } else {
            HttpResponse::SeeOther()
                .insert_header((LOCATION, format!("{}/login", crate::PREFIX)))
                .finish()
        }
    }
}

impl FromRequest for Viewer {
    type Error = NotSignedIn;
    type Future = LocalBoxFuture<'static, Result<Self, NotSignedIn>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move { identify(&req).await })
    }
}

/// Whether a request came from the dashboard's script or htmx rather than a page load.
pub(crate) fn from_script(req: &HttpRequest) -> bool {
    req.headers().contains_key("hx-request") || req.headers().contains_key(csrf::HEADER)
}

async fn identify(req: &HttpRequest) -> Result<Viewer, NotSignedIn> {
    let refused = NotSignedIn {
        script: from_script(req) || req.path().ends_with("/live"),
    };
    let (Some(state), Some(dashboard)) = (
        req.app_data::<Data<AppState>>(),
        req.app_data::<Data<Dashboard>>(),
    ) else {
        return Err(refused);
    };
    let csrf = csrf::token_of(req);
    if let Some(access) = req.cookie(SESSION_COOKIE)
        && let Ok(actor) = state.bearer_auth.access_token(access.value())
    {
        return Ok(Viewer {
            actor,
            csrf,
            signed_in: true,
        });
    }
    if let Some(refresh) = req.cookie(REFRESH_COOKIE)
        && let Ok(pair) = dashboard
            .sessions
            .renew(&state.accounts, refresh.value())
            .await
        && let Ok(actor) = state.bearer_auth.access_token(pair.access.token.expose())
    {
        set_cookies(req, session_cookies(req, &pair));
        return Ok(Viewer {
            actor,
            csrf,
            signed_in: true,
        });
    }
    if let AuthMode::None { owner } = &state.auth_mode {
        return Ok(Viewer {
            actor: owner.clone(),
            csrf,
            signed_in: false,
        });
    }
    Err(refused)
}
