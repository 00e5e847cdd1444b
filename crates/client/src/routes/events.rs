//! `/events`: the audit log, paged or live.

use muster_wire::Paged;
use muster_wire::events::{EventListMeta, EventResponse, ListEventsQuery};
use uuid::Uuid;

use super::data;
use crate::client::with_query;
use crate::stream::EventStream;
use crate::{Client, Error};

impl Client {
    /// `GET /events`: a page of the organization's audit log, filtered.
    pub async fn list_events(
        &self,
        query: &ListEventsQuery,
    ) -> Result<Paged<EventResponse, EventListMeta>, Error> {
        self.get_query("/events", query).await
    }

    /// `GET /events/:id`.
    pub async fn get_event(&self, id: Uuid) -> Result<EventResponse, Error> {
        data(self.get(&format!("/events/{id}")).await)
    }

    /// `GET /events/stream`: events as they are recorded, filtered like
    /// [`Client::list_events`] (without `page` and `limit`). Starts with what is
    /// recorded after it opens, or right after `after` (an event id); it reconnects by
    /// itself and resumes where it was, so nothing is missed or seen twice.
    pub fn stream_events(
        &self,
        filter: &ListEventsQuery,
        after: Option<Uuid>,
    ) -> Result<EventStream, Error> {
        let target = with_query("/events/stream", filter)?;
        Ok(EventStream::new(self.clone(), target, after))
    }
}
