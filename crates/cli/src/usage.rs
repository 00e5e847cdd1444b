//! `muster usage`.

use muster_client::Client;
use muster_client::types::runs::{UsageGroupResponse, UsageQueryParams};

use crate::args::UsageArgs;
use crate::output::{self, usd};

pub async fn run(client: &Client, args: UsageArgs) -> anyhow::Result<()> {
    let query = UsageQueryParams {
        group_by: args.group_by,
        from: args.from,
        to: args.to,
        agent_id: args.agent,
        task_id: args.task,
    };
    let groups = client.usage(&query).await?;
    if args.connection.json {
        return output::json(&groups);
    }
    if groups.is_empty() {
        println!("no usage");
        return Ok(());
    }
    output::table(
        &[
            "KEY",
            "RUNS",
            "REPORTS",
            "INPUT",
            "OUTPUT",
            "CACHE READ",
            "CACHE WRITE",
            "UNPRICED",
            "COST",
            "CREDITS",
            "UNFUNDED",
        ],
        &rows(&groups),
    );
    Ok(())
}

/// The table rows of a usage summary.
pub(crate) fn rows(groups: &[UsageGroupResponse]) -> Vec<Vec<String>> {
    groups
        .iter()
        .map(|g| {
            let t = &g.totals;
            vec![
                g.key.clone(),
                g.runs.to_string(),
                t.reports.to_string(),
                t.input_tokens.to_string(),
                t.output_tokens.to_string(),
                t.cache_read_tokens.to_string(),
                t.cache_write_tokens.to_string(),
                t.unpriced_tokens.to_string(),
                usd(t.cost_microusd),
                t.credits.to_string(),
                t.unfunded_credits.to_string(),
            ]
        })
        .collect()
}
