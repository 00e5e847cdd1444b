use std::net::TcpListener;

use crate::{Scratch, assert_one_clear_error, muster};

#[test]
fn unparseable_database_url() {
    let out = muster()
        .args(["serve", "--database-url", "mysql://x@y/z"])
        .output()
        .unwrap();
    assert_one_clear_error(&out, "unsupported database URL");
}

#[test]
fn unreachable_database() {
    // Port 1 on loopback: nothing listens there.
    let out = muster()
        .args([
            "serve",
            "--database-url",
            "postgres://postgres@127.0.0.1:1/muster",
        ])
        .output()
        .unwrap();
    assert_one_clear_error(
        &out,
        "cannot connect to the database postgres://postgres@127.0.0.1:1/muster",
    );
}

#[test]
fn port_in_use() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let scratch = Scratch::new();
    let out = muster()
        .args([
            "serve",
            "--bind",
            &addr,
            "--database-url",
            &scratch.sqlite_url(),
        ])
        .output()
        .unwrap();
    assert_one_clear_error(&out, &format!("cannot listen on {addr}"));
}

#[test]
fn unparseable_bind_address() {
    let scratch = Scratch::new();
    let out = muster()
        .args([
            "serve",
            "--bind",
            "nowhere",
            "--database-url",
            &scratch.sqlite_url(),
        ])
        .output()
        .unwrap();
    assert_one_clear_error(&out, "cannot listen on nowhere");
}

#[test]
fn invalid_secret_key() {
    let scratch = Scratch::new();
    let out = muster()
        .env("MUSTER_SECRET_KEY", "too-short")
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--database-url",
            &scratch.sqlite_url(),
        ])
        .output()
        .unwrap();
    assert_one_clear_error(&out, "MUSTER_SECRET_KEY must be 32 bytes");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("too-short"),
        "the key must never be echoed: {stderr}"
    );
}

#[test]
fn a_lost_key_file_stops_the_server_instead_of_replacing_the_key() {
    let scratch = Scratch::new();
    let url = scratch.sqlite_url();
    let out = muster()
        .args(["bootstrap", "--org-name", "Acme", "--admin-email", "a@b.co"])
        .args(["--admin-password", "correct horse", "--database-url", &url])
        .output()
        .unwrap();
    assert!(out.status.success());
    std::fs::remove_file(scratch.0.join("data/secret.key")).unwrap();
    let out = muster()
        .args(["serve", "--bind", "127.0.0.1:0", "--database-url", &url])
        .output()
        .unwrap();
    assert_one_clear_error(&out, "secret.key is missing");
    assert!(!scratch.0.join("data/secret.key").exists());
}

#[test]
fn auth_mode_local_needs_a_password() {
    let scratch = Scratch::new();
    let out = muster()
        .args([
            "serve",
            "--auth-mode",
            "local",
            "--database-url",
            &scratch.sqlite_url(),
        ])
        .env_remove("MUSTER_LOCAL_PASSWORD")
        .env_remove("MUSTER_LOCAL_PASSWORD_HASH")
        .output()
        .unwrap();
    assert_one_clear_error(
        &out,
        "auth mode local needs MUSTER_LOCAL_PASSWORD or MUSTER_LOCAL_PASSWORD_HASH",
    );
}

#[test]
fn a_half_configured_identity_provider_is_refused() {
    let scratch = Scratch::new();
    let out = muster()
        .args(["serve", "--database-url", &scratch.sqlite_url()])
        .env("MUSTER_OAUTH_CLIENT_ID", "client")
        .env_remove("MUSTER_OAUTH_CLIENT_SECRET")
        .output()
        .unwrap();
    assert_one_clear_error(
        &out,
        "MUSTER_OAUTH_CLIENT_SECRET is required when MUSTER_OAUTH_CLIENT_ID is set",
    );
}

#[test]
fn a_sign_in_start_rate_out_of_range_is_refused() {
    for value in ["0", "many", "100001", "-3"] {
        let scratch = Scratch::new();
        let out = muster()
            .args(["serve", "--database-url", &scratch.sqlite_url()])
            .env("MUSTER_OAUTH_CLIENT_ID", "client")
            .env("MUSTER_OAUTH_CLIENT_SECRET", "secret")
            .env(
                "MUSTER_OAUTH_REDIRECT_URL",
                "https://muster.test/auth/google/callback",
            )
            .env("MUSTER_FRONTEND_URL", "https://app.muster.test")
            .env("MUSTER_OAUTH_STARTS_PER_SECOND", value)
            .output()
            .unwrap();
        assert_one_clear_error(
            &out,
            &format!(
                "MUSTER_OAUTH_STARTS_PER_SECOND must be a whole number from 1 to 100000, not {value:?}"
            ),
        );
    }
}

#[test]
fn out_of_range_pool_stream_and_hasher_settings_are_refused() {
    for (flag, value) in [
        ("--db-pool-size", "0"),
        ("--password-hashers", "0"),
        ("--password-hashers", "many"),
        ("--db-acquire-timeout-ms", "5"),
        ("--stream-max", "0"),
        ("--stream-max-secs", "0"),
    ] {
        let out = muster().args(["serve", flag, value]).output().unwrap();
        assert!(!out.status.success(), "{flag} {value} was accepted");
        let err = crate::stderr(&out);
        assert!(
            err.starts_with("error: ") && err.contains(flag),
            "{flag} {value}: {err}"
        );
    }
}

#[test]
fn a_short_metrics_token_stops_the_start() {
    let scratch = Scratch::new();
    let out = muster()
        .args(["serve", "--bind", "127.0.0.1:0"])
        .args(["--database-url", &scratch.sqlite_url()])
        .env("MUSTER_METRICS_TOKEN", "too-short")
        .output()
        .unwrap();
    assert_one_clear_error(&out, "MUSTER_METRICS_TOKEN must be at least 16 characters");
}
