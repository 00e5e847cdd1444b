//! The sign-in redirect flow (decision D-16), `GET /auth/google` and its callback,
//! against a fake identity provider on loopback: authorization code with `state` and
//! PKCE S256, sign-in of an existing user of the default organization by verified
//! e-mail, the browser sent to `{frontend}/auth/callback` with the tokens or with
//! `?error=<code>`; and 404 on both routes when no provider is configured.
//!
//! The fake provider plays the consent screen (`GET /authorize`, which checks the
//! request, remembers the `code_challenge` with the code it mints and sends the browser
//! back), the token endpoint (which checks client, redirect URI and the PKCE verifier
//! and lets each code be used once) and the userinfo endpoint. `GET /_log` tells what
//! the token endpoint did, so a test can prove the app did, or did not, ask it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use actix_web::web::{self, Data};
use actix_web::{App, HttpRequest, HttpResponse, HttpServer};
use muster_auth::pkce;
use muster_outbound::oauth::OAuthProviderConfig;
use muster_server::auth_settings::OAuthSetting;
use reqwest::{Method, Url};
use serde_json::{Value, json};

use crate::helpers::{
    ADMIN_PASSWORD, AuthSettings, Reply, TestApp, assert_error_exact, send, str_of,
};

const CLIENT_ID: &str = "muster-test-client";
const CLIENT_SECRET: &str = "muster-test-client-secret";
const REDIRECT_URL: &str = "http://app.test/auth/google/callback";
const SCOPES: &str = "openid email profile";
const FRONTEND_URL: &str = "http://frontend.test";
const LANDING: &str = "http://frontend.test/auth/callback";

// ---------------------------------------------------------------------------------------
// The fake identity provider.
// ---------------------------------------------------------------------------------------

/// Who the user is at the provider, chosen by the test on the consent screen with
/// `as=ok:<email>`, `as=unverified:<email>` or `as=unavailable`.
#[derive(Debug, Clone)]
enum Who {
    /// A verified e-mail.
    Verified(String),
    /// An e-mail the provider did not verify.
    Unverified(String),
    /// The token endpoint answers 503 for this code.
    Unavailable,
}

impl Who {
    fn parse(text: &str) -> Option<Self> {
        match text.split_once(':') {
            Some(("ok", email)) => Some(Self::Verified(email.to_owned())),
            Some(("unverified", email)) => Some(Self::Unverified(email.to_owned())),
            None if text == "unavailable" => Some(Self::Unavailable),
            _ => None,
        }
    }
}

/// A code the consent screen minted.
#[derive(Debug)]
struct Grant {
    challenge: String,
    who: Who,
}

/// The provider's memory: issued codes and access tokens, and what `/token` did.
#[derive(Debug, Default)]
struct Fake {
    codes: Mutex<HashMap<String, Grant>>,
    tokens: Mutex<HashMap<String, Who>>,
    log: Mutex<Vec<String>>,
    counter: Mutex<u64>,
}

impl Fake {
    fn next(&self, prefix: &str) -> String {
        let mut counter = self.counter.lock().unwrap();
        *counter += 1;
        format!("{prefix}-{counter}")
    }

    fn record(&self, line: String) {
        self.log.lock().unwrap().push(line);
    }
}

fn bad_request(reason: &str) -> HttpResponse {
    HttpResponse::BadRequest().body(format!("fake provider: {reason}"))
}

fn invalid_grant(fake: &Fake, reason: &str) -> HttpResponse {
    fake.record(format!("refused: {reason}"));
    HttpResponse::BadRequest().json(json!({"error": "invalid_grant"}))
}

/// `GET /authorize`: the consent screen. Checks the authorization request, then sends
/// the browser back to `redirect_uri` with a fresh code bound to the challenge (or with
/// `error=access_denied` for `as=deny`).
async fn authorize(fake: Data<Fake>, query: web::Query<Vec<(String, String)>>) -> HttpResponse {
    let mut params = HashMap::new();
    for (key, value) in query.into_inner() {
        if params.insert(key.clone(), value).is_some() {
            return bad_request(&format!("{key} given twice"));
        }
    }
    let param = |key: &str| params.get(key).map_or("", String::as_str);
    let expected = [
        ("response_type", "code"),
        ("client_id", CLIENT_ID),
        ("redirect_uri", REDIRECT_URL),
        ("scope", SCOPES),
        ("code_challenge_method", "S256"),
    ];
    for (key, value) in expected {
        if param(key) != value {
            return bad_request(&format!("{key} is {:?}", param(key)));
        }
    }
    let (state, challenge) = (param("state"), param("code_challenge"));
    if state.is_empty() || challenge.len() != 43 {
        return bad_request("state or code_challenge missing");
    }
    let mut back = Url::parse(REDIRECT_URL).unwrap();
    if param("as") == "deny" {
        back.query_pairs_mut()
            .append_pair("error", "access_denied")
            .append_pair("state", state);
    } else {
        let Some(who) = Who::parse(param("as")) else {
            return bad_request("as= names nobody");
        };
        let code = fake.next("code");
        let grant = Grant {
            challenge: challenge.to_owned(),
            who,
        };
        fake.codes.lock().unwrap().insert(code.clone(), grant);
        back.query_pairs_mut()
            .append_pair("code", &code)
            .append_pair("state", state);
    }
    HttpResponse::Found()
        .insert_header(("Location", back.as_str()))
        .finish()
}

/// `POST /token`: the code exchange, checking client, redirect URI and PKCE; each code
/// works once.
async fn token(fake: Data<Fake>, form: web::Form<HashMap<String, String>>) -> HttpResponse {
    let field = |key: &str| form.get(key).map_or("", String::as_str);
    let expected = [
        ("grant_type", "authorization_code"),
        ("client_id", CLIENT_ID),
        ("client_secret", CLIENT_SECRET),
        ("redirect_uri", REDIRECT_URL),
    ];
    for (key, value) in expected {
        if field(key) != value {
            return invalid_grant(&fake, &format!("wrong {key}"));
        }
    }
    let Some(grant) = fake.codes.lock().unwrap().remove(field("code")) else {
        return invalid_grant(&fake, &format!("unknown code {}", field("code")));
    };
    if pkce::code_challenge_s256(field("code_verifier")) != grant.challenge {
        return invalid_grant(&fake, "code_verifier does not match the code_challenge");
    }
    if matches!(grant.who, Who::Unavailable) {
        fake.record("unavailable".to_owned());
        return HttpResponse::ServiceUnavailable().finish();
    }
    let access_token = fake.next("access");
    fake.tokens
        .lock()
        .unwrap()
        .insert(access_token.clone(), grant.who);
    fake.record("issued".to_owned());
    HttpResponse::Ok().json(json!({
        "access_token": access_token,
        "token_type": "Bearer",
        "expires_in": 3599,
        "scope": SCOPES,
    }))
}

/// `GET /userinfo`: the e-mail of the bearer token's owner.
async fn userinfo(fake: Data<Fake>, req: HttpRequest) -> HttpResponse {
    let bearer = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    let who = fake.tokens.lock().unwrap().get(bearer).cloned();
    let (email, verified) = match who {
        Some(Who::Verified(email)) => (email, true),
        Some(Who::Unverified(email)) => (email, false),
        Some(Who::Unavailable) | None => {
            return HttpResponse::Unauthorized().json(json!({"error": "invalid_token"}));
        }
    };
    HttpResponse::Ok().json(json!({
        "sub": format!("sub-{email}"), "email": email, "email_verified": verified,
    }))
}

/// `GET /_log`: what the token endpoint did, oldest first.
async fn log(fake: Data<Fake>) -> HttpResponse {
    HttpResponse::Ok().json(fake.log.lock().unwrap().clone())
}

/// Starts a fake provider on a free loopback port and answers settings that use it.
/// The provider lives on the calling test's runtime and ends with it.
pub fn provider_settings() -> AuthSettings {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let fake = Data::new(Fake::default());
    let server = HttpServer::new(move || {
        App::new()
            .app_data(fake.clone())
            .route("/authorize", web::get().to(authorize))
            .route("/token", web::post().to(token))
            .route("/userinfo", web::get().to(userinfo))
            .route("/_log", web::get().to(log))
    })
    .workers(1)
    .disable_signals()
    .shutdown_timeout(0)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);
    AuthSettings {
        oauth: Some(OAuthSetting {
            provider: OAuthProviderConfig {
                authorize_url: format!("{base}/authorize"),
                token_url: format!("{base}/token"),
                userinfo_url: format!("{base}/userinfo"),
                client_id: CLIENT_ID.to_owned(),
                client_secret: CLIENT_SECRET.to_owned(),
                redirect_url: REDIRECT_URL.to_owned(),
                scopes: SCOPES.to_owned(),
            },
            frontend_url: FRONTEND_URL.to_owned(),
            starts_per_second: None,
        }),
        ..AuthSettings::default()
    }
}

// ---------------------------------------------------------------------------------------
// The browser.
// ---------------------------------------------------------------------------------------

/// A client that shows redirects instead of following them.
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// The query of `url` as a map, asserting no key is repeated.
fn pairs(url: &Url) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for (key, value) in url.query_pairs() {
        let repeated = map.insert(key.clone().into_owned(), value.into_owned());
        assert!(repeated.is_none(), "{key} repeated in {url}");
    }
    map
}

/// The `Location` of a 302.
fn location(reply: &Reply) -> Url {
    assert_eq!(reply.status, 302, "expected a redirect, got {}", reply.text);
    let raw = reply
        .headers
        .get("location")
        .expect("a Location header")
        .to_str()
        .unwrap();
    Url::parse(raw).unwrap_or_else(|err| panic!("Location {raw:?}: {err}"))
}

/// A started sign-in: where the app sent the browser.
#[derive(Debug)]
struct SignIn {
    authorize: Url,
    state: String,
}

impl SignIn {
    /// The fake provider's base URL.
    fn provider(&self) -> String {
        self.authorize.origin().ascii_serialization()
    }
}

/// `GET /auth/google`, asserting it redirects to the provider's consent screen.
async fn begin(app: &TestApp) -> SignIn {
    let reply = send(browser().get(app.url("/auth/google"))).await;
    let authorize = location(&reply);
    assert!(
        authorize.as_str().starts_with("http://127.0.0.1:") && authorize.path() == "/authorize",
        "{authorize}"
    );
    let state = pairs(&authorize).remove("state").expect("a state");
    SignIn { authorize, state }
}

/// The user consents as `who` (see [`Who`], or `deny`); answers where the provider
/// sends the browser back (the app's registered callback URL).
async fn consent(sign_in: &SignIn, who: &str) -> Url {
    let mut url = sign_in.authorize.clone();
    url.query_pairs_mut().append_pair("as", who);
    let back = location(&send(browser().get(url)).await);
    assert!(back.as_str().starts_with(REDIRECT_URL), "{back}");
    back
}

/// `GET /auth/google/callback?<query>`, asserting it sends the browser to the
/// frontend's callback page; answers that page's query.
async fn callback(app: &TestApp, query: &str) -> BTreeMap<String, String> {
    let url = app.url(&format!("/auth/google/callback?{query}"));
    let landing = location(&send(browser().get(url)).await);
    let page = format!(
        "{}://{}{}",
        landing.scheme(),
        landing.host_str().unwrap_or_default(),
        landing.path()
    );
    assert_eq!(page, LANDING, "{landing}");
    pairs(&landing)
}

/// Follows the provider's redirect back to the app.
async fn come_back(app: &TestApp, back: &Url) -> BTreeMap<String, String> {
    callback(app, back.query().unwrap_or_default()).await
}

/// A whole sign-in as `who`; answers the frontend page's query.
async fn sign_in_as(app: &TestApp, who: &str) -> BTreeMap<String, String> {
    let sign_in = begin(app).await;
    let back = consent(&sign_in, who).await;
    come_back(app, &back).await
}

#[track_caller]
fn assert_refused(landing: &BTreeMap<String, String>, code: &str) {
    let expected = BTreeMap::from([("error".to_owned(), code.to_owned())]);
    assert_eq!(landing, &expected);
}

/// Asserts the landing page got tokens; answers the access token.
#[track_caller]
fn assert_signed_in(landing: &BTreeMap<String, String>) -> String {
    let keys: Vec<&str> = landing.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["accessToken", "expiresIn", "refreshToken"],
        "{landing:?}"
    );
    assert_eq!(landing["expiresIn"], "900");
    landing["accessToken"].clone()
}

/// What the provider's token endpoint did so far.
async fn provider_log(sign_in: &SignIn) -> Vec<String> {
    let reply = send(browser().get(format!("{}/_log", sign_in.provider()))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    serde_json::from_value(reply.body).unwrap()
}

/// `GET /auth/me` with `token`.
async fn whoami(app: &TestApp, token: &str) -> Value {
    let reply = send(app.bearer(token, Method::GET, "/auth/me", None)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.body
}

// ---------------------------------------------------------------------------------------
// With a provider.
// ---------------------------------------------------------------------------------------

mod with_a_provider {
    use super::*;

    api_tests!(with crate::oauth::provider_settings();
        begin_redirects_to_the_provider_with_state_and_pkce,
        a_verified_email_signs_in_the_user_of_the_default_org,
        the_sign_in_is_recorded_in_the_audit_log,
        a_state_works_once,
        an_unknown_state_is_refused_without_asking_the_provider,
        a_state_expires_after_ten_minutes,
        the_verifier_of_the_state_is_sent_with_the_code,
        a_code_the_provider_refuses_is_a_provider_error,
        a_denied_consent_is_a_provider_error,
        an_unreachable_provider_is_provider_unavailable,
        an_unverified_email_is_refused,
        an_unknown_email_is_refused,
        a_user_of_another_org_is_unknown,
        a_password_lock_does_not_refuse_the_providers_sign_in,
        starts_are_not_limited_unless_configured,
    );

    /// No rate limit applies by default but the login throttle (decision D-10a): with
    /// `MUSTER_OAUTH_STARTS_PER_SECOND` unset, a quick run of starts, more than a
    /// limit's burst would allow, all go to the provider.
    async fn starts_are_not_limited_unless_configured(app: &TestApp) {
        for n in 0..150 {
            let reply = send(browser().get(app.url("/auth/google"))).await;
            assert_eq!(reply.status.as_u16(), 302, "start {n}: {}", reply.text);
        }
    }

    async fn begin_redirects_to_the_provider_with_state_and_pkce(app: &TestApp) {
        let first = begin(app).await;
        let query = pairs(&first.authorize);
        let keys: Vec<&str> = query.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "client_id",
                "code_challenge",
                "code_challenge_method",
                "redirect_uri",
                "response_type",
                "scope",
                "state"
            ]
        );
        assert_eq!(query["response_type"], "code");
        assert_eq!(query["client_id"], CLIENT_ID);
        assert_eq!(query["redirect_uri"], REDIRECT_URL);
        assert_eq!(query["scope"], SCOPES);
        assert_eq!(query["code_challenge_method"], "S256");
        let base64url = |text: &str| {
            text.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        };
        for key in ["state", "code_challenge"] {
            assert_eq!(query[key].len(), 43, "{key} = {}", query[key]);
            assert!(base64url(&query[key]), "{key} = {}", query[key]);
        }
        assert_ne!(query["state"], query["code_challenge"]);
        // Every sign-in has its own state and verifier.
        let second = pairs(&begin(app).await.authorize);
        assert_ne!(second["state"], query["state"]);
        assert_ne!(second["code_challenge"], query["code_challenge"]);
        // Beginning asks the provider nothing.
        assert!(provider_log(&first).await.is_empty());
    }

    async fn a_verified_email_signs_in_the_user_of_the_default_org(app: &TestApp) {
        let sign_in = begin(app).await;
        let back = consent(&sign_in, &format!("ok:{}", app.org.admin_email)).await;
        let back_query = pairs(&back);
        assert_eq!(back_query["state"], sign_in.state);
        let landing = come_back(app, &back).await;
        let access = assert_signed_in(&landing);
        assert_eq!(provider_log(&sign_in).await, ["issued"]);
        let me = whoami(app, &access).await;
        assert_eq!(me["email"], app.org.admin_email.as_str());
        assert_eq!(str_of(&me, "orgId"), app.org.id.to_string());
        assert_eq!(me["role"], "admin");
        assert!(me["lastLoginAt"].is_string(), "{me}");
        // The refresh token is a real one of the same login.
        let refresh = &landing["refreshToken"];
        assert!(refresh.starts_with("mrt_"), "{refresh}");
        let rotated = app
            .post_public("/auth/refresh", &json!({ "refreshToken": refresh }))
            .await;
        assert_eq!(rotated.status, 200, "{}", rotated.text);
        // The provider's e-mail is matched like a typed one: case does not matter.
        let shouted = format!("ok:{}", app.org.admin_email.to_uppercase());
        let again = assert_signed_in(&sign_in_as(app, &shouted).await);
        assert_eq!(whoami(app, &again).await["id"], me["id"]);
        // The password login is untouched.
        app.login(&app.org.admin_email, ADMIN_PASSWORD).await;
    }

    async fn the_sign_in_is_recorded_in_the_audit_log(app: &TestApp) {
        let landing = sign_in_as(app, &format!("ok:{}", app.org.admin_email)).await;
        let access = assert_signed_in(&landing);
        let user_id = str_of(&whoami(app, &access).await, "id");
        let events = app.events_of(&app.org.hr, &user_id).await;
        assert_eq!(events[0]["type"], "user.login", "{events:?}");
        assert_eq!(
            events[0]["payload"],
            json!({"method": "oauth", "twoFactor": false})
        );
        assert_eq!(events[0]["entityType"], "user");
        assert_eq!(events[0]["actorId"], user_id.as_str());
    }

    async fn a_state_works_once(app: &TestApp) {
        let sign_in = begin(app).await;
        let back = consent(&sign_in, &format!("ok:{}", app.org.admin_email)).await;
        assert_signed_in(&come_back(app, &back).await);
        // The same redirect again (a replayed or reloaded callback).
        assert_refused(&come_back(app, &back).await, "invalid_state");
        // The provider was asked once.
        assert_eq!(provider_log(&sign_in).await, ["issued"]);
    }

    async fn an_unknown_state_is_refused_without_asking_the_provider(app: &TestApp) {
        let sign_in = begin(app).await;
        let back = consent(&sign_in, &format!("ok:{}", app.org.admin_email)).await;
        let code = pairs(&back).remove("code").unwrap();
        let forged = pkce::new_state().unwrap();
        let query = format!("code={code}&state={forged}");
        assert_refused(&callback(app, &query).await, "invalid_state");
        assert!(provider_log(&sign_in).await.is_empty());
        // The real state was not used up by the forged one.
        assert_signed_in(&come_back(app, &back).await);
    }

    async fn a_state_expires_after_ten_minutes(app: &TestApp) {
        let sign_in = begin(app).await;
        let back = consent(&sign_in, &format!("ok:{}", app.org.admin_email)).await;
        // Raw SQL: backdates the sign-in's expiry; no route moves time, no port changes it.
        app.db()
            .execute("UPDATE oauth_states SET expires_at = '2000-01-01T00:00:00.000Z'")
            .await;
        assert_refused(&come_back(app, &back).await, "invalid_state");
        assert!(provider_log(&sign_in).await.is_empty());
        // A sign-in started now works.
        let landing = sign_in_as(app, &format!("ok:{}", app.org.admin_email)).await;
        assert_signed_in(&landing);
    }

    async fn the_verifier_of_the_state_is_sent_with_the_code(app: &TestApp) {
        // The code of one sign-in presented with the state of another: the app sends the
        // other sign-in's verifier, which does not match the code's challenge.
        let first = begin(app).await;
        let second = begin(app).await;
        let back = consent(&first, &format!("ok:{}", app.org.admin_email)).await;
        let code = pairs(&back).remove("code").unwrap();
        let query = format!("code={code}&state={}", second.state);
        assert_refused(&callback(app, &query).await, "provider_error");
        assert_eq!(
            provider_log(&first).await,
            ["refused: code_verifier does not match the code_challenge"]
        );
    }

    async fn a_code_the_provider_refuses_is_a_provider_error(app: &TestApp) {
        let sign_in = begin(app).await;
        let query = format!("code=fail&state={}", sign_in.state);
        assert_refused(&callback(app, &query).await, "provider_error");
        assert_eq!(provider_log(&sign_in).await, ["refused: unknown code fail"]);
        // The state is used up even so.
        let back = consent(&sign_in, &format!("ok:{}", app.org.admin_email)).await;
        assert_refused(&come_back(app, &back).await, "invalid_state");
    }

    async fn a_denied_consent_is_a_provider_error(app: &TestApp) {
        let sign_in = begin(app).await;
        let back = consent(&sign_in, "deny").await;
        let query = pairs(&back);
        assert_eq!(query["error"], "access_denied");
        assert_eq!(query["state"], sign_in.state);
        assert_refused(&come_back(app, &back).await, "provider_error");
        assert!(provider_log(&sign_in).await.is_empty());
    }

    async fn an_unreachable_provider_is_provider_unavailable(app: &TestApp) {
        let sign_in = begin(app).await;
        let back = consent(&sign_in, "unavailable").await;
        assert_refused(&come_back(app, &back).await, "provider_unavailable");
        assert_eq!(provider_log(&sign_in).await, ["unavailable"]);
    }

    async fn an_unverified_email_is_refused(app: &TestApp) {
        let landing = sign_in_as(app, &format!("unverified:{}", app.org.admin_email)).await;
        assert_refused(&landing, "email_not_verified");
    }

    async fn an_unknown_email_is_refused(app: &TestApp) {
        let landing = sign_in_as(app, "ok:nobody@example.com").await;
        assert_refused(&landing, "unknown_user");
    }

    async fn a_user_of_another_org_is_unknown(app: &TestApp) {
        let landing = sign_in_as(app, &format!("ok:{}", app.other.admin_email)).await;
        assert_refused(&landing, "unknown_user");
    }

    /// The login throttle counts password and code guesses; the provider's sign-in
    /// guesses nothing, so a streak that locks the password login (anyone's, from
    /// anywhere) does not keep the owner out of it.
    async fn a_password_lock_does_not_refuse_the_providers_sign_in(app: &TestApp) {
        let wrong = json!({"email": app.org.admin_email, "password": "wrong password"});
        for _ in 0..10 {
            let reply = app.post_public("/auth/login", &wrong).await;
            assert_eq!(reply.status, 401, "{}", reply.text);
        }
        let right = json!({"email": app.org.admin_email, "password": ADMIN_PASSWORD});
        assert_eq!(app.post_public("/auth/login", &right).await.status, 429);
        let landing = sign_in_as(app, &format!("ok:{}", app.org.admin_email)).await;
        assert_signed_in(&landing);
    }
}

// ---------------------------------------------------------------------------------------
// Without a provider.
// ---------------------------------------------------------------------------------------

mod without_a_provider {
    use super::*;

    api_tests!(both_routes_answer_404);

    async fn both_routes_answer_404(app: &TestApp) {
        let reply = send(browser().get(app.url("/auth/google"))).await;
        assert_error_exact(&reply, 404, "Cannot GET /auth/google");
        let reply = send(browser().get(app.url("/auth/google/callback?code=x&state=y"))).await;
        assert_error_exact(&reply, 404, "Cannot GET /auth/google/callback");
        let reply = send(browser().get(app.url("/auth/google/callback"))).await;
        assert_error_exact(&reply, 404, "Cannot GET /auth/google/callback");
    }
}

// ---------------------------------------------------------------------------------------
// Sign-in starts, limited per instance.
// ---------------------------------------------------------------------------------------

mod with_a_start_limit {
    use super::*;

    /// One start a second, in bursts of five.
    fn one_a_second() -> AuthSettings {
        let mut settings = provider_settings();
        if let Some(oauth) = settings.oauth.as_mut() {
            oauth.starts_per_second = Some(1);
        }
        settings
    }

    api_tests!(with crate::oauth::with_a_start_limit::one_a_second();
        starts_past_the_limit_are_refused_and_the_started_ones_still_work,
    );

    /// `GET /auth/google` needs no credentials and stores what it starts: past the
    /// instance's limit it answers 429 with `Retry-After`, and the sign-ins it did start
    /// still complete.
    async fn starts_past_the_limit_are_refused_and_the_started_ones_still_work(app: &TestApp) {
        let since = std::time::Instant::now();
        let mut started = Vec::new();
        let refused = loop {
            let reply = send(browser().get(app.url("/auth/google"))).await;
            if reply.status != 302 {
                break reply;
            }
            let authorize = location(&reply);
            let state = pairs(&authorize).remove("state").expect("a state");
            started.push(SignIn { authorize, state });
            assert!(started.len() < 20, "twenty starts and none refused");
        };
        assert_error_exact(
            &refused,
            429,
            "Too many sign-ins are being started; retry in a moment",
        );
        assert_eq!(
            refused
                .headers
                .get("retry-after")
                .and_then(|v| v.to_str().ok()),
            Some("1")
        );
        // A burst of five, plus one a second for as long as the starts took.
        let allowed = 5 + since.elapsed().as_secs() + 1;
        assert!(
            started.len() >= 5 && started.len() as u64 <= allowed,
            "{} started, at most {allowed} allowed",
            started.len()
        );
        let back = consent(&started[0], &format!("ok:{}", app.org.admin_email)).await;
        assert_signed_in(&come_back(app, &back).await);
    }
}
