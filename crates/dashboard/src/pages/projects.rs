//! Projects (issue 66): the list with a progress bar each and a form to create one; a
//! project's page with its progress, what is overdue or blocked, a burn-up chart (tasks
//! created and done by the end of each of the last 30 days, with a table of the same
//! numbers) and the archive button.

use actix_web::HttpResponse;
use actix_web::web::{Data, Path};
use maud::{Markup, html};
use muster_domain::model::{Project, ProjectId, ProjectStatus, TaskBrief};
use muster_domain::service::{PageRequest, ProjectView};
use muster_http::AppState;
use muster_http::dto::projects::CreateProjectRequest;
use serde::Deserialize;

use super::uuid_of;
use crate::charts::{self, Series, Stack};
use crate::csrf::{Nothing, Posted};
use crate::figures::{count, usd};
use crate::layout::{
    Section, action_button, csrf_field, not_shown, page, respond_page, see_other, when,
};
use crate::refusal::Refusal;
use crate::session::Viewer;

/// Projects listed with their progress (each one's counts are read on its own).
const PROJECTS_SHOWN: u32 = 50;
/// Days of a burn-up chart, today included.
const BURN_UP_DAYS: u32 = 30;

/// The share done as a bar (`progress` is read out by screen readers as a percentage).
fn progress_bar(view: &ProjectView) -> Markup {
    let p = &view.progress;
    html! {
        progress value=(p.done_pct) max="100" aria-label={"Done: " (p.done_pct) " %"} { (p.done_pct) " %" }
        " " (p.done_pct) " % done (" (count_u(p.done)) " of " (count_u(p.total)) " tasks, " (count_u(p.open)) " open)"
    }
}

fn count_u(n: u64) -> String {
    count(i64::try_from(n).unwrap_or(i64::MAX))
}

/// The projects of the organization (active first), each with its progress.
async fn load_list(state: &AppState, viewer: &Viewer) -> Result<Vec<ProjectView>, Refusal> {
    let page = PageRequest {
        cursor: None,
        limit: PROJECTS_SHOWN,
    };
    let mut listed = state
        .projects
        .list(&viewer.actor, Some(ProjectStatus::Active), page)
        .await?
        .items;
    let room = PROJECTS_SHOWN.saturating_sub(u32::try_from(listed.len()).unwrap_or(0));
    if room > 0 {
        let archived = PageRequest {
            cursor: None,
            limit: room,
        };
        listed.extend(
            state
                .projects
                .list(&viewer.actor, Some(ProjectStatus::Archived), archived)
                .await?
                .items,
        );
    }
    let mut views = Vec::with_capacity(listed.len());
    for project in listed {
        views.push(state.projects.view(&viewer.actor, project.id).await?);
    }
    Ok(views)
}

fn list_markup(viewer: &Viewer, views: &[ProjectView], draft: Option<&Create>) -> Markup {
    html! {
        @if views.is_empty() {
            p { "No project yet. A project groups tasks under a goal and shows how far they have come." }
        } @else {
            div.table-wrap { table.projects {
                caption { "Projects, active first, newest first" }
                thead { tr {
                    th scope="col" { "Project" } th scope="col" { "Status" } th scope="col" { "Due" }
                    th scope="col" { "Progress" } th.num scope="col" { "Overdue" } th.num scope="col" { "Blocked" }
                } }
                tbody {
                    @for view in views {
                        @let project = &view.project;
                        tr data-project=(project.id) {
                            th scope="row" { a href={"/ui/projects/" (project.id)} { (project.name.as_str()) } }
                            td { (project.status.as_str()) }
                            td { @if let Some(due) = project.due_at { (when(due)) } }
                            td { (progress_bar(view)) }
                            td.num { (count_u(view.tally.overdue)) }
                            td.num { (count_u(view.tally.count(muster_domain::model::TaskStatus::Blocked))) }
                        }
                    }
                }
            } }
            @if views.len() >= usize::try_from(PROJECTS_SHOWN).unwrap_or(usize::MAX) {
                p.more { "The first " (PROJECTS_SHOWN) " projects are shown." }
            }
        }
        details open[draft.is_some()] {
            summary { "New project" }
            form method="post" action="/ui/projects" {
                (csrf_field(viewer))
                label for="project-name" { "Name" }
                input #project-name type="text" name="name" required maxlength="255" value=(draft.map_or("", |d| d.name.as_str()));
                label for="project-goal" { "Goal" }
                input #project-goal type="text" name="goal" maxlength="2000" value=(draft.map_or("", |d| d.goal.as_str()));
                label for="project-due" { "Due (YYYY-MM-DD)" }
                input #project-due type="text" name="due" value=(draft.map_or("", |d| d.due.as_str())) placeholder="2027-01-31";
                button type="submit" { "Create project" }
            }
        }
    }
}

async fn list_page(
    state: &AppState,
    viewer: &Viewer,
    notice: Option<&Refusal>,
    draft: Option<&Create>,
) -> HttpResponse {
    let content = match load_list(state, viewer).await {
        Ok(views) => list_markup(viewer, &views, draft),
        Err(refusal) => {
            let content = html! { p { a href="/ui/board" { "Back to the board" } } };
            return respond_page(
                Some(&refusal),
                page(
                    Some(viewer),
                    "Projects",
                    Section::Projects,
                    Some(&refusal),
                    &content,
                ),
            );
        }
    };
    respond_page(
        notice,
        page(
            Some(viewer),
            "Projects",
            Section::Projects,
            notice,
            &content,
        ),
    )
}

/// `GET /ui/projects`.
pub(crate) async fn show_list(state: Data<AppState>, viewer: Viewer) -> HttpResponse {
    list_page(&state, &viewer, None, None).await
}

/// The new-project form.
#[derive(Debug, Deserialize)]
pub(crate) struct Create {
    #[serde(default)]
    name: String,
    #[serde(default)]
    goal: String,
    #[serde(default)]
    due: String,
}

impl Create {
    fn request(&self) -> CreateProjectRequest {
        let some = |typed: &str| {
            let typed = typed.trim();
            (!typed.is_empty()).then(|| typed.to_owned())
        };
        CreateProjectRequest {
            name: self.name.clone(),
            goal: some(&self.goal),
            description: None,
            due_at: some(&self.due),
        }
    }
}

/// `POST /ui/projects`: creates a project and shows its page.
pub(crate) async fn create(
    state: Data<AppState>,
    viewer: Viewer,
    Posted(form): Posted<Create>,
) -> HttpResponse {
    let created = async {
        let new = form.request().into_new_project()?;
        Ok::<_, Refusal>(state.projects.create(&viewer.actor, new).await?)
    };
    match created.await {
        Ok(project) => see_other(&format!("/ui/projects/{}", project.id)),
        Err(refusal) => list_page(&state, &viewer, Some(&refusal), Some(&form)).await,
    }
}

fn project_id(raw: &str) -> Result<ProjectId, Refusal> {
    uuid_of("id", raw).map(ProjectId::from_uuid)
}

fn briefs(caption: &str, tasks: &[TaskBrief], total: u64, due: bool) -> Markup {
    html! {
        @if !tasks.is_empty() {
            div.table-wrap { table {
                caption { (caption) " (" (count_u(total)) ")" }
                thead { tr {
                    th scope="col" { "Task" } th scope="col" { "Status" }
                    th scope="col" { @if due { "Due" } @else { "Since" } }
                } }
                tbody {
                    @for task in tasks {
                        tr {
                            th scope="row" { a href={"/ui/tasks/" (task.id)} { (task.title) } }
                            td { (task.status.as_str()) }
                            td { @if due { @if let Some(at) = task.due_at { (when(at)) } } @else { (when(task.status_changed_at)) } }
                        }
                    }
                }
            } }
        }
    }
}

fn burn_up(days: &[muster_domain::model::BurnUpDay]) -> Markup {
    let series = [
        Series {
            name: "Created".to_owned(),
            colour: charts::colour(0),
        },
        Series {
            name: "Done".to_owned(),
            colour: charts::colour(2),
        },
    ];
    let points: Vec<Stack> = days
        .iter()
        .map(|d| Stack {
            label: format!("{:02}-{:02}", u8::from(d.day.month()), d.day.day()),
            values: vec![
                i64::try_from(d.created).unwrap_or(i64::MAX),
                i64::try_from(d.done).unwrap_or(i64::MAX),
            ],
        })
        .collect();
    html! {
        figure.chart-figure aria-labelledby="burn-up-h" {
            figcaption #burn-up-h { "Burn-up: tasks created and done, last " (BURN_UP_DAYS) " days" }
            (charts::lines(&series, &points, 7, "Line chart of the tasks of the project created and done by the end of each day; the table below gives the numbers."))
            (charts::legend(&series))
            div.table-wrap { table.burn-up {
                caption { "Tasks created and done by the end of each day (UTC)" }
                thead { tr { th scope="col" { "Day" } th.num scope="col" { "Created" } th.num scope="col" { "Done" } } }
                tbody {
                    @for d in days {
                        tr { th scope="row" { (d.day) } td.num { (count_u(d.created)) } td.num { (count_u(d.done)) } }
                    }
                }
            } }
        }
    }
}

fn project_markup(
    viewer: &Viewer,
    view: &ProjectView,
    days: &[muster_domain::model::BurnUpDay],
) -> Markup {
    let project: &Project = &view.project;
    let t = &view.tally;
    html! {
        dl.fields {
            dt { "Status" } dd #project-status { (project.status.as_str()) }
            @if let Some(goal) = &project.goal { dt { "Goal" } dd { (goal.as_str()) } }
            @if let Some(due) = project.due_at { dt { "Due" } dd { (when(due)) } }
            @if let Some(description) = &project.description { dt { "Description" } dd { (description.as_str()) } }
            dt { "Progress" } dd #project-progress { (progress_bar(view)) }
            dt { "Spent" } dd { (count(t.spent_credits)) " credits, " (usd(t.cost_microusd)) }
        }
        p { a href={"/ui/board?project=" (project.id)} { "This project's tasks on the board" } }
        div.table-wrap { table.by-status {
            caption { "Tasks by status" }
            thead { tr { th scope="col" { "Status" } th.num scope="col" { "Tasks" } } }
            tbody {
                @for status in muster_domain::model::TaskStatus::ALL {
                    tr { th scope="row" { (status.as_str()) } td.num { (count_u(t.count(status))) } }
                }
            }
        } }
        (briefs("Overdue", &t.overdue_tasks, t.overdue, true))
        (briefs("Blocked", &t.blocked_tasks, t.count(muster_domain::model::TaskStatus::Blocked), false))
        (burn_up(days))
        @if project.status == ProjectStatus::Active {
            (action_button(viewer, &format!("/ui/projects/{}/archive", project.id), "Archive project"))
        }
    }
}

async fn project_page(
    state: &AppState,
    viewer: &Viewer,
    id: ProjectId,
    notice: Option<&Refusal>,
) -> HttpResponse {
    let loaded = async {
        let view = state.projects.view(&viewer.actor, id).await?;
        let days = state
            .projects
            .burn_up(&viewer.actor, id, BURN_UP_DAYS)
            .await?;
        Ok::<_, Refusal>((view, days))
    };
    match loaded.await {
        Ok((view, days)) => {
            let title = view.project.name.as_str().to_owned();
            let content = project_markup(viewer, &view, &days);
            respond_page(
                notice,
                page(Some(viewer), &title, Section::Projects, notice, &content),
            )
        }
        Err(refusal) => not_shown(
            viewer,
            "Project",
            Section::Projects,
            ("/ui/projects", "Back to the projects"),
            &refusal,
        ),
    }
}

/// `GET /ui/projects/{id}`.
pub(crate) async fn show(state: Data<AppState>, viewer: Viewer, raw: Path<String>) -> HttpResponse {
    match project_id(&raw) {
        Ok(id) => project_page(&state, &viewer, id, None).await,
        Err(refusal) => not_shown(
            &viewer,
            "Project",
            Section::Projects,
            ("/ui/projects", "Back to the projects"),
            &refusal,
        ),
    }
}

/// `POST /ui/projects/{id}/archive`.
pub(crate) async fn archive(
    state: Data<AppState>,
    viewer: Viewer,
    raw: Path<String>,
    _: Posted<Nothing>,
) -> HttpResponse {
    let id = match project_id(&raw) {
        Ok(id) => id,
        Err(refusal) => {
            return not_shown(
                &viewer,
                "Project",
                Section::Projects,
                ("/ui/projects", "Back to the projects"),
                &refusal,
            );
        }
    };
    match state.projects.archive(&viewer.actor, id).await {
        Ok(_) => see_other(&format!("/ui/projects/{id}")),
        Err(err) => project_page(&state, &viewer, id, Some(&Refusal::from(err))).await,
    }
}
