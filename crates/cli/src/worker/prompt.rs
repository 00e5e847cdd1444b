//! The prompt the worker gives the agent CLI for one task: the built-in one, or the
//! text of a `--prompt-template` file with placeholders filled in.
//!
//! # Template syntax
//!
//! A template is plain text with placeholders in double braces; spaces inside the
//! braces are allowed (`{{ title }}`):
//!
//! | Placeholder        | Becomes                                                       |
//! |--------------------|---------------------------------------------------------------|
//! | `{{title}}`        | the task's title                                              |
//! | `{{description}}`  | its description (empty when it has none)                      |
//! | `{{comments}}`     | its comments, oldest first, each with author and time         |
//! | `{{dependencies}}` | each task it depends on: title, status and `result`           |
//! | `{{task_id}}`      | the task's id                                                 |
//! | `{{run_id}}`       | this run's id                                                 |
//! | `{{workspace}}`    | the run's working directory                                   |
//! | `{{priority}}`     | `urgent`, `high`, `normal` or `low`                           |
//! | `{{tags}}`         | the tags, separated by `, ` (empty when there are none)       |
//!
//! `{{{{` writes a literal `{{`; a `}}` outside a placeholder is written as it is.
//! A placeholder must close on the line it opens. [`Template::parse`] refuses an
//! unknown placeholder or an unclosed `{{`, naming it and its line, so the worker checks
//! a template once at start and a typo fails at once rather than on every task.
//!
//! # Bounds
//!
//! The prompt stays bounded whatever the task holds (some CLIs take it as one
//! command-line argument, which Linux limits to 128 KiB):
//! - the description is cut after [`DESCRIPTION_MAX_CHARS`] characters;
//! - each comment after [`COMMENT_MAX_CHARS`]; at most the last [`COMMENTS_MAX`]
//!   comments are given, and fewer when together they pass [`COMMENTS_MAX_CHARS`]
//!   (the newest are kept, and a line says how many earlier ones were left out);
//! - each dependency's result after [`RESULT_MAX_CHARS`]; at most [`DEPENDENCIES_MAX`]
//!   dependencies are listed;
//! - the whole prompt, last, after [`PROMPT_MAX_BYTES`] bytes (this only bites on a long
//!   custom template or text in a script of many bytes per character).
//!
//! Every cut ends with a marker saying how much was left out.

use std::fmt::{self, Write as _};
use std::path::Path;

use muster_client::types::task_links::CommentResponse;
use muster_client::types::tasks::TaskResponse;
use uuid::Uuid;

#[cfg(test)]
mod tests;

/// Longest description given, in characters.
pub const DESCRIPTION_MAX_CHARS: usize = 16_000;
/// Longest comment given, in characters.
pub const COMMENT_MAX_CHARS: usize = 2_000;
/// Most comments given (the newest).
pub const COMMENTS_MAX: usize = 50;
/// Most characters of comments given together (the newest are kept).
pub const COMMENTS_MAX_CHARS: usize = 40_000;
/// Longest result of a dependency given, in characters.
pub const RESULT_MAX_CHARS: usize = 2_000;
/// Most dependencies listed.
pub const DEPENDENCIES_MAX: usize = 20;
/// Longest prompt, in bytes (under Linux's 128 KiB for one command-line argument).
pub const PROMPT_MAX_BYTES: usize = 120_000;

/// What a prompt is made of, for one run of one task.
#[derive(Debug, Clone, Copy)]
pub struct PromptInput<'a> {
    /// The task.
    pub task: &'a TaskResponse,
    /// Its comments, oldest first.
    pub comments: &'a [CommentResponse],
    /// The tasks it depends on, blocking or not.
    pub dependencies: &'a [TaskResponse],
    /// The run.
    pub run_id: Uuid,
    /// The run's working directory.
    pub workspace: &'a Path,
}

/// A prompt template: the built-in one or a parsed `--prompt-template`.
#[derive(Debug, Clone)]
pub struct Template {
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Builtin,
    Custom(Vec<Segment>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Text(String),
    Field(Field),
}

/// A placeholder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Title,
    Description,
    Comments,
    Dependencies,
    TaskId,
    RunId,
    Workspace,
    Priority,
    Tags,
}

impl Field {
    const ALL: [Self; 9] = [
        Self::Title,
        Self::Description,
        Self::Comments,
        Self::Dependencies,
        Self::TaskId,
        Self::RunId,
        Self::Workspace,
        Self::Priority,
        Self::Tags,
    ];

    fn name(self) -> &'static str {
        match self {
            Self::Title => "title",
            Self::Description => "description",
            Self::Comments => "comments",
            Self::Dependencies => "dependencies",
            Self::TaskId => "task_id",
            Self::RunId => "run_id",
            Self::Workspace => "workspace",
            Self::Priority => "priority",
            Self::Tags => "tags",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// Why a template text was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateError {
    /// `{{name}}` is no placeholder the worker knows.
    UnknownPlaceholder {
        /// What stood between the braces, trimmed.
        name: String,
        /// Its line, from 1.
        line: usize,
    },
    /// A `{{` with no `}}` after it on its line.
    Unclosed {
        /// Its line, from 1.
        line: usize,
    },
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownPlaceholder { name, line } => {
                let known: Vec<&str> = Field::ALL.iter().map(|f| f.name()).collect();
                write!(
                    f,
                    "line {line}: unknown placeholder `{{{{{name}}}}}` (known: {})",
                    known.join(", ")
                )
            }
            Self::Unclosed { line } => write!(
                f,
                "line {line}: `{{{{` is not closed by `}}}}` on its line \
                 (write `{{{{{{{{` for a literal `{{{{`)"
            ),
        }
    }
}

impl std::error::Error for TemplateError {}

impl Template {
    /// The default prompt: what the task is, its description, the results of the tasks
    /// it depends on, its comments and where to work; empty sections are left out.
    pub fn builtin() -> Self {
        Self {
            kind: Kind::Builtin,
        }
    }

    /// Reads a `--prompt-template` file's text (see the module's docs for the syntax).
    pub fn parse(text: &str) -> Result<Self, TemplateError> {
        let mut segments = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        let mut line = 1;
        while let Some(open) = rest.find("{{") {
            let (before, from_open) = rest.split_at(open);
            literal.push_str(before);
            line += before.matches('\n').count();
            let inside = &from_open[2..];
            if let Some(after_escape) = inside.strip_prefix("{{") {
                literal.push_str("{{");
                rest = after_escape;
                continue;
            }
            let this_line = inside.split('\n').next().unwrap_or_default();
            let Some(close) = this_line.find("}}") else {
                return Err(TemplateError::Unclosed { line });
            };
            let name = inside[..close].trim();
            let field = Field::parse(name).ok_or_else(|| TemplateError::UnknownPlaceholder {
                name: name.to_owned(),
                line,
            })?;
            if !literal.is_empty() {
                segments.push(Segment::Text(std::mem::take(&mut literal)));
            }
            segments.push(Segment::Field(field));
            rest = &inside[close + 2..];
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            segments.push(Segment::Text(literal));
        }
        Ok(Self {
            kind: Kind::Custom(segments),
        })
    }

    /// The prompt for `input`, at most [`PROMPT_MAX_BYTES`] long.
    pub fn render(&self, input: &PromptInput<'_>) -> String {
        let prompt = match &self.kind {
            Kind::Builtin => builtin(input),
            Kind::Custom(segments) => {
                let mut out = String::new();
                for segment in segments {
                    match segment {
                        Segment::Text(text) => out.push_str(text),
                        Segment::Field(field) => out.push_str(&value(*field, input)),
                    }
                }
                out
            }
        };
        cap_bytes(prompt, PROMPT_MAX_BYTES)
    }
}

fn builtin(input: &PromptInput<'_>) -> String {
    let task = input.task;
    let mut out = format!(
        "This is a task from Muster, the task board you take work from. Do it in your \
         working directory, {workspace}: it was made for this run.\n\n# {title}\n\n\
         Task {task_id}, priority {priority}",
        workspace = input.workspace.display(),
        title = task.title,
        task_id = task.id,
        priority = task.priority.as_str(),
    );
    let tags = value(Field::Tags, input);
    if !tags.is_empty() {
        let _ = write!(out, ", tags: {tags}");
    }
    let _ = writeln!(out, ". Run {}.", input.run_id);
    for (heading, field) in [
        ("Description", Field::Description),
        ("Results of the tasks it depends on", Field::Dependencies),
        ("Comments, oldest first", Field::Comments),
    ] {
        let body = value(field, input);
        if !body.is_empty() {
            let _ = write!(out, "\n## {heading}\n\n{}\n", body.trim_end());
        }
    }
    out
}

/// What `field` becomes for `input`.
fn value(field: Field, input: &PromptInput<'_>) -> String {
    let task = input.task;
    match field {
        Field::Title => task.title.clone(),
        Field::Description => task
            .description
            .as_deref()
            .filter(|d| !d.trim().is_empty())
            .map(|d| cut_chars(d, DESCRIPTION_MAX_CHARS))
            .unwrap_or_default(),
        Field::Comments => comments(input.comments),
        Field::Dependencies => dependencies(input.dependencies),
        Field::TaskId => task.id.to_string(),
        Field::RunId => input.run_id.to_string(),
        Field::Workspace => input.workspace.display().to_string(),
        Field::Priority => task.priority.as_str().to_owned(),
        Field::Tags => task.tags.join(", "),
    }
}

/// The newest comments that fit the bounds, oldest first, blank lines between them.
fn comments(all: &[CommentResponse]) -> String {
    let mut shown = Vec::new();
    let mut chars = 0;
    for comment in all.iter().rev().take(COMMENTS_MAX) {
        let block = format!(
            "[{}] {}:\n{}",
            muster_client::types::time::format(comment.created_at),
            author(comment),
            cut_chars(comment.body.trim_end(), COMMENT_MAX_CHARS)
        );
        chars += block.chars().count();
        // The newest comment is always given, however long (it is cut on its own).
        if chars > COMMENTS_MAX_CHARS && !shown.is_empty() {
            break;
        }
        shown.push(block);
    }
    let mut out = String::new();
    let left_out = all.len() - shown.len();
    if left_out > 0 {
        let _ = write!(out, "({left_out} earlier comments left out)\n\n");
    }
    shown.reverse();
    out.push_str(&shown.join("\n\n"));
    out
}

/// `agent 1a2b3c4d` or `user 1a2b3c4d`: enough to tell authors apart.
fn author(comment: &CommentResponse) -> String {
    match (comment.agent_id, comment.user_id) {
        (Some(agent), _) => format!("agent {}", short(agent)),
        (None, Some(user)) => format!("user {}", short(user)),
        (None, None) => "a deleted author".to_owned(),
    }
}

fn dependencies(all: &[TaskResponse]) -> String {
    let mut blocks: Vec<String> = all
        .iter()
        .take(DEPENDENCIES_MAX)
        .map(|dep| {
            let result = dep
                .result
                .as_deref()
                .filter(|r| !r.trim().is_empty())
                .map_or_else(
                    || "(no result recorded)".to_owned(),
                    |r| cut_chars(r.trim_end(), RESULT_MAX_CHARS),
                );
            format!(
                "{} (task {}, {}):\n{result}",
                dep.title,
                short(dep.id),
                dep.status.as_str()
            )
        })
        .collect();
    if all.len() > DEPENDENCIES_MAX {
        blocks.push(format!(
            "({} more dependencies left out)",
            all.len() - DEPENDENCIES_MAX
        ));
    }
    blocks.join("\n\n")
}

/// The first 8 hex digits of `id`.
fn short(id: Uuid) -> String {
    let mut text = id.simple().to_string();
    text.truncate(8);
    text
}

/// `text`, cut after `max` characters with a marker saying how many were left out.
fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((at, _)) => {
            let (kept, left) = text.split_at(at);
            format!("{kept}\n[… {} more characters cut]", left.chars().count())
        }
    }
}

/// `text`, cut to at most `max` bytes (on a character boundary) with a marker.
fn cap_bytes(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let marker = format!("\n[… prompt cut at {max} bytes]");
    let mut at = max.saturating_sub(marker.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
    text.push_str(&marker);
    text
}
