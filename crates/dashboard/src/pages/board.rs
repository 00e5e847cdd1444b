//! The board: tasks by status in columns, filtered by assignee, priority, tag and text.
//! Moving a card is a transition; the table's refusal is shown and the card returns.
//! The columns refresh themselves when the event stream says a task changed.

use actix_web::http::StatusCode;
use actix_web::web::{Data, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use maud::{Markup, html};
use muster_domain::model::{
    Agent, Project, ProjectId, ProjectStatus, Task, TaskId, TaskPriority, TaskStatus,
};
use muster_domain::model::{Description, Tags, Title};
use muster_domain::policy;
use muster_domain::ports::TaskFilter;
use muster_domain::service::{NewTask, PageRequest};
use muster_http::AppState;
use serde::Deserialize;

use super::{agent_name, agents_of, uuid_of};
use crate::csrf::Posted;
use crate::layout::{Section, csrf_field, page, respond, respond_page, see_other};
use crate::refusal::Refusal;
use crate::session::{Viewer, from_script};

/// The priorities, most urgent first, as forms offer them.
pub(crate) const PRIORITIES: [&str; 4] = [
    TaskPriority::Urgent.as_str(),
    TaskPriority::High.as_str(),
    TaskPriority::Normal.as_str(),
    TaskPriority::Low.as_str(),
];

/// Cards read per column.
const CARDS_PER_COLUMN: u32 = 200;

/// The board's filters, as the query string carries them.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Filters {
    #[serde(default)]
    assignee: String,
    #[serde(default)]
    priority: String,
    #[serde(default)]
    tag: String,
    #[serde(default)]
    q: String,
    #[serde(default)]
    project: String,
}

impl Filters {
    /// The filter of one column: the database does all of it.
    fn task_filter(&self) -> Result<TaskFilter, Refusal> {
        let assignee = match self.assignee.trim() {
            "" => None,
            id => Some(uuid_of("assignee", id)?.into()),
        };
        let priority = match self.priority.trim() {
            "" => None,
            typed => Some(priority_of(typed)?),
        };
        let project = match self.project.trim() {
            "" => None,
            id => Some(ProjectId::from_uuid(uuid_of("project", id)?)),
        };
        Ok(TaskFilter {
            assignee_id: assignee,
            project_id: project,
            priority,
            tag: TaskFilter::term("tag", &self.tag)?,
            text: TaskFilter::term("q", &self.q)?,
            ..TaskFilter::default()
        })
    }
}

/// The agents (names, the assignee filter) and the columns of a board.
async fn load_board(
    state: &AppState,
    viewer: &Viewer,
    filters: &Filters,
) -> Result<(Vec<Agent>, Vec<Column>), Refusal> {
    let agents = agents_of(state, &viewer.actor).await?;
    let columns = load(state, viewer, filters).await?;
    Ok((agents, columns))
}

/// One column's cards, and whether more tasks are in it than were read.
struct Column {
    status: TaskStatus,
    cards: Vec<Task>,
    truncated: bool,
}

async fn load(
    state: &AppState,
    viewer: &Viewer,
    filters: &Filters,
) -> Result<Vec<Column>, Refusal> {
    let filter = filters.task_filter()?;
    let mut columns = Vec::with_capacity(TaskStatus::ALL.len());
    for status in TaskStatus::ALL {
        let filter = TaskFilter {
            status: Some(status),
            ..filter.clone()
        };
        let page = state
            .tasks
            .list(&viewer.actor, &filter, None, CARDS_PER_COLUMN)
            .await?;
        columns.push(Column {
            status,
            truncated: page.next_cursor.is_some(),
            cards: page.items,
        });
    }
    Ok(columns)
}

fn card(viewer: &Viewer, agents: &[Agent], task: &Task, movable: bool) -> Markup {
    let id = task.id.to_string();
    html! {
        li.card draggable=[movable.then_some("true")] data-task=(id) data-status=(task.status.as_str()) {
            a.title href={"/ui/tasks/" (id)} { (task.title.as_str()) }
            p.meta {
                span class={"priority " (task.priority.as_str())} { (task.priority.as_str()) }
                @if let Some(assignee) = task.assignee_id {
                    " · " span.assignee { (agent_name(agents, assignee)) }
                }
                @if task.awaits_approval() { " · " span.badge { "awaiting approval" } }
            }
            @if !task.tags.as_slice().is_empty() {
                p.tags { @for tag in task.tags.as_slice() { span.tag { (tag) } " " } }
            }
            @if movable {
                form.move method="post" action={"/ui/tasks/" (id) "/move"} {
                    (csrf_field(viewer))
                    label.visually-hidden for={"move-" (id)} { "Move " (task.title.as_str()) " to" }
                    select id={"move-" (id)} name="status" {
                        @for status in TaskStatus::ALL {
                            option value=(status.as_str()) selected[status == task.status] { (label(status)) }
                        }
                    }
                    button type="submit" { "Move" }
                }
            }
        }
    }
}

/// A status as a column heading.
pub(crate) const fn label(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Backlog => "Backlog",
        TaskStatus::Todo => "To do",
        TaskStatus::InProgress => "In progress",
        TaskStatus::Review => "Review",
        TaskStatus::Done => "Done",
        TaskStatus::Blocked => "Blocked",
        TaskStatus::Cancelled => "Cancelled",
    }
}

fn columns_markup(viewer: &Viewer, agents: &[Agent], columns: &[Column]) -> Markup {
    let movable = policy::may_write(&viewer.actor).is_ok();
    html! {
        @for column in columns {
            section.column data-status=(column.status.as_str()) aria-labelledby={"col-" (column.status.as_str())} {
                h2 id={"col-" (column.status.as_str())} {
                    (label(column.status)) " " span.count { (column.cards.len()) @if column.truncated { "+" } }
                }
                ul.cards {
                    @for task in &column.cards { (card(viewer, agents, task, movable)) }
                }
                @if column.truncated {
                    p.more { "Only the " (CARDS_PER_COLUMN) " newest matching tasks of this column are shown; filter to see others." }
                }
            }
        }
    }
}

fn filters_form(agents: &[Agent], projects: &[Project], filters: &Filters) -> Markup {
    html! {
        form.filters method="get" action="/ui/board" hx-get="/ui/board/columns" hx-target="#columns" hx-trigger="change, input delay:300ms from:#q" hx-push-url="false" role="search" {
            label for="assignee" { "Assignee" }
            select #assignee name="assignee" {
                option value="" { "anyone" }
                @for agent in agents {
                    @let id = agent.id.to_string();
                    option value=(id) selected[filters.assignee == id] { (agent.name) }
                }
            }
            label for="priority" { "Priority" }
            select #priority name="priority" {
                option value="" { "any" }
                @for p in PRIORITIES {
                    option value=(p) selected[filters.priority == p] { (p) }
                }
            }
            @if !projects.is_empty() || !filters.project.is_empty() {
                label for="project" { "Project" }
                select #project name="project" {
                    option value="" { "any" }
                    @for project in projects {
                        @let id = project.id.to_string();
                        option value=(id) selected[filters.project.trim() == id] { (project.name.as_str()) }
                    }
                }
            }
            label for="tag" { "Tag" }
            input #tag type="text" name="tag" value=(filters.tag) size="10";
            label for="q" { "Text" }
            input #q type="search" name="q" value=(filters.q) placeholder="title or description";
            button type="submit" { "Filter" }
        }
    }
}

/// The new-task form; after a refusal, open and filled with what was typed.
fn create_form(viewer: &Viewer, draft: Option<&Create>) -> Markup {
    let typed = |f: fn(&Create) -> &str| draft.map_or("", f);
    let priority = draft.map_or("normal", |d| d.priority.as_str());
    html! {
        details.create open[draft.is_some()] {
            summary { "New task" }
            form method="post" action="/ui/tasks" {
                (csrf_field(viewer))
                label for="new-title" { "Title" }
                input #new-title type="text" name="title" required maxlength="255" value=(typed(|d| &d.title));
                label for="new-priority" { "Priority" }
                select #new-priority name="priority" {
                    @for p in PRIORITIES {
                        option value=(p) selected[p == priority] { (p) }
                    }
                }
                label for="new-tags" { "Tags (comma-separated)" }
                input #new-tags type="text" name="tags" value=(typed(|d| &d.tags));
                label for="new-description" { "Description" }
                textarea #new-description name="description" rows="3" { (typed(|d| &d.description)) }
                label.check {
                    input type="checkbox" name="approval" value="on" checked[draft.is_some_and(|d| d.approval.is_some())];
                    " Needs approval"
                }
                button type="submit" { "Create" }
            }
        }
    }
}

/// The organization's active projects the project filter offers (the newest 100); none
/// when they cannot be read, which leaves the board usable.
async fn active_projects(state: &AppState, viewer: &Viewer) -> Vec<Project> {
    let page = PageRequest {
        cursor: None,
        limit: 100,
    };
    state
        .projects
        .list(&viewer.actor, Some(ProjectStatus::Active), page)
        .await
        .map(|p| p.items)
        .unwrap_or_default()
}

async fn board_page(
    state: &AppState,
    viewer: &Viewer,
    filters: &Filters,
    notice: Option<&Refusal>,
    draft: Option<&Create>,
) -> HttpResponse {
    let (agents, columns, notice) = match load_board(state, viewer, filters).await {
        Ok((agents, columns)) => (agents, columns, notice.cloned()),
        Err(refusal) => (Vec::new(), Vec::new(), Some(refusal)),
    };
    let projects = active_projects(state, viewer).await;
    let content = html! {
        @if policy::may_write(&viewer.actor).is_ok() { (create_form(viewer, draft)) }
        (filters_form(&agents, &projects, filters))
        div #columns.board data-live="/ui/board/columns" {
            (columns_markup(viewer, &agents, &columns))
        }
    };
    respond_page(
        notice.as_ref(),
        page(
            Some(viewer),
            "Board",
            Section::Board,
            notice.as_ref(),
            &content,
        ),
    )
}

/// `GET /ui/board`.
pub(crate) async fn show(
    state: Data<AppState>,
    viewer: Viewer,
    filters: Query<Filters>,
) -> HttpResponse {
    board_page(&state, &viewer, &filters, None, None).await
}

/// `GET /ui/board/columns`: the columns alone, for htmx and live updates.
pub(crate) async fn columns(
    state: Data<AppState>,
    viewer: Viewer,
    filters: Query<Filters>,
) -> HttpResponse {
    match load_board(&state, &viewer, &filters).await {
        Ok((agents, columns)) => {
            respond(StatusCode::OK, columns_markup(&viewer, &agents, &columns))
        }
        Err(refusal) => refusal.into_text(),
    }
}

/// The new-task form.
#[derive(Debug, Deserialize)]
pub(crate) struct Create {
    #[serde(default)]
    title: String,
    #[serde(default)]
    priority: String,
    #[serde(default)]
    tags: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    approval: Option<String>,
}

/// Comma-separated tags as the API takes them.
pub(crate) fn tags_of(typed: &str) -> Result<Tags, Refusal> {
    let tags = typed
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect();
    Ok(Tags::new(tags)?)
}

/// A priority from a form.
pub(crate) fn priority_of(typed: &str) -> Result<TaskPriority, Refusal> {
    TaskPriority::parse(typed.trim())
        .ok_or_else(|| Refusal::bad_request("priority must be one of urgent, high, normal, low"))
}

/// A description from a form; empty is none.
pub(crate) fn description_of(typed: &str) -> Result<Option<Description>, Refusal> {
    match typed.trim() {
        "" => Ok(None),
        text => Ok(Some(Description::new(text.to_owned())?)),
    }
}

fn new_task(form: &Create) -> Result<NewTask, Refusal> {
    let description = description_of(&form.description)?;
    let title = Title::new(form.title.trim())?;
    Ok(NewTask {
        description,
        priority: priority_of(&form.priority)?,
        approval_required: form.approval.is_some(),
        tags: tags_of(&form.tags)?,
        ..NewTask::new(title)
    })
}

/// `POST /ui/tasks`: creates a task, then shows it.
pub(crate) async fn create(
    state: Data<AppState>,
    viewer: Viewer,
    Posted(form): Posted<Create>,
) -> HttpResponse {
    let created = match new_task(&form) {
        Ok(new) => state
            .tasks
            .create(&viewer.actor, new)
            .await
            .map_err(Refusal::from),
        Err(refusal) => Err(refusal),
    };
    match created {
        Ok(task) => see_other(&format!("/ui/tasks/{}", task.id)),
        Err(refusal) => {
            board_page(
                &state,
                &viewer,
                &Filters::default(),
                Some(&refusal),
                Some(&form),
            )
            .await
        }
    }
}

/// The move form (and the board script's drop).
#[derive(Debug, Deserialize)]
pub(crate) struct Move {
    #[serde(default)]
    status: String,
    #[serde(default)]
    reason: String,
    /// `task` when the form is the task page's: the answer goes back there.
    #[serde(default)]
    back: String,
}

/// `POST /ui/tasks/{id}/move`: a transition. The script gets the API's message and
/// status; a form post comes back to the board, with the refusal shown.
pub(crate) async fn move_task(
    req: HttpRequest,
    state: Data<AppState>,
    viewer: Viewer,
    id: Path<String>,
    Posted(form): Posted<Move>,
) -> HttpResponse {
    let task = uuid_of("task id", &id).map(TaskId::from_uuid);
    let moved = async {
        let id = task.clone()?;
        let to = TaskStatus::parse(form.status.trim()).ok_or_else(|| {
            Refusal::bad_request(
                "status must be one of backlog, todo, in_progress, review, done, blocked, cancelled",
            )
        })?;
        let reason = match form.reason.trim() {
            "" => None,
            text => Some(muster_domain::model::Reason::new(text.to_owned())?),
        };
        Ok::<_, Refusal>(
            state
                .tasks
                .transition(&viewer.actor, id, to, reason)
                .await?,
        )
    };
    let outcome = moved.await;
    if from_script(&req) {
        return match outcome {
            Ok(task) => HttpResponse::Ok()
                .content_type("text/plain; charset=utf-8")
                .body(task.status.as_str()),
            Err(refusal) => refusal.into_text(),
        };
    }
    match (outcome, task) {
        (Ok(moved), _) if form.back == "task" => see_other(&format!("/ui/tasks/{}", moved.id)),
        (Ok(_), _) => see_other("/ui/board"),
        (Err(refusal), Ok(id)) if form.back == "task" => {
            super::task::task_page(&state, &viewer, id, Some(&refusal)).await
        }
        (Err(refusal), _) => {
            board_page(&state, &viewer, &Filters::default(), Some(&refusal), None).await
        }
    }
}
