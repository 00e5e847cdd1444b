//! One `muster serve` per SQLite file: a second one on the same file is refused with one
//! clear line, while `migrate` still runs beside the server; after the first server is
//! killed (even with SIGKILL) the file serves again.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::shutdown::start_with;
use crate::{Scratch, assert_one_clear_error, muster};

/// Runs `muster serve` on `scratch`'s database and waits (20 s at most) for it to exit.
fn second_serve(scratch: &Scratch) -> std::process::Output {
    let mut child = muster()
        .args(["serve", "--bind", "127.0.0.1:0", "--workers", "1"])
        .args(["--database-url", &scratch.sqlite_url()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
        }
        assert!(Instant::now() <= deadline, "the second server kept running");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_second_server_on_the_same_sqlite_file_is_refused() {
    let scratch = Scratch::new();
    let mut first = start_with(&scratch, &[], Stdio::null());
    let out = second_serve(&scratch);
    assert_one_clear_error(&out, "another `muster serve` is already running on");
    let migrated = muster()
        .args(["migrate", "--database-url", &scratch.sqlite_url()])
        .output()
        .unwrap();
    assert!(migrated.status.success(), "{migrated:?}");

    // SIGKILL leaves no stale lock: the operating system releases it with the process.
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    let _again = start_with(&scratch, &[], Stdio::null());
}
