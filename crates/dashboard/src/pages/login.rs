//! Signing in (e-mail, password, and the authenticator code when the account has one;
//! the deployment's password in auth mode `local`) and signing out.

use actix_web::http::StatusCode;
use actix_web::web::Data;
use actix_web::{HttpRequest, HttpResponse};
use maud::{Markup, html};
use muster_domain::model::{ClientAddress, LoginOutcome, OrgId};
use muster_domain::service::accounts::LoginRequest;
use muster_http::{AppState, AuthMode};
use serde::Deserialize;

use crate::Dashboard;
use crate::csrf::{self, Nothing, Posted};
use crate::layout::{Section, page, respond, see_other};
use crate::refusal::Refusal;
use crate::session::{REFRESH_COOKIE, Viewer, cleared, session_cookies, set_cookies};

/// The sign-in form as typed.
#[derive(Debug, Deserialize)]
pub(crate) struct SignIn {
    #[serde(default)]
    email: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    code: String,
    #[serde(default)]
    org: String,
}

/// What the sign-in page shows.
struct Form<'a> {
    local: bool,
    email: &'a str,
    org: &'a str,
    ask_code: bool,
}

fn form(csrf: &str, shown: &Form<'_>) -> Markup {
    html! {
        form.signin method="post" action="/ui/login" {
            input type="hidden" name=(csrf::FIELD) value=(csrf);
            @if !shown.local {
                label for="email" { "E-mail" }
                input #email type="email" name="email" autocomplete="username" required value=(shown.email);
            }
            label for="password" { "Password" }
            input #password type="password" name="password" autocomplete="current-password" required;
            @if shown.ask_code {
                label for="code" { "Authenticator code (or a recovery code)" }
                input #code type="text" name="code" inputmode="numeric" autocomplete="one-time-code" required autofocus;
            }
            @if !shown.local {
                details open[!shown.org.is_empty()] {
                    summary { "Another organization" }
                    label for="org" { "Organization id" }
                    input #org type="text" name="org" value=(shown.org) placeholder="the default organization";
                }
            }
            button type="submit" { "Sign in" }
        }
    }
}

fn login_page(csrf: &str, shown: &Form<'_>, notice: Option<&Refusal>) -> Markup {
    page(
        None,
        "Sign in",
        Section::Outside,
        notice,
        &form(csrf, shown),
    )
}

/// `GET /ui/login`.
pub(crate) async fn show(req: HttpRequest, state: Data<AppState>) -> HttpResponse {
    if matches!(state.auth_mode, AuthMode::None { .. }) {
        return see_other("/ui/board");
    }
    let csrf = csrf::token_of(&req);
    let shown = Form {
        local: matches!(state.auth_mode, AuthMode::Local { .. }),
        email: "",
        org: "",
        ask_code: false,
    };
    respond(StatusCode::OK, login_page(&csrf, &shown, None))
}

/// `POST /ui/login`.
pub(crate) async fn sign_in(
    req: HttpRequest,
    state: Data<AppState>,
    Posted(typed): Posted<SignIn>,
) -> HttpResponse {
    let local = matches!(state.auth_mode, AuthMode::Local { .. });
    // Counted with the API's logins of the same account from the same address.
    let from = ClientAddress::new(state.edge.client_ip(&req));
    let outcome = match &state.auth_mode {
        AuthMode::Local {
            owner,
            password_hash,
        } => state
            .accounts
            .login_local(owner, password_hash, &typed.password, from)
            .await
            .map_err(Refusal::from),
        AuthMode::None { .. } => return see_other("/ui/board"),
        AuthMode::Full => match org_of(&typed.org) {
            Ok(org_id) => state
                .accounts
                .login(LoginRequest {
                    org_id,
                    email: typed.email.trim().to_owned(),
                    password: typed.password.clone(),
                    second_factor: Some(typed.code.trim().to_owned()).filter(|c| !c.is_empty()),
                    from,
                })
                .await
                .map_err(Refusal::from),
            Err(refusal) => Err(refusal),
        },
    };
    let csrf = csrf::token_of(&req);
    let again = |ask_code: bool, notice: Refusal| {
        let shown = Form {
            local,
            email: &typed.email,
            org: &typed.org,
            ask_code,
        };
        respond(notice.status, login_page(&csrf, &shown, Some(&notice)))
    };
    match outcome {
        Ok(LoginOutcome::SignedIn { tokens, .. }) => {
            set_cookies(&req, session_cookies(&req, &tokens));
            csrf::renew(&req);
            see_other("/ui/board")
        }
        Ok(LoginOutcome::TwoFactorRequired) => again(
            true,
            Refusal {
                status: StatusCode::UNAUTHORIZED,
                code: None,
                message: "This account has two-factor sign-in: enter your password again with the code from your authenticator app.".to_owned(),
            },
        ),
        Err(refusal) => again(!typed.code.trim().is_empty(), refusal),
    }
}

fn org_of(typed: &str) -> Result<Option<OrgId>, Refusal> {
    let typed = typed.trim();
    if typed.is_empty() {
        return Ok(None);
    }
    Ok(Some(OrgId::from_uuid(super::uuid_of(
        "organization id",
        typed,
    )?)))
}

/// `POST /ui/logout`: ends the login (its refresh token) and clears the cookies.
pub(crate) async fn sign_out(
    req: HttpRequest,
    state: Data<AppState>,
    dashboard: Data<Dashboard>,
    viewer: Viewer,
    _: Posted<Nothing>,
) -> HttpResponse {
    if let Some(refresh) = req.cookie(REFRESH_COOKIE) {
        dashboard.sessions.forget(refresh.value()).await;
        // The cookies go whatever the answer: a login that cannot be found is over.
        if let Err(err) = state.accounts.logout(&viewer.actor, refresh.value()).await {
            tracing::warn!(error = %err, "dashboard sign-out could not revoke the login");
        }
    }
    set_cookies(&req, cleared(&req));
    csrf::renew(&req);
    see_other("/ui/login")
}
