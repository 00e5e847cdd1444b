use super::*;
use crate::model::TaskPriority::{High, Low, Normal, Urgent};

/// What a message should come to: a task with its title and priority, a completion with
/// its hint, or nothing.
enum Want {
    Task(&'static str, TaskPriority),
    Done(&'static str),
    Skip,
}

use Want::{Done, Skip, Task};

/// The messages and what each should come to.
// One row a message: splitting the table would only scatter it.
#[allow(clippy::too_many_lines)]
fn table() -> Vec<(String, Want)> {
    let long_title = format!("✅ Task: {}", "x".repeat(256));
    let max_title = format!("Created task: {}", "é".repeat(255));
    let table: Vec<(String, Want)> = vec![
        // The three prefixes, anywhere in the message.
        ("✅ Task: Fix login".into(), Task("Fix login", Normal)),
        (
            "✅Task: No space after the mark".into(),
            Task("No space after the mark", Normal),
        ),
        (
            "✅\u{fe0f} Task: With the emoji selector".into(),
            Task("With the emoji selector", Normal),
        ),
        (
            "✅   task:   Lower case and padding   ".into(),
            Task("Lower case and padding", Normal),
        ),
        (
            "Created task: Write the docs".into(),
            Task("Write the docs", Normal),
        ),
        (
            "created TASK: shouting works".into(),
            Task("shouting works", Normal),
        ),
        (
            "Task created: Rotate keys".into(),
            Task("Rotate keys", Normal),
        ),
        ("TASK CREATED: upper".into(), Task("upper", Normal)),
        (
            "Heads up — Created task: inside a sentence".into(),
            Task("inside a sentence", Normal),
        ),
        (
            "Morning all!\nTask created: on the second line\nmore text".into(),
            Task("on the second line", Normal),
        ),
        (
            "Task created: first\nCreated task: second".into(),
            Task("first", Normal),
        ),
        (
            "Created task: second wins?\n✅ Task: no, the first".into(),
            Task("second wins?", Normal),
        ),
        // Titles: to the end of the line, trimmed, unicode kept, 1..=255 characters.
        (
            "✅ Task: Réparer l'éditeur 🚀 für 日本".into(),
            Task("Réparer l'éditeur 🚀 für 日本", Normal),
        ),
        ("✅ Task: multi\r\nline".into(), Task("multi", Normal)),
        (max_title, Task("", Normal)),
        (long_title, Skip),
        ("✅ Task:   ".into(), Skip),
        ("✅ Task:\nTitle on the next line".into(), Skip),
        // Not prefixes.
        ("Task: no mark".into(), Skip),
        ("Recreated task: not a whole word".into(), Skip),
        ("Created tasks: plural".into(), Skip),
        ("Created\ntask: split over lines".into(), Skip),
        ("✅ Tasks: plural".into(), Skip),
        ("just chatting".into(), Skip),
        (String::new(), Skip),
        // Priorities, whole words, case-insensitive, from the whole message.
        (
            "✅ Task: Server down ASAP".into(),
            Task("Server down ASAP", Urgent),
        ),
        (
            "✅ Task: Payments\nthis is CRITICAL".into(),
            Task("Payments", Urgent),
        ),
        (
            "Created task: x (urgent!)".into(),
            Task("x (urgent!)", Urgent),
        ),
        (
            "Created task: x — high priority".into(),
            Task("x — high priority", High),
        ),
        (
            "Created task: x\nHigh   Priority please".into(),
            Task("x", High),
        ),
        (
            "Created task: x, important".into(),
            Task("x, important", High),
        ),
        (
            "Created task: x — low priority".into(),
            Task("x — low priority", Low),
        ),
        (
            "Created task: x urgent and low priority".into(),
            Task("x urgent and low priority", Urgent),
        ),
        (
            "Created task: highlight the priority list".into(),
            Task("highlight the priority list", Normal),
        ),
        (
            "Created task: unimportant details".into(),
            Task("unimportant details", Normal),
        ),
        (
            "Created task: the highpriority flag".into(),
            Task("the highpriority flag", Normal),
        ),
        (
            "Created task: nonurgent, criticality, asapx".into(),
            Task("nonurgent, criticality, asapx", Normal),
        ),
        (
            "Created task: slow priority".into(),
            Task("slow priority", Normal),
        ),
        ("Created task: high\npriority".into(), Task("high", High)),
        // Completions: `Completed: <hint>` plus a completion word elsewhere.
        (
            "Completed: Fix login — done".into(),
            Done("Fix login — done"),
        ),
        (
            "All finished. Completed: Rotate keys".into(),
            Done("Rotate keys"),
        ),
        (
            "completed: lower case is complete".into(),
            Done("lower case is complete"),
        ),
        (
            "DONE!\nCompleted: Write the docs\nthanks".into(),
            Done("Write the docs"),
        ),
        (
            "Completed: Deploy 🚀 fertig — completed".into(),
            Done("Deploy 🚀 fertig — completed"),
        ),
        ("Completed: Fix login".into(), Skip),
        ("Completed: Fix login, undone".into(), Skip),
        ("Completed: Fix login, donefor".into(), Skip),
        ("Completed:  \n done".into(), Skip),
        ("Uncompleted: x done".into(), Skip),
        ("I completed it, done".into(), Skip),
        // A prefix wins over a completion.
        (
            "✅ Task: Follow-up\nCompleted: old one, done".into(),
            Task("Follow-up", Normal),
        ),
    ];
    table
}

#[test]
fn the_message_table() {
    let table = table();
    assert!(table.len() >= 40, "{} messages", table.len());
    for (message, want) in table {
        let got = parse(&message);
        match want {
            Task(title, priority) => {
                let ChatCommand::Create {
                    title: got_title,
                    priority: got_priority,
                } = &got
                else {
                    panic!("{message:?} should create a task, got {got:?}");
                };
                if !title.is_empty() {
                    assert_eq!(got_title.as_str(), title, "{message:?}");
                }
                assert_eq!(*got_priority, priority, "{message:?}");
            }
            Done(hint) => assert_eq!(
                got,
                ChatCommand::Complete { hint: hint.into() },
                "{message:?}"
            ),
            Skip => assert!(
                matches!(got, ChatCommand::Nothing(_)),
                "{message:?} gave {got:?}"
            ),
        }
    }
}

#[test]
fn the_longest_title_is_kept_whole() {
    let title = "é".repeat(255);
    let ChatCommand::Create { title: got, .. } = parse(&format!("Created task: {title}")) else {
        panic!("a task");
    };
    assert_eq!(got.as_str(), title);
}

#[test]
fn reasons_say_why_nothing_happens() {
    assert_eq!(
        parse("hello"),
        ChatCommand::Nothing("no task prefix and no completion")
    );
    assert_eq!(
        parse("Completed: x"),
        ChatCommand::Nothing("Completed: needs complete, completed, finished or done")
    );
    assert_eq!(
        parse("✅ Task: "),
        ChatCommand::Nothing("the task prefix has no title")
    );
    let hidden = "the title has nothing visible or holds a direction control character";
    assert_eq!(
        parse("Created task: \u{200B}\u{200B}"),
        ChatCommand::Nothing(hidden)
    );
    assert_eq!(
        parse("Created task: pay \u{202E}fdp.exe"),
        ChatCommand::Nothing(hidden)
    );
    assert_eq!(
        parse(&format!("Created task: {}", "x".repeat(256))),
        ChatCommand::Nothing("the title is longer than 255 characters")
    );
}
