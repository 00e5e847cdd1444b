//! The page shell every page shares: head (stylesheet, scripts, CSRF token), the
//! navigation, the notice of a refused action, and small pieces forms repeat.

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use maud::{DOCTYPE, Markup, html};
use time::OffsetDateTime;
use time::macros::format_description;

use crate::assets::{HTMX, SCRIPT, STYLE};
use crate::refusal::Refusal;
use crate::session::Viewer;

/// The sections of the navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Section {
    Board,
    Projects,
    Agents,
    Spend,
    Audit,
    Webhooks,
    Account,
    /// Pages outside the navigation (sign-in).
    Outside,
}

const SECTIONS: [(Section, &str, &str); 7] = [
    (Section::Board, "Board", "/ui/board"),
    (Section::Projects, "Projects", "/ui/projects"),
    (Section::Agents, "Agents", "/ui/agents"),
    (Section::Spend, "Spend", "/ui/spend"),
    (Section::Audit, "Audit log", "/ui/audit"),
    (Section::Webhooks, "Webhooks", "/ui/webhooks"),
    (Section::Account, "Account", "/ui/account"),
];

/// htmx's settings: no inline styles (the CSP refuses them), nothing evaluated.
const HTMX_CONFIG: &str = r#"{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"historyCacheSize":0}"#;

/// A whole page.
pub(crate) fn page(
    viewer: Option<&Viewer>,
    title: &str,
    section: Section,
    notice: Option<&Refusal>,
    content: &Markup,
) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · Muster" }
                link rel="stylesheet" href=(STYLE);
                meta name="htmx-config" content=(HTMX_CONFIG);
                @if let Some(viewer) = viewer {
                    meta name="csrf-token" content=(viewer.csrf);
                }
                script src=(HTMX) defer {}
                script src=(SCRIPT) defer {}
            }
            body {
                a.skip href="#main" { "Skip to content" }
                @if let Some(viewer) = viewer {
                    header.top {
                        a.brand href="/ui/board" { "Muster" }
                        nav aria-label="Main" {
                            ul {
                                @for (s, label, href) in SECTIONS {
                                    li {
                                        @if s == section {
                                            a href=(href) aria-current="page" { (label) }
                                        } @else {
                                            a href=(href) { (label) }
                                        }
                                    }
                                }
                            }
                        }
                        @if viewer.signed_in {
                            form.signout method="post" action="/ui/logout" {
                                (csrf_field(viewer))
                                button type="submit" { "Sign out" }
                            }
                        }
                    }
                }
                main #main {
                    h1 { (title) }
                    div #notice role="alert" aria-live="assertive" {
                        @if let Some(notice) = notice {
                            p.notice.error data-code=[notice.code] { (notice.message) }
                        }
                    }
                    (content)
                }
            }
        }
    }
}

/// The hidden field that carries the CSRF token.
pub(crate) fn csrf_field(viewer: &Viewer) -> Markup {
    html! { input type="hidden" name=(crate::csrf::FIELD) value=(viewer.csrf); }
}

/// A one-button form posting to `action` (suspend, approve, ...).
pub(crate) fn action_button(viewer: &Viewer, action: &str, label: &str) -> Markup {
    html! {
        form.inline method="post" action=(action) {
            (csrf_field(viewer))
            button type="submit" { (label) }
        }
    }
}

/// [`action_button`] for one item of a list: screen readers hear which (`Delete ci`).
pub(crate) fn item_button(viewer: &Viewer, action: &str, label: &str, item: &str) -> Markup {
    html! {
        form.inline method="post" action=(action) {
            (csrf_field(viewer))
            button type="submit" aria-label={(label) " " (item)} { (label) }
        }
    }
}

/// The page of something that cannot be shown (a malformed id, or none of the
/// organization's): the refusal, and the way back to its list.
pub(crate) fn not_shown(
    viewer: &Viewer,
    title: &str,
    section: Section,
    back: (&str, &str),
    refusal: &Refusal,
) -> HttpResponse {
    let (href, label) = back;
    let content = html! { p { a href=(href) { (label) } } };
    respond_page(
        Some(refusal),
        page(Some(viewer), title, section, Some(refusal), &content),
    )
}

/// An HTML response.
pub(crate) fn respond(status: StatusCode, markup: Markup) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .body(markup.into_string())
}

/// A page, or the same page with the refusal that brought the user back to it.
pub(crate) fn respond_page(notice: Option<&Refusal>, markup: Markup) -> HttpResponse {
    respond(notice.map_or(StatusCode::OK, |n| n.status), markup)
}

/// After a change: back to `to` (post, redirect, get).
pub(crate) fn see_other(to: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((actix_web::http::header::LOCATION, to.to_owned()))
        .finish()
}

/// An instant as people read it: `2026-11-28 14:03 UTC`.
pub(crate) fn when(at: OffsetDateTime) -> String {
    at.to_offset(time::UtcOffset::UTC)
        .format(format_description!(
            "[year]-[month]-[day] [hour]:[minute] UTC"
        ))
        .unwrap_or_else(|_| at.to_string())
}
