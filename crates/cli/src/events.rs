//! `muster events tail`.

use muster_client::Client;
use muster_client::types::events::ListEventsQuery;

use crate::args::EventsCommand;
use crate::output::{or_dash, wire};

pub async fn run(client: &Client, command: EventsCommand, json: bool) -> anyhow::Result<()> {
    let EventsCommand::Tail {
        event_type,
        entity_id,
        after,
    } = command;
    let filter = ListEventsQuery {
        event_type,
        entity_id,
        ..ListEventsQuery::default()
    };
    let mut stream = client.stream_events(&filter, after)?;
    loop {
        let event = stream.next().await?;
        if json {
            // One event per line, for `jq` and friends.
            println!("{}", serde_json::to_string(&event)?);
        } else {
            println!(
                "{}  {:<8}  {:<28}  {} {}  by {}",
                muster_client::types::time::format(event.created_at),
                wire(&event.severity),
                event.event_type,
                event.entity_type,
                event.entity_id,
                or_dash(event.actor_id),
            );
        }
    }
}
