//! `/auth`: login, token rotation, logout, the user's own account, user creation and
//! the second factor. Bare objects on the wire (decision D-9).

use actix_web::web::{Data, Json};
use actix_web::{HttpRequest, HttpResponse};
use muster_domain::model::{ClientAddress, LoginOutcome, OrgId};
use muster_domain::service::accounts::{LoginRequest, NewUser};

use crate::body::parse_json;
use crate::dto::auth::{
    LoginBody, PasswordBody, ProfileBody, RefreshBody, RegisterBody, TokensResponse, TotpCodeBody,
    TotpDisableBody, TotpSetupBody, TotpSetupResponse, TwoFactorRequired, UserResponse,
    UserSummary,
};
use crate::error::{ApiError, ErrorBody};
use crate::extract::{RawBody, SignedInUser};
use crate::schemas::LoginAnswer;
use crate::state::{AppState, AuthMode};

/// Where a password or code came from, for the login throttle: the client's address
/// (the peer's, or what a trusted proxy forwarded; never a header any client can set).
pub(crate) fn client_address(state: &AppState, req: &HttpRequest) -> ClientAddress {
    ClientAddress::new(state.edge.client_ip(req))
}

fn answer_login(outcome: &LoginOutcome) -> HttpResponse {
    match outcome {
        LoginOutcome::SignedIn { tokens, user } => {
            HttpResponse::Ok().json(LoginAnswer::Tokens(TokensResponse::new(tokens, Some(user))))
        }
        LoginOutcome::TwoFactorRequired => {
            HttpResponse::Ok().json(LoginAnswer::TwoFactor(TwoFactorRequired::default()))
        }
    }
}

/// The 401 of the routes that check a password or code of the signed-in user.
const WRONG_SECRET: &str = "Missing or invalid credentials; or the password or code is wrong: `Invalid password or code`, one answer whichever it was";

/// The 429 of the routes that check a password or code of the signed-in user.
const THROTTLED: &str = "Too many failed password or code checks of this account from this client address (the same count as logins): refused for a while, without a check";

/// `POST /auth/login`.
#[utoipa::path(
    post,
    path = "/auth/login",
    operation_id = "login",
    tag = "users",
    summary = "Sign in with e-mail and password (and a TOTP code when enabled)",
    request_body = LoginBody,
    responses(
        (status = 200, description = "Signed in; or, when the account has TOTP on and no code was sent, `{requiresTwoFactor: true, message}` (send the same body again with the code)", body = LoginAnswer),
        (status = 401, description = "Wrong e-mail, password or TOTP code", body = ErrorBody),
        (status = 429, description = "Too many failed password or code checks of this account from this client address: refused for a while, without a check", body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait")))
    ),
    security(())
)]
pub(super) async fn login(
    state: Data<AppState>,
    req: HttpRequest,
    body: RawBody,
) -> Result<HttpResponse, ApiError> {
    let body: LoginBody = parse_json(&body.0)?;
    let from = client_address(&state, &req);
    if let (
        AuthMode::Local {
            owner,
            password_hash,
        },
        None,
    ) = (&state.auth_mode, &body.email)
    {
        let outcome = state
            .accounts
            .login_local(owner, password_hash, &body.password, from)
            .await?;
        return Ok(answer_login(&outcome));
    }
    let email = body
        .email
        .ok_or_else(|| ApiError::bad_request("email is required"))?;
    let outcome = state
        .accounts
        .login(LoginRequest {
            org_id: body.org_id.map(OrgId::from_uuid),
            email,
            password: body.password,
            second_factor: body.totp_code,
            from,
        })
        .await?;
    Ok(answer_login(&outcome))
}

/// `POST /auth/refresh`.
#[utoipa::path(
    post,
    path = "/auth/refresh",
    operation_id = "refreshTokens",
    tag = "users",
    summary = "Trade a refresh token for a new token pair",
    request_body = RefreshBody,
    responses(
        (status = 200, description = "A new pair; the refresh token sent is retired", body = TokensResponse),
        (status = 401, description = "The refresh token is unknown, expired or already used", body = ErrorBody)
    ),
    security(())
)]
pub(super) async fn refresh(
    state: Data<AppState>,
    body: RawBody,
) -> Result<Json<TokensResponse>, ApiError> {
    let body: RefreshBody = parse_json(&body.0)?;
    let tokens = state.accounts.refresh(&body.refresh_token).await?;
    Ok(Json(TokensResponse::new(&tokens, None)))
}

/// `POST /auth/logout`.
#[utoipa::path(
    post,
    path = "/auth/logout",
    operation_id = "logout",
    tag = "users",
    summary = "Revoke one refresh token",
    request_body = RefreshBody,
    responses((status = 204, description = "The refresh token is revoked")),
    security(("userToken" = []))
)]
pub(super) async fn logout(
    state: Data<AppState>,
    user: SignedInUser,
) -> Result<HttpResponse, ApiError> {
    let body: RefreshBody = parse_json(&user.body)?;
    state
        .accounts
        .logout(&user.actor, &body.refresh_token)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// `POST /auth/logout-all`.
#[utoipa::path(
    post,
    path = "/auth/logout-all",
    operation_id = "logoutAll",
    tag = "users",
    summary = "Revoke every refresh token of the caller",
    responses((status = 204, description = "Every refresh token of the user is revoked")),
    security(("userToken" = []))
)]
pub(super) async fn logout_all(
    state: Data<AppState>,
    user: SignedInUser,
) -> Result<HttpResponse, ApiError> {
    state.accounts.logout_all(&user.actor).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// `GET /auth/me`.
#[utoipa::path(
    get,
    path = "/auth/me",
    operation_id = "getMe",
    tag = "users",
    summary = "Read the signed-in user",
    responses((status = 200, description = "OK", body = UserResponse)),
    security(("userToken" = []))
)]
pub(super) async fn me(
    state: Data<AppState>,
    user: SignedInUser,
) -> Result<Json<UserResponse>, ApiError> {
    let me = state.accounts.me(&user.actor).await?;
    Ok(Json(UserResponse::from(&me)))
}

/// `POST /auth/profile`.
#[utoipa::path(
    post,
    path = "/auth/profile",
    operation_id = "updateProfile",
    tag = "users",
    summary = "Change the signed-in user's name",
    request_body = ProfileBody,
    responses((status = 200, description = "OK", body = UserSummary)),
    security(("userToken" = []))
)]
pub(super) async fn profile(
    state: Data<AppState>,
    user: SignedInUser,
) -> Result<Json<UserSummary>, ApiError> {
    let body: ProfileBody = parse_json(&user.body)?;
    let updated = state
        .accounts
        .update_profile(&user.actor, body.name, body.email)
        .await?;
    Ok(Json(UserSummary::from(&updated)))
}

/// `POST /auth/password`.
#[utoipa::path(
    post,
    path = "/auth/password",
    operation_id = "changePassword",
    tag = "users",
    summary = "Change the signed-in user's password",
    request_body = PasswordBody,
    responses(
        (status = 204, description = "Changed; every login of the user ends (access tokens already issued expire within 15 minutes)"),
        (status = 401, description = WRONG_SECRET, body = ErrorBody),
        (status = 429, description = THROTTLED, body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait")))
    ),
    security(("userToken" = []))
)]
pub(super) async fn password(
    state: Data<AppState>,
    req: HttpRequest,
    user: SignedInUser,
) -> Result<HttpResponse, ApiError> {
    let body: PasswordBody = parse_json(&user.body)?;
    let from = client_address(&state, &req);
    state
        .accounts
        .change_password(
            &user.actor,
            from,
            &body.current_password,
            &body.new_password,
        )
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// `POST /auth/register`.
#[utoipa::path(
    post,
    path = "/auth/register",
    operation_id = "registerUser",
    tag = "users",
    summary = "Create a user in the caller's organization (admins)",
    request_body = RegisterBody,
    responses((status = 200, description = "OK", body = UserResponse)),
    security(("userToken" = []))
)]
pub(super) async fn register(
    state: Data<AppState>,
    user: SignedInUser,
) -> Result<Json<UserResponse>, ApiError> {
    let body: RegisterBody = parse_json(&user.body)?;
    let created = state
        .accounts
        .register(
            &user.actor,
            NewUser {
                email: body.email,
                password: body.password,
                name: body.name,
                org_id: OrgId::from_uuid(body.org_id),
                role: body.role,
            },
        )
        .await?;
    Ok(Json(UserResponse::from(&created)))
}

/// `POST /auth/totp/setup`.
#[utoipa::path(
    post,
    path = "/auth/totp/setup",
    operation_id = "setUpTotp",
    tag = "users",
    summary = "Start TOTP enrolment: a secret and its QR code",
    request_body = TotpSetupBody,
    responses(
        (status = 200, description = "OK", body = TotpSetupResponse),
        (status = 401, description = WRONG_SECRET, body = ErrorBody),
        (status = 429, description = THROTTLED, body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait")))
    ),
    security(("userToken" = []))
)]
pub(super) async fn totp_setup(
    state: Data<AppState>,
    req: HttpRequest,
    user: SignedInUser,
) -> Result<Json<TotpSetupResponse>, ApiError> {
    let body: TotpSetupBody = parse_json(&user.body)?;
    let from = client_address(&state, &req);
    let setup = state
        .accounts
        .totp_setup(&user.actor, from, &body.password)
        .await?;
    Ok(Json(TotpSetupResponse {
        qr_code: setup.qr_code,
        recovery_codes: setup
            .recovery_codes
            .iter()
            .map(|c| c.expose().to_owned())
            .collect(),
        message: "Scan the QR code, then confirm with POST /auth/totp/verify".to_owned(),
    }))
}

/// `POST /auth/totp/verify`.
#[utoipa::path(
    post,
    path = "/auth/totp/verify",
    operation_id = "verifyTotp",
    tag = "users",
    summary = "Finish TOTP enrolment with a first code",
    request_body = TotpCodeBody,
    responses(
        (status = 204, description = "TOTP is on from now on"),
        (status = 401, description = WRONG_SECRET, body = ErrorBody),
        (status = 429, description = THROTTLED, body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait")))
    ),
    security(("userToken" = []))
)]
pub(super) async fn totp_verify(
    state: Data<AppState>,
    req: HttpRequest,
    user: SignedInUser,
) -> Result<HttpResponse, ApiError> {
    let body: TotpCodeBody = parse_json(&user.body)?;
    let from = client_address(&state, &req);
    state
        .accounts
        .totp_verify(&user.actor, from, &body.code)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// `POST /auth/totp/disable`.
#[utoipa::path(
    post,
    path = "/auth/totp/disable",
    operation_id = "disableTotp",
    tag = "users",
    summary = "Turn TOTP off",
    request_body = TotpDisableBody,
    responses(
        (status = 204, description = "TOTP is off"),
        (status = 401, description = WRONG_SECRET, body = ErrorBody),
        (status = 429, description = THROTTLED, body = ErrorBody, headers(("Retry-After" = u64, description = "Seconds to wait")))
    ),
    security(("userToken" = []))
)]
pub(super) async fn totp_disable(
    state: Data<AppState>,
    req: HttpRequest,
    user: SignedInUser,
) -> Result<HttpResponse, ApiError> {
    let body: TotpDisableBody = parse_json(&user.body)?;
    let from = client_address(&state, &req);
    state
        .accounts
        .totp_disable(&user.actor, from, &body.password, &body.code)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
