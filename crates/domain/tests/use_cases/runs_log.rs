//! A run's log on the in-memory store (decision D-106): numbered lines read in pages,
//! at most 10 MiB kept, one marker line after, and nothing more.

use crate::common::runs::{code, funded, reread, running};
use crate::common::world::World;

use futures_executor::block_on;
use muster_domain::model::{LogStream, NewLogLine};
use muster_domain::rules::runs::{MAX_LINES_PER_APPEND, MAX_LOG_BYTES, TRUNCATION_MARKER};

fn line(stream: LogStream, text: &str) -> NewLogLine {
    NewLogLine {
        stream,
        text: text.to_owned(),
    }
}

fn out(text: &str) -> NewLogLine {
    line(LogStream::Stdout, text)
}

#[test]
fn lines_are_numbered_from_one_and_read_in_pages() {
    let world = World::new();
    let (_, actor, _, run) = running(&world, "talker", 0);
    let first = block_on(world.runs.append_log(
        &actor,
        run.id,
        vec![out("hello"), line(LogStream::Stderr, "oops"), out("")],
    ))
    .unwrap();
    assert_eq!((first.log_lines, first.log_bytes), (3, 9));
    let second = block_on(world.runs.append_log(&actor, run.id, vec![out("bye")])).unwrap();
    assert_eq!((second.log_lines, second.log_bytes), (4, 12));
    assert_eq!(reread(&world, run.id), second);
    let unchanged = block_on(world.runs.append_log(&actor, run.id, Vec::new())).unwrap();
    assert_eq!(unchanged, second, "an empty append answers the run");

    let reader = world.admin.clone();
    let page = block_on(world.runs.log(&reader, run.id, 0, 2)).unwrap();
    let seen: Vec<_> = page
        .lines
        .iter()
        .map(|l| (l.seq, l.stream, l.text.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            (1, LogStream::Stdout, "hello"),
            (2, LogStream::Stderr, "oops")
        ]
    );
    assert_eq!(page.last, 2);
    assert!(!page.truncated);
    assert_eq!(page.lines[0].at, world.clock_now());
    let next = block_on(world.runs.log(&reader, run.id, page.last, 2)).unwrap();
    let texts: Vec<_> = next
        .lines
        .iter()
        .map(|l| (l.seq, l.text.as_str()))
        .collect();
    assert_eq!(texts, [(3, ""), (4, "bye")]);
    let end = block_on(world.runs.log(&reader, run.id, next.last, 2)).unwrap();
    assert!(end.lines.is_empty());
    assert_eq!(end.last, 4, "an empty page answers the `after` asked");

    // Another run's lines are its own.
    let (_, other_actor, _, other) = running(&world, "other", 0);
    block_on(
        world
            .runs
            .append_log(&other_actor, other.id, vec![out("mine")]),
    )
    .unwrap();
    let theirs = block_on(world.runs.log(&reader, other.id, 0, 10)).unwrap();
    assert_eq!(theirs.lines.len(), 1);
    assert_eq!(theirs.lines[0].seq, 1);
    assert_eq!(
        block_on(world.runs.log(&reader, run.id, 0, 10))
            .unwrap()
            .lines
            .len(),
        4
    );
}

#[test]
fn only_the_runs_agent_appends_and_limits_are_checked() {
    let world = World::new();
    let (_, actor, _, run) = running(&world, "talker", 0);
    let (_, other) = funded(&world, "other", 0);
    assert_eq!(
        code(block_on(world.runs.append_log(
            &other,
            run.id,
            vec![out("x")]
        ))),
        "run_agent_required"
    );
    assert_eq!(
        code(block_on(world.runs.append_log(
            &world.admin,
            run.id,
            vec![out("x")]
        ))),
        "run_agent_required"
    );
    let too_many = vec![out("x"); MAX_LINES_PER_APPEND + 1];
    assert_eq!(
        code(block_on(world.runs.append_log(&actor, run.id, too_many))),
        "validation_failed"
    );
    assert_eq!(
        code(block_on(world.runs.append_log(
            &actor,
            run.id,
            vec![out("a\0b")]
        ))),
        "validation_failed"
    );
    let most = vec![out("x"); MAX_LINES_PER_APPEND];
    let full = block_on(world.runs.append_log(&actor, run.id, most)).unwrap();
    assert_eq!(full.log_lines, 10_000);
    for (after, limit) in [(0, 0), (0, 1_001), (-1, 10)] {
        assert_eq!(
            code(block_on(world.runs.log(&world.admin, run.id, after, limit))),
            "validation_failed",
            "after {after}, limit {limit}"
        );
    }
    let page = block_on(world.runs.log(&world.admin, run.id, 0, 1_000)).unwrap();
    assert_eq!((page.lines.len(), page.last), (1_000, 1_000));
}

#[test]
fn the_line_past_the_limit_becomes_a_marker_and_later_appends_keep_nothing() {
    let world = World::new();
    let (_, actor, _, run) = running(&world, "flood", 0);
    let limit = usize::try_from(MAX_LOG_BYTES).unwrap();
    let almost = block_on(world.runs.append_log(
        &actor,
        run.id,
        vec![out(&"a".repeat(limit - 10))],
    ))
    .unwrap();
    assert_eq!(almost.log_bytes, MAX_LOG_BYTES - 10);

    // The first fits exactly; the second would pass the limit: it and the rest of the
    // batch are replaced by the marker.
    let cut = block_on(world.runs.append_log(
        &actor,
        run.id,
        vec![out("0123456789"), out("!"), out("more")],
    ))
    .unwrap();
    assert!(cut.log_truncated);
    assert_eq!(cut.log_lines, 3);
    let marker_bytes = i64::try_from(TRUNCATION_MARKER.len()).unwrap();
    assert_eq!(cut.log_bytes, MAX_LOG_BYTES + marker_bytes);
    let page = block_on(world.runs.log(&world.admin, run.id, 1, 10)).unwrap();
    let tail: Vec<_> = page
        .lines
        .iter()
        .map(|l| (l.seq, l.stream, l.text.as_str()))
        .collect();
    assert_eq!(
        tail,
        [
            (2, LogStream::Stdout, "0123456789"),
            (3, LogStream::System, TRUNCATION_MARKER)
        ]
    );
    assert!(page.truncated);

    let later = block_on(
        world
            .runs
            .append_log(&actor, run.id, vec![out("x"), out("")]),
    )
    .unwrap();
    assert_eq!(later, cut, "accepted, nothing kept");
    assert_eq!(reread(&world, run.id), cut);
    let page = block_on(world.runs.log(&world.admin, run.id, 3, 10)).unwrap();
    assert!(page.lines.is_empty());
}

#[test]
fn a_single_line_larger_than_the_limit_is_replaced_by_the_marker() {
    let world = World::new();
    let (_, actor, _, run) = running(&world, "flood", 0);
    let limit = usize::try_from(MAX_LOG_BYTES).unwrap();
    let cut = block_on(
        world
            .runs
            .append_log(&actor, run.id, vec![out(&"b".repeat(limit + 1))]),
    )
    .unwrap();
    assert!(cut.log_truncated);
    assert_eq!(cut.log_lines, 1);
    let page = block_on(world.runs.log(&world.admin, run.id, 0, 10)).unwrap();
    assert_eq!(page.lines.len(), 1);
    assert_eq!(page.lines[0].text, TRUNCATION_MARKER);
}
