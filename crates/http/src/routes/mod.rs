//! Route table: thin handlers that parse, call one use case and map the result.

mod events;
mod fallback;
mod health;
mod tasks;

use actix_web::web;

/// Registers every route.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/tasks")
            .route(web::post().to(tasks::create))
            .route(web::get().to(tasks::list))
            .default_service(web::to(fallback::method_not_allowed)),
    )
    .service(
        web::resource("/tasks/{id}")
            .route(web::get().to(tasks::get))
            .default_service(web::to(fallback::method_not_allowed)),
    )
    .service(
        web::resource("/tasks/{id}/transition")
            .route(web::post().to(tasks::transition))
            .default_service(web::to(fallback::method_not_allowed)),
    )
    .service(
        web::resource("/events")
            .route(web::get().to(events::list))
            .default_service(web::to(fallback::method_not_allowed)),
    )
    .service(
        web::resource("/events/{id}")
            .route(web::get().to(events::get))
            .default_service(web::to(fallback::method_not_allowed)),
    )
    .service(web::resource("/health").route(web::get().to(health::health)))
    .service(web::resource("/ready").route(web::get().to(health::ready)))
    .default_service(web::to(fallback::not_found));
}
