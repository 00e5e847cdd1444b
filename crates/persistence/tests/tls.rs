//! TLS to PostgreSQL through rustls, against a throw-away server that shows a
//! certificate for `localhost` signed by a CA the test made: `require` encrypts,
//! `verify-ca` checks the chain, `verify-full` the chain and the host name, and each
//! refusal says why. Migrations go over the same connection settings.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use muster_persistence::testing::cluster::Cluster;
use muster_persistence::{Database, DatabaseUrl, PoolOptions, run_migrations};

const ENCRYPTED: &str =
    "SELECT CAST(ssl AS TEXT) AS v FROM pg_stat_ssl WHERE pid = pg_backend_pid()";

async fn connect(url: &str) -> Result<Database, String> {
    let url = DatabaseUrl::parse(url).unwrap();
    let options = PoolOptions {
        max_size: 1,
        ..PoolOptions::default()
    };
    Database::connect(&url, options)
        .await
        .map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_sslmode_does_what_libpq_does() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let ca = cluster.ca_file().display().to_string();
    let other = cluster.other_ca_file().display().to_string();

    let accepted = [
        ("127.0.0.1", "sslmode=disable".to_owned(), "false"),
        ("127.0.0.1", "sslmode=prefer".to_owned(), "true"),
        ("127.0.0.1", "sslmode=require".to_owned(), "true"),
        (
            "localhost",
            format!("sslmode=verify-full&sslrootcert={ca}"),
            "true",
        ),
        // The certificate names localhost only: verify-ca does not compare names.
        (
            "127.0.0.1",
            format!("sslmode=verify-ca&sslrootcert={ca}"),
            "true",
        ),
    ];
    for (host, query, encrypted) in accepted {
        let db = connect(&cluster.url(host, &query)).await.unwrap();
        assert_eq!(db.text_of(ENCRYPTED).await, encrypted, "{host} {query}");
    }

    let refused = [
        (
            "127.0.0.1",
            format!("sslmode=verify-full&sslrootcert={ca}"),
            "not valid for name",
        ),
        (
            "localhost",
            format!("sslmode=verify-full&sslrootcert={other}"),
            "UnknownIssuer",
        ),
        (
            "localhost",
            format!("sslmode=verify-ca&sslrootcert={other}"),
            "UnknownIssuer",
        ),
        // The Mozilla roots do not know the test's CA.
        (
            "localhost",
            "sslmode=verify-full".to_owned(),
            "UnknownIssuer",
        ),
        (
            "localhost",
            "sslmode=sometimes".to_owned(),
            "unknown sslmode",
        ),
    ];
    for (host, query, why) in refused {
        let err = connect(&cluster.url(host, &query)).await.err().unwrap();
        assert!(err.contains(why), "{host} {query}: {err}");
    }

    let url = DatabaseUrl::parse(&cluster.url(
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    ))
    .unwrap();
    let applied = run_migrations(&url).await.unwrap();
    assert!(!applied.is_empty(), "migrated over verify-full");
}
