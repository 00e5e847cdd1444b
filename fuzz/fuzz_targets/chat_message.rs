//! The chat message reader on arbitrary text: it never panics, a title it finds is a
//! valid title that occurs in the message, and a completion hint occurs in it too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use muster_domain::rules::chat::{ChatCommand, parse, priority_of};

fuzz_target!(|content: &str| {
    match parse(content) {
        ChatCommand::Create { title, priority } => {
            assert!(!title.as_str().is_empty());
            assert!(
                content.contains(title.as_str()),
                "{title:?} not in {content:?}"
            );
            assert!(!title.as_str().contains('\n'));
            assert_eq!(priority, priority_of(content));
        }
        ChatCommand::Complete { hint } => {
            assert!(
                content.contains(hint.as_str()),
                "{hint:?} not in {content:?}"
            );
        }
        ChatCommand::Nothing(why) => assert!(!why.is_empty()),
    }
});
