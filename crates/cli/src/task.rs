//! `muster task …`.

use muster_client::Client;
use muster_client::types::claims::ClaimBody;
use muster_client::types::task_links::CommentRequest;
use muster_client::types::tasks::{
    CreateTaskRequest, ListTasksQuery, TaskResponse, TransitionRequest,
};

use crate::args::TaskCommand;
use crate::output::{self, clip, or_dash, wire};

pub async fn run(client: &Client, command: TaskCommand, json: bool) -> anyhow::Result<()> {
    match command {
        TaskCommand::List {
            status,
            assignee,
            project,
            limit,
            cursor,
        } => {
            let query = ListTasksQuery {
                status,
                assignee_id: assignee,
                project_id: project,
                limit,
                cursor,
                ..ListTasksQuery::default()
            };
            list(client, &query, json).await
        }
        TaskCommand::Show { id } => show(&client.get_task(id).await?, json),
        TaskCommand::Create {
            title,
            description,
            priority,
            assignee,
            tags,
            reward,
            project,
        } => {
            let body = CreateTaskRequest {
                project_id: project,
                title,
                description,
                priority,
                assignee_id: assignee,
                tags: (!tags.is_empty()).then_some(tags),
                reward,
                ..CreateTaskRequest::default()
            };
            show(&client.create_task(&body).await?, json)
        }
        TaskCommand::Move {
            id,
            status,
            reason,
            result,
            outcome,
        } => {
            let body = TransitionRequest {
                status,
                reason,
                result,
                outcome,
            };
            let task = client.transition_task(id, &body).await?;
            show(&task, json)
        }
        TaskCommand::Comment { id, body } => {
            let body = CommentRequest {
                body,
                ..CommentRequest::default()
            };
            let comment = client.comment_on_task(id, &body).await?;
            if json {
                return output::json(&comment);
            }
            println!("comment {} on task {}", comment.id, comment.task_id);
            Ok(())
        }
        TaskCommand::Claim {
            capabilities,
            lease_seconds,
            reserve_credits,
            project,
        } => {
            let body = ClaimBody {
                capabilities: (!capabilities.is_empty()).then_some(capabilities),
                lease_seconds,
                reserve_credits,
                project_id: project,
            };
            match client.claim_task(&body).await? {
                Some(task) => show(&task, json),
                None if json => output::json(&serde_json::Value::Null),
                None => {
                    println!("no task to claim");
                    Ok(())
                }
            }
        }
    }
}

/// `muster task list`: one page, as a table or JSON.
async fn list(client: &Client, query: &ListTasksQuery, json: bool) -> anyhow::Result<()> {
    let page = client.list_tasks(query).await?;
    if json {
        return output::json(&page);
    }
    let rows: Vec<Vec<String>> = page
        .data
        .iter()
        .map(|t| {
            vec![
                t.id.to_string(),
                wire(&t.status),
                wire(&t.priority),
                or_dash(t.assignee_id),
                clip(&t.title, 60),
            ]
        })
        .collect();
    output::table(&["ID", "STATUS", "PRIORITY", "ASSIGNEE", "TITLE"], &rows);
    output::more(page.meta.as_ref());
    Ok(())
}

fn show(task: &TaskResponse, json: bool) -> anyhow::Result<()> {
    if json {
        return output::json(task);
    }
    let mut pairs = vec![
        ("id", task.id.to_string()),
        ("title", task.title.clone()),
        ("status", wire(&task.status)),
        ("priority", wire(&task.priority)),
        ("assignee", or_dash(task.assignee_id)),
        ("creator", or_dash(task.creator_id)),
        (
            "reward",
            format!(
                "{} from {} {}",
                task.reward,
                wire(&task.reward_payer.kind),
                task.reward_payer.id
            ),
        ),
        ("parent", or_dash(task.parent_task_id)),
        (
            "approval",
            if task.approval_required {
                "required"
            } else {
                "no"
            }
            .to_owned(),
        ),
        (
            "tags",
            if task.tags.is_empty() {
                "-".to_owned()
            } else {
                task.tags.join(", ")
            },
        ),
        (
            "created",
            muster_client::types::time::format(task.created_at),
        ),
        (
            "updated",
            muster_client::types::time::format(task.updated_at),
        ),
    ];
    if let Some(due) = task.due_at {
        pairs.push(("due", muster_client::types::time::format(due)));
    }
    if let Some(lease) = task.lease_expires_at {
        pairs.push(("lease until", muster_client::types::time::format(lease)));
    }
    if let Some(description) = &task.description {
        pairs.push(("description", description.clone()));
    }
    output::fields(&pairs);
    Ok(())
}
