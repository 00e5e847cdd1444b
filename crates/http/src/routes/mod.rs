//! Route table: thin handlers that parse, call one use case and map the result.

mod events;
mod fallback;
mod health;
mod tasks;

use actix_web::{HttpRequest, web};

/// Registers every route.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/tasks")
            .route(web::post().to(tasks::create))
            .route(web::get().to(tasks::list))
            .default_service(only("GET, POST")),
    )
    .service(
        web::resource("/tasks/{id}")
            .route(web::get().to(tasks::get))
            .default_service(only("GET")),
    )
    .service(
        web::resource("/tasks/{id}/transition")
            .route(web::post().to(tasks::transition))
            .default_service(only("POST")),
    )
    .service(
        web::resource("/events")
            .route(web::get().to(events::list))
            .default_service(only("GET")),
    )
    .service(
        web::resource("/events/{id}")
            .route(web::get().to(events::get))
            .default_service(only("GET")),
    )
    .service(
        web::resource("/health")
            .route(web::get().to(health::health))
            .default_service(only("GET")),
    )
    .service(
        web::resource("/ready")
            .route(web::get().to(health::ready))
            .default_service(only("GET")),
    )
    .default_service(web::to(fallback::not_found));
}

/// The fallback of a resource: 405 naming the methods it has.
fn only(allowed: &'static str) -> actix_web::Route {
    web::to(move |req: HttpRequest| async move { fallback::method_not_allowed(&req, allowed) })
}
