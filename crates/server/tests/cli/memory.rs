//! How the server asks the kernel for memory (Linux only: it reads `/proc`).
#![cfg(target_os = "linux")]

use crate::Scratch;
use crate::shutdown::start;

/// Backed by 2 MiB pages, the heap would be resident in 2 MiB steps, mostly empty at
/// rest. The server turns transparent huge pages off for itself (`THP_enabled: 0`), and
/// where the kernel gives them only to who asks (`madvise` mode) or to nobody, it holds
/// none at all: its allocator never asked, even before `main`. (In `always` mode the
/// kernel may have handed some out before `main` turned them off.)
#[test]
fn the_server_keeps_its_heap_in_small_pages() {
    let scratch = Scratch::new();
    let server = start(&scratch);
    let proc_file = |name: &str| {
        std::fs::read_to_string(format!("/proc/{}/{name}", server.child.id())).unwrap()
    };
    let field = |text: &str, name: &str| -> Option<String> {
        let line = text.lines().find(|line| line.starts_with(name))?;
        line.split_whitespace().nth(1).map(str::to_owned)
    };
    let status = proc_file("status");
    assert_eq!(
        field(&status, "THP_enabled:").as_deref(),
        Some("0"),
        "{status}"
    );
    let mode =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    if mode.contains("[madvise]") || mode.contains("[never]") {
        let rollup = proc_file("smaps_rollup");
        assert_eq!(
            field(&rollup, "AnonHugePages:").as_deref(),
            Some("0"),
            "{rollup}"
        );
    }
}
