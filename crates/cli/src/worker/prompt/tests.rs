//! Rendering the built-in and custom prompts, template errors, escapes and bounds.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use muster_client::types::task_links::CommentResponse;
use muster_client::types::tasks::TaskResponse;
use serde_json::json;
use uuid::Uuid;

use super::{
    COMMENT_MAX_CHARS, COMMENTS_MAX, COMMENTS_MAX_CHARS, DEPENDENCIES_MAX, DESCRIPTION_MAX_CHARS,
    PROMPT_MAX_BYTES, PromptInput, RESULT_MAX_CHARS, Template, TemplateError,
};

const TASK_ID: &str = "11111111-2222-4333-8444-555555555555";
const RUN_ID: &str = "99999999-8888-4777-8666-555555555555";
const AGENT_ID: &str = "a1b2c3d4-0000-4000-8000-000000000001";
const USER_ID: &str = "0badc0de-0000-4000-8000-000000000002";

fn new_task(title: &str, description: Option<&str>, result: Option<&str>) -> TaskResponse {
    serde_json::from_value(json!({
        "id": TASK_ID,
        "orgId": Uuid::now_v7(),
        "title": title,
        "description": description,
        "status": "done",
        "priority": "high",
        "assigneeId": null,
        "creatorId": null,
        "parentTaskId": null,
        "approvalRequired": false,
        "dueAt": null,
        "tags": ["docs", "release"],
        "metadata": {},
        "approvedBy": null,
        "approvedAt": null,
        "createdAt": "2026-01-02T03:04:05.000Z",
        "updatedAt": "2026-01-02T03:04:05.000Z",
        "result": result,
        "reward": 0,
        "rewardPayer": {"kind": "treasury", "id": Uuid::now_v7()},
    }))
    .unwrap()
}

fn comment(body: &str, agent: Option<&str>, user: Option<&str>) -> CommentResponse {
    serde_json::from_value(json!({
        "id": Uuid::now_v7(),
        "taskId": TASK_ID,
        "body": body,
        "agentId": agent,
        "userId": user,
        "parentCommentId": null,
        "createdAt": "2026-01-02T10:00:00.000Z",
    }))
    .unwrap()
}

fn input<'a>(
    task: &'a TaskResponse,
    comments: &'a [CommentResponse],
    dependencies: &'a [TaskResponse],
) -> PromptInput<'a> {
    PromptInput {
        task,
        comments,
        dependencies,
        run_id: RUN_ID.parse().unwrap(),
        workspace: Path::new("/tmp/ws/run"),
    }
}

#[test]
fn the_builtin_prompt_gives_every_section() {
    let task = new_task("Write the notes", Some("For release 1.2."), None);
    let comments = [
        comment("First, read the changelog.", Some(AGENT_ID), None),
        comment("Keep it short.", None, Some(USER_ID)),
    ];
    let deps = [
        new_task("Collect changes", None, Some("12 merged pull requests.")),
        new_task("Pick a date", None, None),
    ];
    let prompt = Template::builtin().render(&input(&task, &comments, &deps));

    assert!(prompt.starts_with("This is a task from Muster"), "{prompt}");
    assert!(
        prompt.contains("working directory, /tmp/ws/run"),
        "{prompt}"
    );
    assert!(prompt.contains("# Write the notes\n"), "{prompt}");
    assert!(prompt.contains(&format!(
        "Task {TASK_ID}, priority high, tags: docs, release. Run {RUN_ID}."
    )));
    assert!(
        prompt.contains("## Description\n\nFor release 1.2.\n"),
        "{prompt}"
    );
    assert!(prompt.contains(
        "## Results of the tasks it depends on\n\n\
         Collect changes (task 11111111, done):\n12 merged pull requests.\n\n\
         Pick a date (task 11111111, done):\n(no result recorded)\n"
    ));
    assert!(prompt.contains(
        "## Comments, oldest first\n\n\
         [2026-01-02T10:00:00.000Z] agent a1b2c3d4:\nFirst, read the changelog.\n\n\
         [2026-01-02T10:00:00.000Z] user 0badc0de:\nKeep it short.\n"
    ));
    let description = prompt.find("## Description").unwrap();
    let results = prompt.find("## Results").unwrap();
    let comments = prompt.find("## Comments").unwrap();
    assert!(description < results && results < comments);
}

#[test]
fn the_builtin_prompt_leaves_out_empty_sections() {
    let mut task = new_task("Tidy up", Some("  \n"), None);
    task.tags.clear();
    let prompt = Template::builtin().render(&input(&task, &[], &[]));
    assert!(!prompt.contains("##"), "{prompt}");
    assert!(!prompt.contains("tags"), "{prompt}");
    assert!(
        prompt.ends_with(&format!("priority high. Run {RUN_ID}.\n")),
        "{prompt}"
    );
}

#[test]
fn a_custom_template_fills_every_placeholder() {
    let task = new_task("Ship it", Some("Now."), None);
    let comments = [comment("ok", None, None)];
    let deps = [new_task("Build", None, Some("green"))];
    let template = Template::parse(
        "T={{title}} D={{ description }} ID={{task_id}} RUN={{\trun_id }}\n\
         WS={{workspace}} P={{priority}} TAGS={{tags}}\nC={{comments}}\nDEP={{dependencies}}",
    )
    .unwrap();
    let prompt = template.render(&input(&task, &comments, &deps));
    assert_eq!(
        prompt,
        format!(
            "T=Ship it D=Now. ID={TASK_ID} RUN={RUN_ID}\n\
             WS=/tmp/ws/run P=high TAGS=docs, release\n\
             C=[2026-01-02T10:00:00.000Z] a deleted author:\nok\n\
             DEP=Build (task 11111111, done):\ngreen"
        )
    );
}

#[test]
fn empty_values_render_as_nothing() {
    let mut task = new_task("X", None, None);
    task.tags.clear();
    let template = Template::parse("[{{description}}][{{comments}}][{{dependencies}}][{{tags}}]");
    assert_eq!(
        template.unwrap().render(&input(&task, &[], &[])),
        "[][][][]"
    );
}

#[test]
fn an_unknown_placeholder_is_refused_with_its_line() {
    let err = Template::parse("Hello\n\nDo {{ titel }} now").unwrap_err();
    assert_eq!(
        err,
        TemplateError::UnknownPlaceholder {
            name: "titel".to_owned(),
            line: 3
        }
    );
    let message = err.to_string();
    assert!(
        message.starts_with("line 3: unknown placeholder `{{titel}}`"),
        "{message}"
    );
    assert!(
        message.contains("title, description, comments"),
        "{message}"
    );

    let empty = Template::parse("{{}}").unwrap_err();
    assert_eq!(
        empty,
        TemplateError::UnknownPlaceholder {
            name: String::new(),
            line: 1
        }
    );
    // Names are exact: no other case, no surrounding braces.
    assert!(Template::parse("{{Title}}").is_err());
    assert!(Template::parse("{{{title}}}").is_err());
}

#[test]
fn an_unclosed_placeholder_is_refused_with_its_line() {
    let err = Template::parse("one\ntwo {{title").unwrap_err();
    assert_eq!(err, TemplateError::Unclosed { line: 2 });
    assert_eq!(
        err.to_string(),
        "line 2: `{{` is not closed by `}}` on its line (write `{{{{` for a literal `{{`)"
    );
    // A placeholder closes on the line it opens.
    assert_eq!(
        Template::parse("{{title\n}}").unwrap_err(),
        TemplateError::Unclosed { line: 1 }
    );
    // The line counts escapes and earlier placeholders correctly.
    assert_eq!(
        Template::parse("{{{{\n{{title}}\n\n{{").unwrap_err(),
        TemplateError::Unclosed { line: 4 }
    );
}

#[test]
fn four_braces_write_two() {
    let task = new_task("T", None, None);
    let template = Template::parse("{{{{title}} is {{title}}; }} and {{{{{{{{ stay").unwrap();
    assert_eq!(
        template.render(&input(&task, &[], &[])),
        "{{title}} is T; }} and {{{{ stay"
    );
    let plain = Template::parse("no placeholders { } }}").unwrap();
    assert_eq!(
        plain.render(&input(&task, &[], &[])),
        "no placeholders { } }}"
    );
}

#[test]
fn a_long_description_comment_or_result_is_cut_with_a_marker() {
    let long = "é".repeat(DESCRIPTION_MAX_CHARS + 5);
    let task = new_task("T", Some(&long), None);
    let description = Template::parse("{{description}}")
        .unwrap()
        .render(&input(&task, &[], &[]));
    assert_eq!(
        description,
        format!(
            "{}\n[… 5 more characters cut]",
            "é".repeat(DESCRIPTION_MAX_CHARS)
        )
    );

    let comments = [comment(&"c".repeat(COMMENT_MAX_CHARS + 1), None, None)];
    let rendered = Template::parse("{{comments}}")
        .unwrap()
        .render(&input(&task, &comments, &[]));
    assert!(rendered.ends_with(&format!(
        "{}\n[… 1 more characters cut]",
        "c".repeat(COMMENT_MAX_CHARS)
    )));

    let deps = [new_task("D", None, Some(&"r".repeat(RESULT_MAX_CHARS + 7)))];
    let rendered = Template::parse("{{dependencies}}")
        .unwrap()
        .render(&input(&task, &[], &deps));
    assert!(rendered.ends_with(&format!(
        "{}\n[… 7 more characters cut]",
        "r".repeat(RESULT_MAX_CHARS)
    )));
}

#[test]
fn only_the_last_comments_are_given() {
    let task = new_task("T", None, None);
    let comments: Vec<_> = (0..COMMENTS_MAX + 3)
        .map(|i| comment(&format!("comment {i}"), None, None))
        .collect();
    let rendered = Template::parse("{{comments}}")
        .unwrap()
        .render(&input(&task, &comments, &[]));
    assert!(
        rendered.starts_with("(3 earlier comments left out)\n\n[2026"),
        "{rendered}"
    );
    assert!(!rendered.contains("comment 2\n"));
    assert!(rendered.contains("comment 3\n"));
    assert!(rendered.ends_with(&format!("comment {}", COMMENTS_MAX + 2)));
    assert_eq!(rendered.matches("a deleted author").count(), COMMENTS_MAX);
}

#[test]
fn comments_stop_at_their_shared_budget_keeping_the_newest() {
    let task = new_task("T", None, None);
    let comments: Vec<_> = (0..COMMENTS_MAX)
        .map(|i| {
            comment(
                &format!("{i:02}{}", "x".repeat(COMMENT_MAX_CHARS)),
                None,
                None,
            )
        })
        .collect();
    let rendered = Template::parse("{{comments}}")
        .unwrap()
        .render(&input(&task, &comments, &[]));
    let shown = rendered.matches("a deleted author").count();
    assert!(shown > 0 && shown < COMMENTS_MAX, "{shown}");
    assert!(rendered.starts_with(&format!(
        "({} earlier comments left out)",
        COMMENTS_MAX - shown
    )));
    assert!(rendered.contains(&format!("\n{}x", COMMENTS_MAX - 1)));
    assert!(rendered.chars().count() <= COMMENTS_MAX_CHARS + 100);
}

#[test]
fn at_most_so_many_dependencies_are_listed() {
    let task = new_task("T", None, None);
    let deps: Vec<_> = (0..DEPENDENCIES_MAX + 2)
        .map(|i| new_task(&format!("dep {i}"), None, None))
        .collect();
    let rendered = Template::parse("{{dependencies}}")
        .unwrap()
        .render(&input(&task, &[], &deps));
    assert_eq!(
        rendered.matches("(no result recorded)").count(),
        DEPENDENCIES_MAX
    );
    assert!(
        rendered.ends_with("\n\n(2 more dependencies left out)"),
        "{rendered}"
    );
}

#[test]
fn the_whole_prompt_is_capped_on_a_character_boundary() {
    let task = new_task("T", Some(&"€".repeat(DESCRIPTION_MAX_CHARS)), None);
    let template = Template::parse(&"{{description}}".repeat(5)).unwrap();
    let rendered = template.render(&input(&task, &[], &[]));
    assert!(rendered.len() <= PROMPT_MAX_BYTES);
    assert!(rendered.len() > PROMPT_MAX_BYTES - 40);
    assert!(rendered.ends_with(&format!("\n[… prompt cut at {PROMPT_MAX_BYTES} bytes]")));

    // The built-in prompt at its worst stays under the cap before it applies.
    let worst = "w".repeat(DESCRIPTION_MAX_CHARS * 2);
    let task = new_task(&"t".repeat(255), Some(&worst), None);
    let comments: Vec<_> = (0..COMMENTS_MAX)
        .map(|_| comment(&worst, Some(AGENT_ID), None))
        .collect();
    let deps: Vec<_> = (0..DEPENDENCIES_MAX)
        .map(|_| new_task("d", None, Some(&worst)))
        .collect();
    let rendered = Template::builtin().render(&input(&task, &comments, &deps));
    assert!(rendered.len() < PROMPT_MAX_BYTES, "{}", rendered.len());
    assert!(rendered.contains("earlier comments left out"));
}
