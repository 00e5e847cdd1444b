//! `muster project …`.

use muster_client::Client;
use muster_client::types::nullable::Patch;
use muster_client::types::projects::{
    CreateProjectRequest, ListProjectsQuery, PatchProjectRequest, ProjectResponse,
};

use crate::args::ProjectCommand;
use crate::output::{self, or_dash, usd, wire};

pub async fn run(client: &Client, command: ProjectCommand, json: bool) -> anyhow::Result<()> {
    match command {
        ProjectCommand::List {
            status,
            limit,
            cursor,
        } => {
            let query = ListProjectsQuery {
                status,
                limit,
                cursor,
            };
            let page = client.list_projects(&query).await?;
            if json {
                return output::json(&page);
            }
            if page.data.is_empty() {
                println!("no projects");
                return Ok(());
            }
            let rows: Vec<Vec<String>> = page
                .data
                .iter()
                .map(|p| {
                    vec![
                        p.id.to_string(),
                        wire(&p.status),
                        or_dash(p.due_at.map(|d| d.date().to_string())),
                        output::clip(&p.name, 60),
                    ]
                })
                .collect();
            output::table(&["ID", "STATUS", "DUE", "NAME"], &rows);
            output::more(page.meta.as_ref());
            Ok(())
        }
        ProjectCommand::Show { id } => show(&client.get_project(id).await?, json),
        ProjectCommand::Create {
            name,
            goal,
            description,
            due,
        } => {
            let body = CreateProjectRequest {
                name,
                goal,
                description,
                due_at: due,
            };
            show(&client.create_project(&body).await?, json)
        }
        ProjectCommand::Update {
            id,
            name,
            goal,
            description,
            due,
        } => {
            let given = |v: Option<String>| v.map_or(Patch::Absent, Patch::Value);
            let body = PatchProjectRequest {
                name: given(name),
                goal: given(goal),
                description: given(description),
                due_at: given(due),
            };
            show(&client.update_project(id, &body).await?, json)
        }
        ProjectCommand::Archive { id } => show(&client.archive_project(id).await?, json),
    }
}

fn show(project: &ProjectResponse, json: bool) -> anyhow::Result<()> {
    if json {
        return output::json(project);
    }
    let mut pairs = vec![
        ("id", project.id.to_string()),
        ("name", project.name.clone()),
        ("status", wire(&project.status)),
        ("goal", or_dash(project.goal.clone())),
        ("due", or_dash(project.due_at)),
    ];
    if let Some(p) = &project.progress {
        pairs.push((
            "progress",
            format!(
                "{}% done ({} of {} tasks, {} open)",
                p.done_pct, p.done, p.total, p.open
            ),
        ));
        pairs.push(("overdue", p.overdue.to_string()));
        pairs.push(("blocked", p.blocked.to_string()));
        pairs.push((
            "spent",
            format!(
                "{} credits, {}",
                p.spent_credits,
                usd(Some(p.cost_microusd))
            ),
        ));
    }
    output::fields(&pairs);
    Ok(())
}
