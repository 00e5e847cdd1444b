//! The signed-in user's account: their API keys (create, with the key shown once;
//! delete) and two-factor sign-in (set-up with the QR code and recovery codes, confirm,
//! turn off).

use actix_web::web::{Data, Path};
use actix_web::{HttpRequest, HttpResponse};
use maud::{Markup, html};
use muster_domain::model::{ApiKeyId, ApiKeyScope, ClientAddress};
use muster_domain::service::NewApiKey;
use muster_domain::service::accounts::TotpSetup;
use muster_http::AppState;
use serde::Deserialize;

use super::uuid_of;
use crate::csrf::{Nothing, Posted};
use crate::layout::{Section, csrf_field, item_button, page, respond_page, see_other, when};
use crate::refusal::Refusal;
use crate::session::Viewer;

/// What a change shows once (a new key, a TOTP set-up).
enum Once {
    Key(String),
    Totp(TotpSetup),
}

fn totp_panel(viewer: &Viewer, enabled: bool, once: Option<&Once>) -> Markup {
    html! {
        section.panel aria-labelledby="totp-h" {
            h2 #totp-h { "Two-factor sign-in" }
            @if enabled {
                p { "On: signing in asks for a code from your authenticator app." }
                form method="post" action="/ui/account/totp/disable" {
                    (csrf_field(viewer))
                    label for="off-password" { "Password" }
                    input #off-password type="password" name="password" autocomplete="current-password" required;
                    label for="off-code" { "Current code (or a recovery code)" }
                    input #off-code type="text" name="code" autocomplete="one-time-code" required;
                    button.danger type="submit" { "Turn off" }
                }
            } @else if let Some(Once::Totp(setup)) = once {
                p { "Scan this code with your authenticator app, then enter the code it shows." }
                img.qr src=(setup.qr_code) alt="QR code of the authenticator key" width="246" height="246";
                p { "Cannot scan it? Type this key into the app instead: " code #totp-key { (setup.manual_key.expose()) } }
                p { "Recovery codes (each works once; keep them somewhere safe — they are shown only now):" }
                ul.secret { @for code in &setup.recovery_codes { li { (code.expose()) } } }
                form method="post" action="/ui/account/totp/verify" {
                    (csrf_field(viewer))
                    label for="totp-code" { "Code from the app" }
                    input #totp-code type="text" name="code" inputmode="numeric" autocomplete="one-time-code" required;
                    button type="submit" { "Turn on" }
                }
            } @else {
                p { "Off." }
                form method="post" action="/ui/account/totp/setup" {
                    (csrf_field(viewer))
                    label for="setup-password" { "Password" }
                    input #setup-password type="password" name="password" autocomplete="current-password" required;
                    button type="submit" { "Set up" }
                }
            }
        }
    }
}

async fn account_page(
    state: &AppState,
    viewer: &Viewer,
    notice: Option<&Refusal>,
    once: Option<&Once>,
) -> HttpResponse {
    let loaded = async {
        let me = state.accounts.me(&viewer.actor).await?;
        let keys = state.api_keys.list(&viewer.actor).await?;
        Ok::<_, Refusal>((me, keys))
    };
    let (me, keys) = match loaded.await {
        Ok(loaded) => loaded,
        Err(refusal) => {
            let content = html! { p { "The account page is for signed-in users." } };
            return respond_page(
                Some(&refusal),
                page(
                    Some(viewer),
                    "Account",
                    Section::Account,
                    Some(&refusal),
                    &content,
                ),
            );
        }
    };
    let content = html! {
        dl.fields {
            dt { "E-mail" } dd { (me.email.as_str()) }
            dt { "Role" } dd { (me.role.as_str()) }
        }
        section.panel aria-labelledby="keys-h" {
            h2 #keys-h { "API keys" }
            @if let Some(Once::Key(secret)) = once {
                p.notice.ok role="status" { "Key created. Copy it now: it is shown only once." }
                p.secret { (secret) }
            }
            @if keys.is_empty() { p { "No keys." } }
            @else {
                div.table-wrap { table {
                    thead { tr { th { "Name" } th { "Prefix" } th { "Scope" } th { "Last used" } th { "Expires" } th { span.visually-hidden { "Actions" } } } }
                    tbody {
                        @for key in &keys {
                            tr {
                                td { (key.name.as_str()) }
                                td { code { (key.key_prefix) "…" } }
                                td { (key.strongest_scope().as_str()) }
                                td { @match key.last_used_at { Some(at) => (when(at)), None => "never" } }
                                td { @match key.expires_at { Some(at) => (when(at)), None => "never" } }
                                td { (item_button(viewer, &format!("/ui/account/api-keys/{}/delete", key.id), "Delete", key.name.as_str())) }
                            }
                        }
                    }
                } }
            }
            form method="post" action="/ui/account/api-keys" {
                (csrf_field(viewer))
                label for="key-name" { "Name" }
                input #key-name type="text" name="name" required maxlength="100";
                label for="key-scope" { "Scope" }
                select #key-scope name="scope" {
                    @for scope in ["read", "write", "admin"] { option value=(scope) { (scope) } }
                }
                label for="key-days" { "Expires in days (empty: never)" }
                input #key-days type="number" name="expiresInDays" min="1";
                button type="submit" { "Create key" }
            }
        }
        (totp_panel(viewer, me.totp.enabled, once))
    };
    respond_page(
        notice,
        page(Some(viewer), "Account", Section::Account, notice, &content),
    )
}

/// `GET /ui/account`.
pub(crate) async fn show(state: Data<AppState>, viewer: Viewer) -> HttpResponse {
    account_page(&state, &viewer, None, None).await
}

/// The new-key form.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreateKey {
    #[serde(default)]
    name: String,
    #[serde(default)]
    scope: String,
    #[serde(default)]
    expires_in_days: String,
}

fn new_key(form: &CreateKey) -> Result<NewApiKey, Refusal> {
    let scope = ApiKeyScope::parse(form.scope.trim())
        .ok_or_else(|| Refusal::bad_request("scope must be one of read, write, admin"))?;
    let expires_in_days =
        match form.expires_in_days.trim() {
            "" => None,
            days => Some(days.parse::<i64>().map_err(|_| {
                Refusal::bad_request("expiresInDays must be a whole number of days")
            })?),
        };
    Ok(NewApiKey {
        name: form.name.trim().to_owned(),
        scopes: Some(vec![scope]),
        expires_in_days,
    })
}

/// `POST /ui/account/api-keys`.
pub(crate) async fn create_key(
    state: Data<AppState>,
    viewer: Viewer,
    Posted(form): Posted<CreateKey>,
) -> HttpResponse {
    let created = async {
        let new = new_key(&form)?;
        Ok::<_, Refusal>(state.api_keys.create(&viewer.actor, new).await?)
    };
    match created.await {
        Ok((_, secret)) => {
            let once = Once::Key(secret.expose().to_owned());
            account_page(&state, &viewer, None, Some(&once)).await
        }
        Err(refusal) => account_page(&state, &viewer, Some(&refusal), None).await,
    }
}

/// `POST /ui/account/api-keys/{id}/delete`.
pub(crate) async fn delete_key(
    state: Data<AppState>,
    viewer: Viewer,
    raw: Path<String>,
    _: Posted<Nothing>,
) -> HttpResponse {
    let deleted = async {
        let id = ApiKeyId::from_uuid(uuid_of("key id", &raw)?);
        Ok::<_, Refusal>(state.api_keys.delete(&viewer.actor, id).await?)
    };
    match deleted.await {
        Ok(()) => see_other("/ui/account"),
        Err(refusal) => account_page(&state, &viewer, Some(&refusal), None).await,
    }
}

/// The TOTP forms.
#[derive(Debug, Deserialize)]
pub(crate) struct Totp {
    #[serde(default)]
    password: String,
    #[serde(default)]
    code: String,
}

/// Where the form came from, for the login throttle (as the API counts it).
fn client_address(state: &AppState, req: &HttpRequest) -> ClientAddress {
    ClientAddress::new(state.edge.client_ip(req))
}

/// `POST /ui/account/totp/setup`: shows the QR code and recovery codes once.
pub(crate) async fn totp_setup(
    req: HttpRequest,
    state: Data<AppState>,
    viewer: Viewer,
    Posted(form): Posted<Totp>,
) -> HttpResponse {
    match state
        .accounts
        .totp_setup(&viewer.actor, client_address(&state, &req), &form.password)
        .await
    {
        Ok(setup) => account_page(&state, &viewer, None, Some(&Once::Totp(setup))).await,
        Err(err) => account_page(&state, &viewer, Some(&Refusal::from(err)), None).await,
    }
}

/// `POST /ui/account/totp/verify`: turns the second factor on.
pub(crate) async fn totp_verify(
    req: HttpRequest,
    state: Data<AppState>,
    viewer: Viewer,
    Posted(form): Posted<Totp>,
) -> HttpResponse {
    match state
        .accounts
        .totp_verify(
            &viewer.actor,
            client_address(&state, &req),
            form.code.trim(),
        )
        .await
    {
        Ok(()) => see_other("/ui/account"),
        Err(err) => account_page(&state, &viewer, Some(&Refusal::from(err)), None).await,
    }
}

/// `POST /ui/account/totp/disable`.
pub(crate) async fn totp_disable(
    req: HttpRequest,
    state: Data<AppState>,
    viewer: Viewer,
    Posted(form): Posted<Totp>,
) -> HttpResponse {
    let from = client_address(&state, &req);
    let done = state
        .accounts
        .totp_disable(&viewer.actor, from, &form.password, form.code.trim())
        .await;
    match done {
        Ok(()) => see_other("/ui/account"),
        Err(err) => account_page(&state, &viewer, Some(&Refusal::from(err)), None).await,
    }
}
