//! `muster routine …`.

use muster_client::Client;
use muster_client::types::nullable::Patch;
use muster_client::types::routines::{
    CreateRoutineRequest, ListRoutinesQuery, PatchRoutineRequest, RoutineResponse, RoutineTaskBody,
};

use crate::args::RoutineCommand;
use crate::output::{self, or_dash, wire};

pub async fn run(client: &Client, command: RoutineCommand, json: bool) -> anyhow::Result<()> {
    match command {
        RoutineCommand::List { limit, cursor } => {
            let page = client
                .list_routines(&ListRoutinesQuery { limit, cursor })
                .await?;
            if json {
                return output::json(&page);
            }
            if page.data.is_empty() {
                println!("no routines");
                return Ok(());
            }
            let rows: Vec<Vec<String>> = page
                .data
                .iter()
                .map(|r| {
                    vec![
                        r.id.to_string(),
                        if r.enabled { "on" } else { "off" }.to_owned(),
                        format!("{} ({})", r.schedule, r.timezone),
                        or_dash(r.next_run_at),
                        output::clip(&r.name, 40),
                    ]
                })
                .collect();
            output::table(&["ID", "STATE", "SCHEDULE", "NEXT", "NAME"], &rows);
            output::more(page.meta.as_ref());
            Ok(())
        }
        RoutineCommand::Show { id } => show(&client.get_routine(id).await?, json),
        RoutineCommand::Create {
            name,
            schedule,
            timezone,
            title,
            description,
            priority,
            project,
            template,
            catch_up,
            disabled,
        } => {
            let task = title.map(|title| RoutineTaskBody {
                title,
                description,
                priority,
                project_id: project,
                ..RoutineTaskBody::default()
            });
            let body = CreateRoutineRequest {
                name,
                schedule,
                timezone,
                task,
                template_id: template,
                enabled: Some(!disabled),
                catch_up,
            };
            show(&client.create_routine(&body).await?, json)
        }
        RoutineCommand::Enable { id } | RoutineCommand::Disable { id } => {
            let on = matches!(command, RoutineCommand::Enable { .. });
            let body = PatchRoutineRequest {
                enabled: Patch::Value(on),
                ..PatchRoutineRequest::default()
            };
            show(&client.update_routine(id, &body).await?, json)
        }
        RoutineCommand::Run { id } => {
            let task = client.run_routine(id).await?;
            if json {
                return output::json(&task);
            }
            println!("created task {}: {}", task.id, task.title);
            Ok(())
        }
        RoutineCommand::Delete { id } => {
            client.delete_routine(id).await?;
            if json {
                return output::json(&serde_json::json!({"deleted": true}));
            }
            println!("deleted routine {id}");
            Ok(())
        }
    }
}

fn show(routine: &RoutineResponse, json: bool) -> anyhow::Result<()> {
    if json {
        return output::json(routine);
    }
    let work = match (&routine.task, routine.template_id) {
        (Some(task), _) => format!("task \"{}\"", task.title),
        (None, Some(template)) => format!("template {template}"),
        (None, None) => "-".to_owned(),
    };
    output::fields(&[
        ("id", routine.id.to_string()),
        ("name", routine.name.clone()),
        (
            "schedule",
            format!("{} ({})", routine.schedule, routine.timezone),
        ),
        ("creates", work),
        ("enabled", routine.enabled.to_string()),
        ("catch-up", wire(&routine.catch_up)),
        ("next run", or_dash(routine.next_run_at)),
        ("last run", or_dash(routine.last_run_at)),
        ("last task", or_dash(routine.last_task_id)),
        ("last error", or_dash(routine.last_error.clone())),
        ("paused", or_dash(routine.paused_reason.clone())),
    ]);
    Ok(())
}
