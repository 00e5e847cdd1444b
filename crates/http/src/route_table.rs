//! The route table: registers each resource with its methods and the `405` that names
//! them, and records every (method, path) pair so a test can hold the OpenAPI document
//! to exactly what the server serves.
//!
//! Resources are grouped by their path's first segment (`/tasks`, `/agents`, ...), each
//! group one scope: actix's router tries its services in order and runs every dynamic
//! pattern's regex until one matches, so without scopes `GET /events` paid for the
//! forty-odd `/tasks/...`, `/agents/...` and `/api/...` patterns registered before it.
//! A scope's prefix is a plain string comparison. Paths whose first segments differ
//! never match the same request, so grouping keeps every path's meaning and, within a
//! group, the order of registration (`/tasks/claim` before `/tasks/{id}`).

use actix_web::{HttpRequest, Route, web};

use crate::fallback;

/// One registered operation: its method and its path template (`/tasks/{id}`).
pub type Operation = (&'static str, &'static str);

/// Registers resources on a service config and remembers what it registered.
pub(crate) struct Table<'a> {
    cfg: &'a mut web::ServiceConfig,
    seen: &'a mut Vec<Operation>,
    /// The entries added so far, by first path segment, in order of first appearance.
    groups: Vec<(&'static str, Vec<Entry>)>,
}

/// A resource being built: its path, the routes added so far and their methods.
pub(crate) struct Entry {
    path: &'static str,
    routes: Vec<Route>,
    methods: Vec<&'static str>,
}

impl<'a> Table<'a> {
    pub(crate) fn new(cfg: &'a mut web::ServiceConfig, seen: &'a mut Vec<Operation>) -> Self {
        Self {
            cfg,
            seen,
            groups: Vec::new(),
        }
    }

    /// Adds `entry`; any other method on its path is `405` with an `Allow` header.
    pub(crate) fn add(&mut self, mut entry: Entry) -> &mut Self {
        entry.methods.sort_unstable();
        for method in &entry.methods {
            self.seen.push((method, entry.path));
        }
        let (prefix, _) = split(entry.path);
        match self.groups.iter_mut().find(|(p, _)| *p == prefix) {
            Some((_, entries)) => entries.push(entry),
            None => self.groups.push((prefix, vec![entry])),
        }
        self
    }

    /// Registers every entry added, and `handler` for a path none of them serves.
    pub(crate) fn finish<F, Args>(self, handler: F)
    where
        F: actix_web::Handler<Args>,
        Args: actix_web::FromRequest + 'static,
        F::Output: actix_web::Responder + 'static,
    {
        for (prefix, mut entries) in self.groups {
            if let [entry] = entries.as_slice()
                && entry.path == prefix
                && let Some(entry) = entries.pop()
            {
                // A path alone in its group needs no scope: `/health`, `/mcp`.
                self.cfg.service(entry.into_resource(prefix));
            } else {
                let scope = entries
                    .into_iter()
                    .fold(web::scope(prefix), |scope, entry| {
                        let rest = entry.path.strip_prefix(prefix).unwrap_or(entry.path);
                        scope.service(entry.into_resource(rest))
                    });
                self.cfg.service(scope);
            }
        }
        self.cfg.default_service(web::to(handler));
    }

    /// A resource answering `GET` alone.
    pub(crate) fn get<F, Args>(&mut self, path: &'static str, handler: F) -> &mut Self
    where
        F: actix_web::Handler<Args>,
        Args: actix_web::FromRequest + 'static,
        F::Output: actix_web::Responder + 'static,
    {
        self.add(at(path).get(handler))
    }

    /// A resource answering `POST` alone.
    pub(crate) fn post<F, Args>(&mut self, path: &'static str, handler: F) -> &mut Self
    where
        F: actix_web::Handler<Args>,
        Args: actix_web::FromRequest + 'static,
        F::Output: actix_web::Responder + 'static,
    {
        self.add(at(path).post(handler))
    }
}

/// Starts a resource at `path`.
pub(crate) fn at(path: &'static str) -> Entry {
    Entry {
        path,
        routes: Vec::new(),
        methods: Vec::new(),
    }
}

/// `/tasks/{id}/transition` → (`/tasks`, `/{id}/transition`); `/health` → (`/health`, an
/// empty rest).
pub(crate) fn split(path: &'static str) -> (&'static str, &'static str) {
    let end = path
        .char_indices()
        .skip(1)
        .find(|&(_, c)| c == '/')
        .map_or(path.len(), |(i, _)| i);
    path.split_at(end)
}

macro_rules! method {
    ($name:ident, $route:path, $method:literal) => {
        #[doc = concat!("Adds the `", $method, "` handler.")]
        pub(crate) fn $name<F, Args>(mut self, handler: F) -> Self
        where
            F: actix_web::Handler<Args>,
            Args: actix_web::FromRequest + 'static,
            F::Output: actix_web::Responder + 'static,
        {
            self.routes.push($route().to(handler));
            self.methods.push($method);
            self
        }
    };
}

impl Entry {
    /// The resource at `path` (the entry's own, or what follows its scope's prefix).
    fn into_resource(self, path: &str) -> actix_web::Resource {
        let allowed = self.methods.join(", ");
        let resource = self
            .routes
            .into_iter()
            .fold(web::resource(path), actix_web::Resource::route);
        resource.default_service(web::to(move |req: HttpRequest| {
            let allowed = allowed.clone();
            async move { fallback::method_not_allowed(&req, &allowed) }
        }))
    }

    method!(get, web::get, "GET");
    method!(post, web::post, "POST");
    method!(patch, web::patch, "PATCH");
    method!(delete, web::delete, "DELETE");
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn a_path_splits_after_its_first_segment() {
        assert_eq!(
            split("/tasks/{id}/transition"),
            ("/tasks", "/{id}/transition")
        );
        assert_eq!(split("/tasks"), ("/tasks", ""));
        assert_eq!(
            split("/a2a/rest/message:send"),
            ("/a2a", "/rest/message:send")
        );
        assert_eq!(
            split("/.well-known/agent-card.json"),
            ("/.well-known", "/agent-card.json")
        );
    }
}
