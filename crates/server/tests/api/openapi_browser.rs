//! `/docs` in a real browser: Debian's Chromium, headless, loads the page from a running
//! server, renders the operations of the document and logs nothing to its console (no
//! script error, no Content-Security-Policy violation, no failed fetch of the document).
//!
//! Chromium is `/usr/bin/chromium` or `MUSTER_CHROMIUM`; `.ci/run` installs it. Without
//! it the test fails under `CI` and is skipped, saying so, elsewhere.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use muster_persistence::Engine;

use crate::helpers::spawn_app;

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("MUSTER_CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "Chromium is not at {} (CI is set): install Debian's chromium package",
        path.display()
    );
    eprintln!("skipped: no Chromium at {}", path.display());
    None
}

/// What Chromium printed: the DOM after scripts ran, and its log.
struct Rendered {
    dom: String,
    log: String,
}

fn render(chromium: &PathBuf, url: &str) -> Rendered {
    let profile = std::env::temp_dir().join(format!("muster-chromium-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&profile).unwrap();
    // Files, not pipes: the DOM is larger than a pipe holds while we wait.
    let dom_path = profile.join("dom.html");
    let log_path = profile.join("chromium.log");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=20000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url)
        .stdout(Stdio::from(std::fs::File::create(&dom_path).unwrap()))
        .stderr(Stdio::from(std::fs::File::create(&log_path).unwrap()))
        .spawn()
        .expect("Chromium starts");
    let started = Instant::now();
    while child.try_wait().expect("Chromium runs").is_none() {
        if started.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("Chromium did not finish rendering {url} in 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let rendered = Rendered {
        dom: String::from_utf8_lossy(&std::fs::read(&dom_path).unwrap()).into_owned(),
        log: String::from_utf8_lossy(&std::fs::read(&log_path).unwrap()).into_owned(),
    };
    let _ = std::fs::remove_dir_all(&profile);
    rendered
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_renders_every_operation_without_console_messages() {
    let Some(chromium) = chromium() else {
        return;
    };
    let app = spawn_app(Engine::Sqlite)
        .await
        .expect("SQLite always starts");
    let url = app.url("/docs/");
    let rendered = tokio::task::spawn_blocking(move || render(&chromium, &url))
        .await
        .unwrap();
    app.stop().await;

    let console: Vec<&str> = rendered
        .log
        .lines()
        .filter(|line| line.contains(":CONSOLE"))
        .collect();
    assert!(console.is_empty(), "the page logged: {console:#?}");
    let document: serde_json::Value = serde_json::from_str(muster_http::openapi::json()).unwrap();
    let mut missing = Vec::new();
    let mut operations = 0;
    for item in document["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            let id = operation["operationId"].as_str().unwrap();
            operations += 1;
            if !rendered.dom.contains(&format!(">{id}<")) {
                missing.push(id.to_owned());
            }
        }
    }
    assert!(operations > 100, "{operations} operations");
    assert!(
        missing.is_empty(),
        "not rendered: {missing:?}\n{}",
        &rendered.dom[..rendered.dom.len().min(2_000)]
    );
    assert!(rendered.dom.contains("Muster API"), "no title");
}
