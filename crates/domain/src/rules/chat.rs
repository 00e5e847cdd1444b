//! Reading chat messages (the contract's chat rules with decision D-86): which messages
//! create a task, which complete one, and the priority a message asks for. Pure text
//! work: matching is case-insensitive, words are whole words (a run of letters and
//! digits), and a title runs from its prefix to the end of the line.

use crate::model::{TaskPriority, Title};

/// What a chat message asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatCommand {
    /// Create a task.
    Create {
        /// The title after the prefix, trimmed.
        title: Title,
        /// From the words of the whole message.
        priority: TaskPriority,
    },
    /// Mark the task matching `hint` done.
    Complete {
        /// The text after `Completed:`, trimmed.
        hint: String,
    },
    /// Nothing to do, and why.
    Nothing(&'static str),
}

/// The words that, with a `Completed:` hint, mark a task done (`Completed:` itself does
/// not count).
const COMPLETION_WORDS: [&str; 4] = ["complete", "completed", "finished", "done"];

/// Reads `content`. Task prefixes win over a completion: `✅ Task: <title>`,
/// `Created task: <title>` or `Task created: <title>` anywhere in the message (the first
/// one found) creates a task; else `Completed: <hint>` with a completion word elsewhere
/// completes one.
///
/// ```
/// use muster_domain::model::TaskPriority;
/// use muster_domain::rules::chat::{ChatCommand, parse};
/// let ChatCommand::Create { title, priority } = parse("✅ Task: Fix the login page ASAP") else {
///     panic!("a task")
/// };
/// assert_eq!(title.as_str(), "Fix the login page ASAP");
/// assert_eq!(priority, TaskPriority::Urgent);
/// assert_eq!(
///     parse("Completed: login page — all done"),
///     ChatCommand::Complete { hint: "login page — all done".into() }
/// );
/// ```
pub fn parse(content: &str) -> ChatCommand {
    if let Some(start) = task_prefix_end(content) {
        let title = first_line(&content[start..]);
        if title.is_empty() {
            return ChatCommand::Nothing("the task prefix has no title");
        }
        return match Title::new(title) {
            Ok(title) => ChatCommand::Create {
                title,
                priority: priority_of(content),
            },
            Err(_) if title.chars().count() > Title::MAX_CHARS => {
                ChatCommand::Nothing("the title is longer than 255 characters")
            }
            Err(_) => ChatCommand::Nothing(
                "the title has nothing visible or holds a direction control character",
            ),
        };
    }
    if let Some((marker, after)) = find_words(content, &["completed:"]) {
        let hint = first_line(&content[after..]);
        if hint.is_empty() {
            return ChatCommand::Nothing("Completed: names no task");
        }
        let has_word = words(content).any(|(at, word)| {
            at != marker
                && COMPLETION_WORDS
                    .iter()
                    .any(|w| word.eq_ignore_ascii_case(w))
        });
        if !has_word {
            return ChatCommand::Nothing("Completed: needs complete, completed, finished or done");
        }
        return ChatCommand::Complete {
            hint: hint.to_owned(),
        };
    }
    ChatCommand::Nothing("no task prefix and no completion")
}

/// The priority the whole message asks for: critical, urgent or asap make it `urgent`;
/// "high priority" or important `high`; "low priority" `low`; else `normal`. Whole
/// words only ("highlight" is not "high").
pub fn priority_of(content: &str) -> TaskPriority {
    let lower: Vec<String> = words(content).map(|(_, w)| w.to_lowercase()).collect();
    let has = |word: &str| lower.iter().any(|w| w == word);
    let pair =
        |first: &str, second: &str| lower.windows(2).any(|w| w[0] == first && w[1] == second);
    if has("critical") || has("urgent") || has("asap") {
        TaskPriority::Urgent
    } else if pair("high", "priority") || has("important") {
        TaskPriority::High
    } else if pair("low", "priority") {
        TaskPriority::Low
    } else {
        TaskPriority::Normal
    }
}

/// The byte offset right after the first task prefix in `content`.
fn task_prefix_end(content: &str) -> Option<usize> {
    let candidates = [
        check_mark_prefix(content),
        find_words(content, &["created", "task:"]),
        find_words(content, &["task", "created:"]),
    ];
    // The first prefix in the message wins; its start orders them.
    candidates
        .into_iter()
        .flatten()
        .min_by_key(|(start, _)| *start)
        .map(|(_, end)| end)
}

/// `✅` (with or without the emoji variation selector), optional spaces, `Task:`.
fn check_mark_prefix(content: &str) -> Option<(usize, usize)> {
    content.match_indices('\u{2705}').find_map(|(start, mark)| {
        let rest = &content[start + mark.len()..];
        let rest = rest.strip_prefix('\u{fe0f}').unwrap_or(rest);
        let trimmed = rest.trim_start_matches([' ', '\t']);
        let word = trimmed.get(..5)?;
        word.eq_ignore_ascii_case("task:")
            .then(|| (start, content.len() - trimmed.len() + 5))
    })
}

/// The first place where `pattern` (words separated by spaces, the last possibly ending
/// in `:`) stands in `content` as whole words: its start and the offset after it.
fn find_words(content: &str, pattern: &[&str]) -> Option<(usize, usize)> {
    let tokens: Vec<(usize, &str)> = words_with_colon(content).collect();
    tokens.windows(pattern.len()).find_map(|window| {
        let matches = window
            .iter()
            .zip(pattern)
            .all(|((_, word), want)| word.eq_ignore_ascii_case(want));
        // Words of one pattern sit on one line, separated by blanks only.
        let (start, _) = window[0];
        let (last, last_word) = window[window.len() - 1];
        let end = last + last_word.len();
        let on_one_line = content[start..end]
            .chars()
            .all(|c| !matches!(c, '\n' | '\r'));
        (matches && on_one_line).then_some((start, end))
    })
}

/// Whole words of `content` with their byte offsets.
fn words(content: &str) -> impl Iterator<Item = (usize, &str)> {
    split_keeping(content, char::is_alphanumeric)
}

/// Like [`words`], but a `:` right after a word belongs to it (for prefixes).
fn words_with_colon(content: &str) -> impl Iterator<Item = (usize, &str)> {
    split_keeping(content, char::is_alphanumeric).map(move |(at, word)| {
        let end = at + word.len();
        if content[end..].starts_with(':') {
            (at, &content[at..=end])
        } else {
            (at, word)
        }
    })
}

fn split_keeping(content: &str, keep: fn(char) -> bool) -> impl Iterator<Item = (usize, &str)> {
    let mut start = None;
    let mut out = Vec::new();
    for (at, c) in content.char_indices() {
        match (keep(c), start) {
            (true, None) => start = Some(at),
            (false, Some(s)) => {
                out.push((s, &content[s..at]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &content[s..]));
    }
    out.into_iter()
}

/// The text up to the end of the line, trimmed.
fn first_line(text: &str) -> &str {
    text.split(['\n', '\r']).next().unwrap_or("").trim()
}

#[cfg(test)]
mod tests;
