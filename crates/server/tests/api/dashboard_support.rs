//! A small browser for the dashboard tests: keeps the cookies the server sets, sends
//! them back, follows no redirect (the tests check them), and posts forms with the
//! CSRF token of its cookie as a page would.

use std::collections::BTreeMap;
use std::sync::Mutex;

use reqwest::header::{COOKIE, HeaderMap, SET_COOKIE};
use reqwest::{Method, StatusCode};

use crate::helpers::{ADMIN_PASSWORD, Org, TestApp};

/// One answer of the dashboard.
#[derive(Debug)]
pub(crate) struct Page {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub text: String,
}

impl Page {
    /// Where a redirect goes.
    pub fn location(&self) -> &str {
        self.headers
            .get("location")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    /// The `Set-Cookie` line for `name`.
    pub fn set_cookie(&self, name: &str) -> Option<String> {
        self.headers
            .get_all(SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|line| line.starts_with(&format!("{name}=")))
            .map(str::to_owned)
    }
}

/// A browser session against one test server.
pub(crate) struct Browser<'a> {
    app: &'a TestApp,
    client: reqwest::Client,
    cookies: Mutex<BTreeMap<String, String>>,
}

impl<'a> Browser<'a> {
    pub fn new(app: &'a TestApp) -> Self {
        Self {
            app,
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            cookies: Mutex::new(BTreeMap::new()),
        }
    }

    /// The value of a cookie the browser holds.
    pub fn cookie(&self, name: &str) -> Option<String> {
        self.cookies.lock().unwrap().get(name).cloned()
    }

    /// Sets a cookie by hand (a forged or stale one).
    pub fn set(&self, name: &str, value: &str) {
        self.cookies
            .lock()
            .unwrap()
            .insert(name.to_owned(), value.to_owned());
    }

    fn cookie_header(&self) -> String {
        self.cookies
            .lock()
            .unwrap()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn keep(&self, headers: &HeaderMap) {
        let mut jar = self.cookies.lock().unwrap();
        for line in headers
            .get_all(SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
        {
            let pair = line.split(';').next().unwrap_or_default();
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            if value.is_empty() || line.contains("Max-Age=0") {
                jar.remove(name);
            } else {
                jar.insert(name.to_owned(), value.to_owned());
            }
        }
    }

    /// A request with the browser's cookies and `headers`, answered.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        form: Option<&[(&str, &str)]>,
        headers: &[(&str, &str)],
    ) -> Page {
        let mut request = self
            .client
            .request(method, self.app.url(path))
            .header(COOKIE, self.cookie_header());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(form) = form {
            let body = serde_urlencoded::to_string(form).unwrap();
            request = request
                .header("content-type", "application/x-www-form-urlencoded")
                .body(body);
        }
        self.answer(request).await
    }

    /// Posts `body` as a form's bytes, whatever they are, with the CSRF `token` in its
    /// header.
    pub async fn send_raw(&self, path: &str, body: Vec<u8>, token: &str) -> Page {
        let request = self
            .client
            .post(self.app.url(path))
            .header(COOKIE, self.cookie_header())
            .header("x-csrf-token", token)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        self.answer(request).await
    }

    async fn answer(&self, request: reqwest::RequestBuilder) -> Page {
        let answer = request.send().await.unwrap();
        let status = answer.status();
        let headers = answer.headers().clone();
        let text = answer.text().await.unwrap();
        self.keep(&headers);
        Page {
            status,
            headers,
            text,
        }
    }

    pub async fn get(&self, path: &str) -> Page {
        self.send(Method::GET, path, None, &[]).await
    }

    /// Posts a form as a page of the dashboard does: with the CSRF token of the cookie.
    pub async fn post(&self, path: &str, form: &[(&str, &str)]) -> Page {
        let token = self.cookie("muster_csrf").unwrap_or_default();
        let mut fields = vec![("csrf", token.as_str())];
        fields.extend_from_slice(form);
        self.send(Method::POST, path, Some(&fields), &[]).await
    }

    /// Opens the sign-in page and signs in, answering the sign-in post's answer.
    pub async fn sign_in(&self, email: &str, password: &str, org: &Org) -> Page {
        let form = self.get("/ui/login").await;
        assert_eq!(form.status, StatusCode::OK, "{}", form.text);
        let org = org.id.to_string();
        self.post(
            "/ui/login",
            &[("email", email), ("password", password), ("org", &org)],
        )
        .await
    }

    /// A browser signed in as `org`'s admin.
    pub async fn admin(app: &'a TestApp, org: &Org) -> Self {
        let browser = Self::new(app);
        let done = browser.sign_in(&org.admin_email, ADMIN_PASSWORD, org).await;
        assert_eq!(done.status, StatusCode::SEE_OTHER, "sign-in: {}", done.text);
        browser
    }
}
