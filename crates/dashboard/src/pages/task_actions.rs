//! What the task page's forms post: each calls one use case as the signed-in user,
//! then shows the task again, or the same page with the API's refusal.

use actix_web::HttpResponse;
use actix_web::web::{Data, Path};
use muster_domain::model::{
    CommentBody, CommentId, DependencyId, EscalationReason, Reason, TaskId, Title,
};
use muster_domain::service::{AutoAssign, NewEscalation, TaskPatch};
use muster_http::AppState;
use serde::Deserialize;

use super::board::{description_of, priority_of, tags_of};
use super::task::{CommentDraft, missing, task_id, task_page, task_page_with};
use super::uuid_of;
use crate::csrf::{Nothing, Posted};
use crate::layout::see_other;
use crate::refusal::Refusal;
use crate::session::Viewer;

/// Back to the task after an action, or the task page with its refusal.
async fn after(
    state: &AppState,
    viewer: &Viewer,
    id: TaskId,
    done: Result<(), Refusal>,
) -> HttpResponse {
    match done {
        Ok(()) => see_other(&format!("/ui/tasks/{id}")),
        Err(refusal) => task_page(state, viewer, id, Some(&refusal)).await,
    }
}

/// Runs `action` on the task of the path.
macro_rules! on_task {
    ($state:expr, $viewer:expr, $raw:expr, |$id:ident| $action:expr) => {{
        match task_id(&$raw) {
            Ok($id) => {
                let done: Result<(), Refusal> = async { $action }.await;
                after(&$state, &$viewer, $id, done).await
            }
            Err(refusal) => missing(&$viewer, &refusal),
        }
    }};
}

/// `POST /ui/tasks/{id}/approve`.
pub(crate) async fn approve(
    state: Data<AppState>,
    viewer: Viewer,
    raw: Path<String>,
    _: Posted<Nothing>,
) -> HttpResponse {
    on_task!(state, viewer, raw, |id| {
        state.tasks.approve(&viewer.actor, id).await?;
        Ok(())
    })
}

/// The assign form.
#[derive(Debug, Deserialize)]
pub(crate) struct Assign {
    #[serde(default)]
    assignee: String,
}

/// `POST /ui/tasks/{id}/assign`.
pub(crate) async fn assign(
    state: Data<AppState>,
    viewer: Viewer,
    raw: Path<String>,
    Posted(form): Posted<Assign>,
) -> HttpResponse {
    on_task!(state, viewer, raw, |id| {
        let assignee = uuid_of("assignee", &form.assignee)?.into();
        state.tasks.assign(&viewer.actor, id, assignee).await?;
        Ok(())
    })
}

/// `POST /ui/tasks/{id}/auto-assign`: the best candidate covering at least one of the
/// task's required capabilities.
pub(crate) async fn auto_assign(
    state: Data<AppState>,
    viewer: Viewer,
    raw: Path<String>,
    _: Posted<Nothing>,
) -> HttpResponse {
    on_task!(state, viewer, raw, |id| {
        let request = AutoAssign::new(None, Vec::new())?;
        state.tasks.auto_assign(&viewer.actor, id, request).await?;
        Ok(())
    })
}

/// The edit form.
#[derive(Debug, Deserialize)]
pub(crate) struct Edit {
    #[serde(default)]
    title: String,
    #[serde(default)]
    priority: String,
    #[serde(default)]
    tags: String,
    #[serde(default)]
    description: String,
}

fn patch_of(form: &Edit) -> Result<TaskPatch, Refusal> {
    Ok(TaskPatch {
        title: Some(Title::new(form.title.trim())?),
        description: Some(description_of(&form.description)?),
        priority: Some(priority_of(&form.priority)?),
        tags: Some(tags_of(&form.tags)?),
        ..TaskPatch::default()
    })
}

/// `POST /ui/tasks/{id}/edit`.
pub(crate) async fn edit(
    state: Data<AppState>,
    viewer: Viewer,
    raw: Path<String>,
    Posted(form): Posted<Edit>,
) -> HttpResponse {
    on_task!(state, viewer, raw, |id| {
        state
            .tasks
            .update(&viewer.actor, id, patch_of(&form)?)
            .await?;
        Ok(())
    })
}

/// The comment form.
#[derive(Debug, Deserialize)]
pub(crate) struct NewComment {
    #[serde(default)]
    body: String,
    #[serde(default)]
    parent: String,
}

/// `POST /ui/tasks/{id}/comments`: a comment, or a reply to one.
pub(crate) async fn comment(
    state: Data<AppState>,
    viewer: Viewer,
    raw: Path<String>,
    Posted(form): Posted<NewComment>,
) -> HttpResponse {
    let id = match task_id(&raw) {
        Ok(id) => id,
        Err(refusal) => return missing(&viewer, &refusal),
    };
    let said = async {
        let parent = match form.parent.trim() {
            "" => None,
            parent => Some(CommentId::from_uuid(uuid_of("parent", parent)?)),
        };
        let body = CommentBody::new(form.body.trim().to_owned())?;
        state.tasks.comment(&viewer.actor, id, body, parent).await?;
        Ok::<_, Refusal>(())
    };
    match said.await {
        Ok(()) => see_other(&format!("/ui/tasks/{id}")),
        // What was typed goes back into its form.
        Err(refusal) => {
            let draft = CommentDraft {
                parent: form.parent,
                body: form.body,
            };
            task_page_with(&state, &viewer, id, Some(&refusal), Some(draft)).await
        }
    }
}

/// The add-dependency form.
#[derive(Debug, Deserialize)]
pub(crate) struct NewDependency {
    #[serde(default, rename = "dependsOn")]
    depends_on: String,
    #[serde(default)]
    blocking: Option<String>,
}

/// `POST /ui/tasks/{id}/dependencies`.
pub(crate) async fn add_dependency(
    state: Data<AppState>,
    viewer: Viewer,
    raw: Path<String>,
    Posted(form): Posted<NewDependency>,
) -> HttpResponse {
    on_task!(state, viewer, raw, |id| {
        let on = TaskId::from_uuid(uuid_of("dependsOn", &form.depends_on)?);
        state
            .tasks
            .add_dependency(&viewer.actor, id, on, form.blocking.is_some())
            .await?;
        Ok(())
    })
}

/// `POST /ui/tasks/{id}/dependencies/{dependency}/remove`.
pub(crate) async fn remove_dependency(
    state: Data<AppState>,
    viewer: Viewer,
    raw: Path<(String, String)>,
    _: Posted<Nothing>,
) -> HttpResponse {
    let (task, dependency) = raw.into_inner();
    on_task!(state, viewer, task, |id| {
        let dependency = DependencyId::from_uuid(uuid_of("dependency id", &dependency)?);
        state
            .tasks
            .remove_dependency(&viewer.actor, id, dependency)
            .await?;
        Ok(())
    })
}

/// The escalate form.
#[derive(Debug, Deserialize)]
pub(crate) struct Escalate {
    #[serde(default)]
    notes: String,
}

/// `POST /ui/tasks/{id}/escalate`: a manual escalation.
pub(crate) async fn escalate(
    state: Data<AppState>,
    viewer: Viewer,
    raw: Path<String>,
    Posted(form): Posted<Escalate>,
) -> HttpResponse {
    on_task!(state, viewer, raw, |id| {
        let notes = match form.notes.trim() {
            "" => None,
            notes => Some(Reason::named("notes", notes.to_owned())?),
        };
        let new = NewEscalation {
            reason: EscalationReason::Manual,
            notes,
            target: None,
        };
        state.tasks.escalate(&viewer.actor, id, new).await?;
        Ok(())
    })
}
