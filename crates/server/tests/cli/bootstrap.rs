use serde_json::Value;

use crate::{Scratch, assert_one_clear_error, muster, stderr};

fn bootstrap(url: &str, org: &str, hr: Option<&str>) -> std::process::Output {
    let mut cmd = muster();
    cmd.args([
        "bootstrap",
        "--org-name",
        org,
        "--admin-email",
        "Admin@Example.com",
    ])
    .args(["--admin-password", "correct horse", "--database-url", url]);
    if let Some(hr) = hr {
        cmd.args(["--hr-agent-id", hr]);
    }
    cmd.output().unwrap()
}

#[test]
fn bootstrap_prints_exactly_one_json_object() {
    let scratch = Scratch::new();
    let out = bootstrap(&scratch.sqlite_url(), "Acme Corp", None);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.trim_end().lines().count(), 1, "{stdout}");
    let json: Value = serde_json::from_str(&stdout).unwrap();
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["adminUser", "hrAgent", "orgId"]);
    assert!(uuid::Uuid::parse_str(json["orgId"].as_str().unwrap()).is_ok());
    assert!(uuid::Uuid::parse_str(json["adminUser"]["id"].as_str().unwrap()).is_ok());
    assert_eq!(json["adminUser"]["email"], "admin@example.com");
    assert_eq!(json["hrAgent"]["agentId"], "hr-acme-corp");
    assert!(uuid::Uuid::parse_str(json["hrAgent"]["id"].as_str().unwrap()).is_ok());
    let secret = json["hrAgent"]["secret"].as_str().unwrap();
    assert_eq!(secret.len(), 64);
    assert!(
        secret
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    );
    // The generated server key sits beside the database file.
    assert!(scratch.0.join("data/secret.key").exists());
}

#[test]
fn bootstrap_again_adds_an_organization_and_refuses_a_taken_hr_id() {
    let scratch = Scratch::new();
    let url = scratch.sqlite_url();
    let first = bootstrap(&url, "Acme", Some("hr-one"));
    assert!(first.status.success(), "{}", stderr(&first));
    let second = bootstrap(&url, "Globex", None);
    assert!(second.status.success(), "{}", stderr(&second));
    let a: Value = serde_json::from_slice(&first.stdout).unwrap();
    let b: Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_ne!(a["orgId"], b["orgId"]);
    assert_eq!(b["hrAgent"]["agentId"], "hr-globex");

    let again = bootstrap(&url, "Initech", Some("hr-one"));
    assert_one_clear_error(
        &again,
        "agentId hr-one is taken: choose another --hr-agent-id",
    );
    assert!(again.stdout.is_empty());
}

#[test]
fn bootstrap_rejects_bad_input_with_one_line() {
    let scratch = Scratch::new();
    let url = scratch.sqlite_url();
    let out = muster()
        .args([
            "bootstrap",
            "--org-name",
            "Acme",
            "--admin-email",
            "not-an-email",
        ])
        .args(["--admin-password", "correct horse", "--database-url", &url])
        .output()
        .unwrap();
    assert_one_clear_error(&out, "email must be a valid e-mail address");
    let out = muster()
        .args(["bootstrap", "--org-name", "Acme", "--admin-email", "a@b.co"])
        .args(["--admin-password", "short", "--database-url", &url])
        .output()
        .unwrap();
    assert_one_clear_error(&out, "admin password must be 8 to 128 characters");
}

#[test]
fn bootstrap_refuses_a_treasury_out_of_range() {
    let scratch = Scratch::new();
    let url = scratch.sqlite_url();
    for treasury in ["-1", "1000000001", "ten"] {
        let out = muster()
            .args(["bootstrap", "--org-name", "Acme", "--admin-email", "a@b.co"])
            .args(["--admin-password", "correct horse", "--database-url", &url])
            .arg(format!("--treasury={treasury}"))
            .output()
            .unwrap();
        assert!(!out.status.success(), "{treasury}");
        assert!(stderr(&out).contains("--treasury"), "{}", stderr(&out));
        assert!(out.stdout.is_empty(), "{treasury}");
    }
}

#[test]
fn migrate_applies_once_then_reports_up_to_date() {
    let scratch = Scratch::new();
    let url = scratch.sqlite_url();
    let first = muster()
        .args(["migrate", "--database-url", &url])
        .output()
        .unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(
        stderr(&first).contains("applied migrations"),
        "{}",
        stderr(&first)
    );
    let second = muster()
        .args(["migrate", "--database-url", &url])
        .output()
        .unwrap();
    assert!(second.status.success());
    assert!(
        stderr(&second).contains("database is up to date"),
        "{}",
        stderr(&second)
    );
}
