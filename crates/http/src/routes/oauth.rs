//! `/auth/google` and its callback: the sign-in redirect flow (decision D-16). Without a
//! configured provider both answer 404.

use actix_web::http::header::LOCATION;
use actix_web::web::Data;
use actix_web::{HttpRequest, HttpResponse};
use muster_auth::pkce;
use muster_domain::model::{BearerSecret, LoginOutcome};
use muster_domain::service::accounts::SignInFailure;
use serde::Deserialize;
use std::time::Instant;

use crate::error::{ApiError, ErrorBody, codes};
use crate::state::{AppState, OAuthSettings};

/// What the provider sends the browser back with (other fields are ignored).
#[derive(Debug, Deserialize)]
struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

fn configured<'s>(state: &'s AppState, req: &HttpRequest) -> Result<&'s OAuthSettings, ApiError> {
    state
        .oauth
        .as_ref()
        .ok_or_else(|| crate::fallback::no_route(req))
}

fn redirect(location: &str) -> HttpResponse {
    HttpResponse::Found()
        .insert_header((LOCATION, location))
        .finish()
}

/// `{frontend}/auth/callback?<pairs>`.
fn to_frontend(settings: &OAuthSettings, pairs: &[(&str, &str)]) -> HttpResponse {
    let query = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish();
    let base = settings.frontend_url.trim_end_matches('/');
    redirect(&format!("{base}/auth/callback?{query}"))
}

/// `GET /auth/google`: to the provider's consent screen.
#[utoipa::path(
    get,
    path = "/auth/google",
    operation_id = "beginGoogleSignIn",
    tag = "users",
    summary = "Start signing in with Google",
    responses(
        (status = 302, description = "To the provider's consent screen", headers(("Location" = String))),
        (status = 429, description = "Only with `MUSTER_OAUTH_STARTS_PER_SECOND` set: this instance is starting as many sign-ins as it allows a second; nothing was stored", body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait"))),
        (status = 404, description = "Google sign-in is not configured", body = ErrorBody)
    ),
    security(())
)]
pub(super) async fn begin(
    state: Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let settings = configured(&state, &req)?;
    if let Some(starts) = &settings.starts
        && !starts.try_start(Instant::now())
    {
        return Err(ApiError::too_many(
            codes::RATE_LIMITED,
            "Too many sign-ins are being started; retry in a moment",
            1,
        ));
    }
    let internal = |err: muster_auth::keys::KeyError| ApiError::internal(&err);
    let sign_in_state = pkce::new_state().map_err(internal)?;
    let verifier = pkce::new_code_verifier().map_err(internal)?;
    let challenge = pkce::code_challenge_s256(&verifier);
    state
        .accounts
        .oauth_begin(&sign_in_state, BearerSecret::new(verifier))
        .await?;
    Ok(redirect(
        &settings.provider.authorize_url(&sign_in_state, &challenge),
    ))
}

/// `GET /auth/google/callback`: signs the user in and sends the browser to the
/// frontend with the tokens, or with `?error=<code>`.
#[utoipa::path(
    get,
    path = "/auth/google/callback",
    operation_id = "finishGoogleSignIn",
    tag = "users",
    summary = "Finish signing in with Google",
    params(
        ("code" = Option<String>, Query, description = "The provider's authorization code"),
        ("state" = Option<String>, Query, description = "The state this service sent"),
        ("error" = Option<String>, Query, description = "The provider's refusal")
    ),
    responses(
        (status = 302, description = "To the frontend's `/auth/callback` with the tokens, or with `error`", headers(("Location" = String))),
        (status = 404, description = "Google sign-in is not configured", body = ErrorBody)
    ),
    security(())
)]
pub(super) async fn callback(
    state: Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let settings = configured(&state, &req)?;
    let query: CallbackQuery =
        serde_urlencoded::from_str(req.query_string()).unwrap_or(CallbackQuery {
            code: None,
            state: None,
            error: None,
        });
    let failed = |failure: SignInFailure| to_frontend(settings, &[("error", &failure.to_string())]);
    let (Some(code), Some(sign_in_state), None) = (query.code, query.state, query.error) else {
        return Ok(failed(SignInFailure::ProviderRefused));
    };
    let outcome = state
        .accounts
        .oauth_complete(settings.provider.as_ref(), &sign_in_state, &code)
        .await?;
    Ok(match outcome {
        Ok(LoginOutcome::SignedIn { tokens, .. }) => to_frontend(
            settings,
            &[
                ("accessToken", tokens.access.token.expose()),
                ("refreshToken", tokens.refresh_token.expose()),
                ("expiresIn", &tokens.access.expires_in.to_string()),
            ],
        ),
        Ok(LoginOutcome::TwoFactorRequired) => failed(SignInFailure::ProviderRefused),
        Err(failure) => failed(failure),
    })
}
