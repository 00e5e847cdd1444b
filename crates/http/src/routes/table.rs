//! The route table: registers each resource with its methods and the `405` that names
//! them, and records every (method, path) pair so a test can hold the OpenAPI document
//! to exactly what the server serves.

use actix_web::{HttpRequest, Resource, web};

use super::fallback;

/// One registered operation: its method and its path template (`/tasks/{id}`).
pub type Operation = (&'static str, &'static str);

/// Registers resources on a service config and remembers what it registered.
pub(super) struct Table<'a> {
    cfg: &'a mut web::ServiceConfig,
    seen: &'a mut Vec<Operation>,
}

/// A resource being built: its path, the routes added so far and their methods.
pub(super) struct Entry {
    path: &'static str,
    resource: Resource,
    methods: Vec<&'static str>,
}

impl<'a> Table<'a> {
    pub(super) fn new(cfg: &'a mut web::ServiceConfig, seen: &'a mut Vec<Operation>) -> Self {
        Self { cfg, seen }
    }

    /// Registers `entry`; any other method on its path is `405` with an `Allow` header.
    pub(super) fn add(&mut self, entry: Entry) -> &mut Self {
        let mut methods = entry.methods;
        methods.sort_unstable();
        let allowed = methods.join(", ");
        for method in &methods {
            self.seen.push((method, entry.path));
        }
        self.cfg.service(
            entry
                .resource
                .default_service(web::to(move |req: HttpRequest| {
                    let allowed = allowed.clone();
                    async move { fallback::method_not_allowed(&req, &allowed) }
                })),
        );
        self
    }

    /// What answers a path no resource serves.
    pub(super) fn fallback<F, Args>(&mut self, handler: F)
    where
        F: actix_web::Handler<Args>,
        Args: actix_web::FromRequest + 'static,
        F::Output: actix_web::Responder + 'static,
    {
        self.cfg.default_service(web::to(handler));
    }

    /// A resource answering `GET` alone.
    pub(super) fn get<F, Args>(&mut self, path: &'static str, handler: F) -> &mut Self
    where
        F: actix_web::Handler<Args>,
        Args: actix_web::FromRequest + 'static,
        F::Output: actix_web::Responder + 'static,
    {
        self.add(at(path).get(handler))
    }

    /// A resource answering `POST` alone.
    pub(super) fn post<F, Args>(&mut self, path: &'static str, handler: F) -> &mut Self
    where
        F: actix_web::Handler<Args>,
        Args: actix_web::FromRequest + 'static,
        F::Output: actix_web::Responder + 'static,
    {
        self.add(at(path).post(handler))
    }
}

/// Starts a resource at `path`.
pub(super) fn at(path: &'static str) -> Entry {
    Entry {
        path,
        resource: web::resource(path),
        methods: Vec::new(),
    }
}

macro_rules! method {
    ($name:ident, $route:path, $method:literal) => {
        #[doc = concat!("Adds the `", $method, "` handler.")]
        pub(super) fn $name<F, Args>(mut self, handler: F) -> Self
        where
            F: actix_web::Handler<Args>,
            Args: actix_web::FromRequest + 'static,
            F::Output: actix_web::Responder + 'static,
        {
            self.resource = self.resource.route($route().to(handler));
            self.methods.push($method);
            self
        }
    };
}

impl Entry {
    method!(get, web::get, "GET");
    method!(post, web::post, "POST");
    method!(patch, web::patch, "PATCH");
    method!(delete, web::delete, "DELETE");
}
