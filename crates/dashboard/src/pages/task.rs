//! One task: its fields, edit, move, assign (by hand, or automatically with the
//! candidates and their coverage), approve, its runs, comments with replies,
//! dependencies (the blocking ones marked), escalations and its audit trail.

use actix_web::HttpResponse;
use actix_web::web::{Data, Path};
use maud::{Markup, html};
use muster_domain::model::{
    Agent, Author, Comment, CommentId, Escalation, RewardPayer, Run, Task, TaskDependency, TaskId,
    TaskStatus,
};
use muster_domain::policy;
use muster_domain::ports::EventFilter;
use muster_domain::rules::candidates::Candidate;
use muster_domain::service::{CandidateQuery, EventQuery, PageRequest, runs_of_task};
use muster_http::AppState;

use super::audit::events_table;
use super::board::{PRIORITIES, label};
use super::run_list::{runs_of, runs_table};
use super::{agent_name, agents_of, uuid_of};
use crate::layout::{
    Section, action_button, csrf_field, item_button, not_shown, page, respond_page, when,
};
use crate::refusal::Refusal;
use crate::session::Viewer;

/// What the task page shows, read before rendering.
struct Loaded {
    task: Task,
    agents: Vec<Agent>,
    comments: Vec<Comment>,
    dependencies: Vec<(TaskDependency, Option<Task>)>,
    escalations: Vec<Escalation>,
    candidates: Vec<Candidate>,
    /// Its newest runs.
    runs: Vec<Run>,
    trail: Vec<muster_domain::model::Event>,
    /// A refused comment, shown again in its form so that nothing typed is lost.
    draft: Option<CommentDraft>,
}

/// A comment as typed: its text, and the comment it replies to (empty for none).
#[derive(Debug, Clone, Default)]
pub(crate) struct CommentDraft {
    pub parent: String,
    pub body: String,
}

impl CommentDraft {
    /// What was typed in the form answering `parent` (`None`: the new-comment form).
    fn body_for(&self, parent: Option<CommentId>) -> Option<&str> {
        let matches = match parent {
            Some(id) => self.parent.trim() == id.to_string(),
            None => self.parent.trim().is_empty(),
        };
        matches.then_some(self.body.as_str())
    }
}

async fn load(state: &AppState, viewer: &Viewer, id: TaskId) -> Result<Loaded, Refusal> {
    let actor = &viewer.actor;
    let task = state.tasks.get(actor, id).await?;
    let agents = agents_of(state, actor).await?;
    let comments = state
        .tasks
        .comments_of(
            actor,
            &task,
            PageRequest {
                cursor: None,
                limit: 500,
            },
        )
        .await?
        .items;
    let mut dependencies = Vec::new();
    for dependency in state.tasks.dependencies(actor, id).await? {
        let on = state.tasks.get(actor, dependency.depends_on_id).await.ok();
        dependencies.push((dependency, on));
    }
    let escalations = state
        .tasks
        .escalations(
            actor,
            id,
            PageRequest {
                cursor: None,
                limit: 100,
            },
        )
        .await?
        .items;
    let candidates = if task.status.is_terminal() || policy::may_write(actor).is_err() {
        Vec::new()
    } else {
        state
            .tasks
            .candidates(actor, id, CandidateQuery::new(Some(0), Some(10))?)
            .await?
    };
    let runs = runs_of(state, actor, &runs_of_task(id)).await?;
    let filter = EventFilter {
        entity_id: Some(id.as_uuid()),
        ..EventFilter::default()
    };
    let trail = state
        .events
        .list(
            actor,
            &filter,
            EventQuery {
                page: 1,
                limit: 100,
            },
        )
        .await?
        .events;
    Ok(Loaded {
        task,
        agents,
        comments,
        dependencies,
        escalations,
        candidates,
        runs,
        trail,
        draft: None,
    })
}

fn author(agents: &[Agent], author: Option<&Author>) -> String {
    match author {
        Some(Author::Agent(id)) => agent_name(agents, *id),
        Some(Author::User(_)) => "a user".to_owned(),
        None => "the system".to_owned(),
    }
}

fn fields(loaded: &Loaded) -> Markup {
    let task = &loaded.task;
    html! {
        dl.fields {
            dt { "Status" } dd.status { (label(task.status)) }
            dt { "Priority" } dd { span class={"priority " (task.priority.as_str())} { (task.priority.as_str()) } }
            dt { "Assignee" } dd.assignee {
                @match task.assignee_id {
                    Some(id) => a href={"/ui/agents/" (id)} { (agent_name(&loaded.agents, id)) },
                    None => "nobody",
                }
            }
            dt { "Created by" } dd { (author(&loaded.agents, task.creator.as_ref())) ", " (when(task.created_at)) }
            dt { "Approval" } dd {
                @if !task.approval_required { "not required" }
                @else if let Some(at) = task.approved_at { "approved " (when(at)) }
                @else { "required, not given yet" }
            }
            @if let Some(due) = task.due_at { dt { "Due" } dd { (when(due)) } }
            @if let Some(parent) = task.parent_task_id {
                dt { "Parent" } dd { a href={"/ui/tasks/" (parent)} { (parent) } }
            }
            dt { "Reward" } dd.reward {
                (task.reward) " credits from "
                @match task.reward_payer {
                    RewardPayer::Agent(id) => a href={"/ui/agents/" (id)} { (agent_name(&loaded.agents, id)) },
                    RewardPayer::Treasury => "the treasury",
                }
            }
            dt { "Tags" } dd { @for tag in task.tags.as_slice() { span.tag { (tag) } " " } }
            @if let Some(result) = &task.result { dt { "Result" } dd { (result.as_str()) } }
            @if let Some(outcome) = task.outcome { dt { "Outcome" } dd { (outcome.as_str()) } }
            dt { "Updated" } dd { (when(task.updated_at)) }
        }
        @if let Some(description) = &task.description {
            h2 { "Description" }
            p.description { (description.as_str()) }
        }
    }
}

fn controls(viewer: &Viewer, loaded: &Loaded) -> Markup {
    let task = &loaded.task;
    let base = format!("/ui/tasks/{}", task.id);
    let open = !task.status.is_terminal();
    html! {
        div.actions {
            @if task.awaits_approval() && policy::may_approve(&viewer.actor, task).is_ok() {
                (action_button(viewer, &format!("{base}/approve"), "Approve"))
            }
            form.inline method="post" action={(base) "/move"} {
                (csrf_field(viewer))
                input type="hidden" name="back" value="task";
                label.visually-hidden for="move-to" { "Move to" }
                select #move-to name="status" {
                    @for status in TaskStatus::ALL {
                        option value=(status.as_str()) selected[status == task.status] { (label(status)) }
                    }
                }
                label.visually-hidden for="move-reason" { "Reason" }
                input #move-reason type="text" name="reason" placeholder="reason (optional)";
                button type="submit" { "Move" }
            }
        }
        @if open {
            section.panel aria-labelledby="assign-h" {
                h2 #assign-h { "Assign" }
                form method="post" action={(base) "/assign"} {
                    (csrf_field(viewer))
                    label for="assignee" { "Agent" }
                    select #assignee name="assignee" {
                        @for agent in &loaded.agents {
                            option value=(agent.id) selected[Some(agent.id) == task.assignee_id] {
                                (agent.name) " (" (agent.handle.as_str()) ", " (agent.status.as_str()) ")"
                            }
                        }
                    }
                    button type="submit" { "Assign" }
                }
                (action_button(viewer, &format!("{base}/auto-assign"), "Auto-assign the best candidate"))
                h3 { "Candidates" }
                @if loaded.candidates.is_empty() {
                    p { "No eligible agent." }
                } @else {
                    div.table-wrap { table {
                        thead { tr { th { "Agent" } th { "Coverage" } th { "Matched capabilities" } th { "Open tasks" } th { "Reputation" } } }
                        tbody {
                            @for c in &loaded.candidates {
                                tr {
                                    td { a href={"/ui/agents/" (c.agent.id)} { (c.agent.name) } }
                                    td { (c.coverage) " %" }
                                    td { @for (name, level) in &c.matched { (name.as_str()) " (" (level.as_str()) ") " } }
                                    td { (c.open_tasks) }
                                    td { (c.agent.reputation_score) }
                                }
                            }
                        }
                    } }
                }
            }
            details.panel {
                summary { "Edit" }
                form method="post" action={(base) "/edit"} {
                    (csrf_field(viewer))
                    label for="edit-title" { "Title" }
                    input #edit-title type="text" name="title" required maxlength="255" value=(task.title.as_str());
                    label for="edit-priority" { "Priority" }
                    select #edit-priority name="priority" {
                        @for p in PRIORITIES {
                            option value=(p) selected[task.priority.as_str() == p] { (p) }
                        }
                    }
                    label for="edit-tags" { "Tags (comma-separated)" }
                    input #edit-tags type="text" name="tags" value=(task.tags.as_slice().join(", "));
                    label for="edit-description" { "Description" }
                    textarea #edit-description name="description" rows="4" {
                        @if let Some(d) = &task.description { (d.as_str()) }
                    }
                    button type="submit" { "Save" }
                }
            }
        }
    }
}

fn comment_tree(
    viewer: &Viewer,
    loaded: &Loaded,
    parent: Option<CommentId>,
    writable: bool,
) -> Markup {
    let base = format!("/ui/tasks/{}", loaded.task.id);
    html! {
        @for comment in loaded.comments.iter().filter(|c| c.parent_comment_id == parent) {
            article.comment id={"comment-" (comment.id)} {
                p.meta { strong { (author(&loaded.agents, comment.author.as_ref())) } ", " (when(comment.created_at)) }
                p { (comment.body.as_str()) }
                @if writable {
                    @let draft = loaded.draft.as_ref().and_then(|d| d.body_for(Some(comment.id)));
                    details open[draft.is_some()] {
                        summary { "Reply" }
                        form method="post" action={(base) "/comments"} {
                            (csrf_field(viewer))
                            input type="hidden" name="parent" value=(comment.id);
                            label for={"reply-" (comment.id)} { "Reply" }
                            textarea id={"reply-" (comment.id)} name="body" rows="2" required { (draft.unwrap_or_default()) }
                            button type="submit" { "Reply" }
                        }
                    }
                }
                (comment_tree(viewer, loaded, Some(comment.id), writable))
            }
        }
    }
}

fn conversation(viewer: &Viewer, loaded: &Loaded) -> Markup {
    let writable = policy::may_write(&viewer.actor).is_ok();
    let base = format!("/ui/tasks/{}", loaded.task.id);
    html! {
        section aria-labelledby="comments-h" {
            h2 #comments-h { "Comments (" (loaded.comments.len()) ")" }
            (comment_tree(viewer, loaded, None, writable))
            @if writable {
                form method="post" action={(base) "/comments"} {
                    (csrf_field(viewer))
                    label for="comment-body" { "New comment" }
                    textarea #comment-body name="body" rows="3" required {
                        (loaded.draft.as_ref().and_then(|d| d.body_for(None)).unwrap_or_default())
                    }
                    button type="submit" { "Comment" }
                }
            }
        }
    }
}

fn dependencies(viewer: &Viewer, loaded: &Loaded) -> Markup {
    let writable = policy::may_write(&viewer.actor).is_ok();
    let base = format!("/ui/tasks/{}", loaded.task.id);
    html! {
        section aria-labelledby="deps-h" {
            h2 #deps-h { "Depends on" }
            @if loaded.dependencies.is_empty() { p { "No dependencies." } }
            ul.dependencies {
                @for (dependency, on) in &loaded.dependencies {
                    @let done = on.as_ref().is_some_and(|t| t.status == TaskStatus::Done);
                    li {
                        a href={"/ui/tasks/" (dependency.depends_on_id)} {
                            @match on { Some(t) => (t.title.as_str()), None => (dependency.depends_on_id) }
                        }
                        @if let Some(t) = on { " — " (label(t.status)) }
                        @if dependency.blocking && !done { " " span.badge { "blocking" } }
                        @else if dependency.blocking { " (blocking, satisfied)" }
                        @if writable {
                            " " (item_button(viewer, &format!("{base}/dependencies/{}/remove", dependency.id), "Remove", &on.as_ref().map_or_else(|| dependency.depends_on_id.to_string(), |t| t.title.as_str().to_owned())))
                        }
                    }
                }
            }
            @if writable && !loaded.task.status.is_terminal() {
                form method="post" action={(base) "/dependencies"} {
                    (csrf_field(viewer))
                    label for="depends-on" { "Add a dependency (task id)" }
                    input #depends-on type="text" name="dependsOn" required;
                    label.check { input type="checkbox" name="blocking" value="on" checked; " Blocking" }
                    button type="submit" { "Add" }
                }
            }
        }
    }
}

fn escalations(viewer: &Viewer, loaded: &Loaded) -> Markup {
    let writable = policy::may_write(&viewer.actor).is_ok();
    let base = format!("/ui/tasks/{}", loaded.task.id);
    html! {
        section aria-labelledby="esc-h" {
            h2 #esc-h { "Escalations" }
            @if loaded.escalations.is_empty() { p { "None." } }
            ul {
                @for e in &loaded.escalations {
                    li {
                        (e.reason.as_str())
                        @if let Some(to) = e.to_agent_id { " → " (agent_name(&loaded.agents, to)) }
                        @if let Some(notes) = &e.notes { ": " (notes.as_str()) }
                    }
                }
            }
            @if writable && !loaded.task.status.is_terminal() {
                form method="post" action={(base) "/escalate"} {
                    (csrf_field(viewer))
                    label for="esc-notes" { "Escalate by hand (notes)" }
                    input #esc-notes type="text" name="notes";
                    button type="submit" { "Escalate" }
                }
            }
        }
    }
}

/// The task page, with the refusal of the action that came back to it.
pub(crate) async fn task_page(
    state: &AppState,
    viewer: &Viewer,
    id: TaskId,
    notice: Option<&Refusal>,
) -> HttpResponse {
    task_page_with(state, viewer, id, notice, None).await
}

/// [`task_page`] after a refused comment, with what was typed back in its form.
pub(crate) async fn task_page_with(
    state: &AppState,
    viewer: &Viewer,
    id: TaskId,
    notice: Option<&Refusal>,
    draft: Option<CommentDraft>,
) -> HttpResponse {
    let mut loaded = match load(state, viewer, id).await {
        Ok(loaded) => loaded,
        // The action's refusal, when there was one, says more than the reload's.
        Err(refusal) => return missing(viewer, notice.unwrap_or(&refusal)),
    };
    loaded.draft = draft;
    let writable = policy::may_write(&viewer.actor).is_ok();
    let content = html! {
        p { a href="/ui/board" { "← Board" } }
        (fields(&loaded))
        @if writable { (controls(viewer, &loaded)) }
        section aria-labelledby="runs-h" {
            h2 #runs-h { "Runs" }
            (runs_table(&loaded.runs, Some(&loaded.agents)))
        }
        (conversation(viewer, &loaded))
        (dependencies(viewer, &loaded))
        (escalations(viewer, &loaded))
        section aria-labelledby="trail-h" {
            h2 #trail-h { "Audit trail" }
            (events_table(&loaded.trail, &loaded.agents))
        }
    };
    respond_page(
        notice,
        page(
            Some(viewer),
            loaded.task.title.as_str(),
            Section::Board,
            notice,
            &content,
        ),
    )
}

/// A task id from the path.
pub(crate) fn task_id(raw: &str) -> Result<TaskId, Refusal> {
    uuid_of("task id", raw).map(TaskId::from_uuid)
}

/// The page for a task that cannot be shown (a malformed id, or none of the org's).
pub(crate) fn missing(viewer: &Viewer, refusal: &Refusal) -> HttpResponse {
    let back = ("/ui/board", "Back to the board");
    not_shown(viewer, "Task", Section::Board, back, refusal)
}

/// `GET /ui/tasks/{id}`.
pub(crate) async fn show(state: Data<AppState>, viewer: Viewer, id: Path<String>) -> HttpResponse {
    match task_id(&id) {
        Ok(id) => task_page(&state, &viewer, id, None).await,
        Err(refusal) => missing(&viewer, &refusal),
    }
}
