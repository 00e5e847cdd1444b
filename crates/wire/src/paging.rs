//! `limit` and `cursor` of the lists the contract leaves unpaged (decision D-7).

use muster_domain::service::{Page, PageRequest};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use muster_domain::ValidationError;

/// The paging part of a list's query.
#[derive(Debug, Default, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields)]
pub struct PageQuery {
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 500))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// `meta.nextCursor` of the previous page.
    #[cfg_attr(feature = "openapi", param(value_type = Option<uuid::Uuid>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

impl PageQuery {
    /// The checked request, with the cursor turned into the list's id type.
    pub fn request<C: From<Uuid>>(&self) -> Result<PageRequest<C>, ValidationError> {
        page_request(self.limit, self.cursor.as_deref())
    }
}

/// The page asked for by a list's `limit` (default 100; the use case checks the range)
/// and `cursor` query values.
pub fn page_request<C: From<Uuid>>(
    limit: Option<u32>,
    cursor: Option<&str>,
) -> Result<PageRequest<C>, ValidationError> {
    Ok(PageRequest {
        cursor: parse_cursor(cursor)?,
        limit: limit.unwrap_or(PageRequest::<C>::DEFAULT_LIMIT),
    })
}

/// A `cursor` query value: the `meta.nextCursor` of the previous page, an id.
pub fn parse_cursor<C: From<Uuid>>(cursor: Option<&str>) -> Result<Option<C>, ValidationError> {
    cursor
        .map(|c| {
            Uuid::parse_str(c).map(C::from).map_err(|_| {
                ValidationError::new(
                    "cursor is not valid; pass meta.nextCursor of the previous page",
                )
            })
        })
        .transpose()
}

/// `{data: [...]}`, plus `meta: {nextCursor}` only when more remain.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PageResponse<T> {
    /// The items.
    pub data: Vec<T>,
    /// Present when there is a next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(default)]
    pub meta: Option<NextCursor>,
}

/// Paging information.
#[derive(Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NextCursor {
    /// Pass as `cursor` to get the next page.
    pub next_cursor: String,
}

impl<T> PageResponse<T> {
    /// The wire form of `page`, each item converted with `into`.
    pub fn of<I, C: Into<Uuid>>(page: Page<I, C>, into: impl Fn(I) -> T) -> Self {
        Self {
            data: page.items.into_iter().map(into).collect(),
            meta: page.next_cursor.map(|c| NextCursor {
                next_cursor: c.into().to_string(),
            }),
        }
    }
}
