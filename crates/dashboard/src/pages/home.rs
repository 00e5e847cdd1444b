//! `/` and `/ui`: to the board (which sends a visitor without a session to sign in).

use actix_web::HttpResponse;

use crate::layout::see_other;

pub(crate) async fn root() -> HttpResponse {
    see_other("/ui/board")
}
