//! The code-host payload mapper on arbitrary JSON and event names: it never panics;
//! a refusal names what is wrong; an installation id it finds is positive.
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use muster_domain::rules::codehost::{installation_of, read};

#[derive(Debug, Arbitrary)]
struct Input<'a> {
    event: u8,
    other_event: &'a str,
    payload: &'a [u8],
}

const EVENTS: [&str; 4] = ["issues", "pull_request", "issue_comment", "check_suite"];

fuzz_target!(|input: Input<'_>| {
    let Ok(payload) = serde_json::from_slice::<serde_json::Value>(input.payload) else {
        return;
    };
    let event = EVENTS
        .get(usize::from(input.event))
        .copied()
        .unwrap_or(input.other_event);
    if let Err(err) = read(event, &payload) {
        assert!(!err.to_string().is_empty());
    }
    if let Ok(id) = installation_of(&payload) {
        assert!(id.get() > 0);
    }
});
