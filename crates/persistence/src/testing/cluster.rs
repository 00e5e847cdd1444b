//! A throw-away PostgreSQL server for tests that must do to a server what the shared one
//! may not suffer: serve TLS with a certificate the test made, stop and start again.
//!
//! [`Cluster::start`] runs `initdb` and `pg_ctl` (found with `pg_config --bindir`) in a
//! temporary folder on a free loopback port, with `ssl=on` and a certificate for
//! `localhost` signed by a CA it creates with `openssl`. As root the server runs as the
//! `postgres` user. Without these tools it answers `None`, unless `CI` is set: then it
//! fails the test, as the shared-server tests do.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A running throw-away server; stopped and removed on drop.
#[derive(Debug)]
pub struct Cluster {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    as_postgres: bool,
}

/// Fails (in CI) or gives up (elsewhere) with `why`.
#[allow(clippy::panic)] // test support: a panic fails the test
fn unavailable(why: &str) -> Option<Cluster> {
    assert!(
        std::env::var_os("CI").is_none(),
        "cannot start a throw-away PostgreSQL server: {why}"
    );
    None
}

fn run(command: &mut Command) -> Result<Output, String> {
    let shown = format!("{command:?}");
    let out = command.output().map_err(|e| format!("{shown}: {e}"))?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(format!(
            "{shown} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

impl Cluster {
    /// Starts a server: see the module documentation.
    ///
    /// # Panics
    /// When it cannot start and `CI` is set.
    pub fn start() -> Option<Self> {
        match Self::try_start() {
            Ok(cluster) => Some(cluster),
            Err(why) => unavailable(&why),
        }
    }

    fn try_start() -> Result<Self, String> {
        let bindir = run(Command::new("pg_config").arg("--bindir"))?;
        let bin = PathBuf::from(String::from_utf8_lossy(&bindir.stdout).trim());
        let dir = std::env::temp_dir().join(format!("muster-pg-{}", uuid::Uuid::now_v7()));
        std::fs::create_dir_all(dir.join("tls")).map_err(|e| e.to_string())?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        // Root may not run PostgreSQL: then the server runs as `postgres`.
        let uid = run(Command::new("id").arg("-u"))?;
        let as_postgres = String::from_utf8_lossy(&uid.stdout).trim() == "0";
        let cluster = Self {
            dir,
            bin,
            port,
            as_postgres,
        };
        cluster.make_certificates()?;
        if cluster.as_postgres {
            run(Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&cluster.dir))?;
        }
        run(&mut cluster.tool(
            "initdb",
            &[
                "-D",
                &cluster.data().display().to_string(),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
            ],
        ))?;
        cluster.start_again()?;
        Ok(cluster)
    }

    /// A CA, and a certificate for `localhost` (DNS name only) signed by it, in `tls/`.
    fn make_certificates(&self) -> Result<(), String> {
        let tls = self.dir.join("tls");
        let at = |name: &str| tls.join(name).display().to_string();
        run(Command::new("openssl").args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=Muster test CA",
            "-keyout",
            &at("ca.key"),
            "-out",
            &at("ca.pem"),
        ]))?;
        run(Command::new("openssl").args([
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            &at("server.key"),
            "-out",
            &at("server.csr"),
        ]))?;
        std::fs::write(tls.join("san.ext"), "subjectAltName=DNS:localhost\n")
            .map_err(|e| e.to_string())?;
        run(Command::new("openssl").args([
            "x509",
            "-req",
            "-in",
            &at("server.csr"),
            "-CA",
            &at("ca.pem"),
            "-CAkey",
            &at("ca.key"),
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            &at("san.ext"),
            "-out",
            &at("server.pem"),
        ]))?;
        // A second CA that signed nothing here: trusting it alone must fail.
        run(Command::new("openssl").args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=Someone else",
            "-keyout",
            &at("other.key"),
            "-out",
            &at("other-ca.pem"),
        ]))?;
        set_private(&tls.join("server.key"))
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// `bin/name args`, as the `postgres` user when running as root.
    fn tool(&self, name: &str, args: &[&str]) -> Command {
        let program = self.bin.join(name);
        if self.as_postgres {
            let mut command = Command::new("runuser");
            command
                .args(["-u", "postgres", "--"])
                .arg(program)
                .args(args);
            command
        } else {
            let mut command = Command::new(program);
            command.args(args);
            command
        }
    }

    /// Starts the server (again, after [`Cluster::stop`]) and waits until it accepts
    /// connections.
    ///
    /// # Errors
    /// When `pg_ctl start` fails.
    pub fn start_again(&self) -> Result<(), String> {
        let tls = self.dir.join("tls");
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} -c ssl=on \
             -c ssl_cert_file={} -c ssl_key_file={} -c fsync=off",
            self.port,
            self.dir.display(),
            tls.join("server.pem").display(),
            tls.join("server.key").display(),
        );
        let log = self.dir.join("server.log").display().to_string();
        let data = self.data().display().to_string();
        run(&mut self.tool(
            "pg_ctl",
            &["-D", &data, "-l", &log, "-o", &options, "-w", "start"],
        ))
        .map(|_| ())
    }

    /// Stops the server at once (open connections break).
    ///
    /// # Errors
    /// When `pg_ctl stop` fails.
    pub fn stop(&self) -> Result<(), String> {
        let data = self.data().display().to_string();
        run(&mut self.tool("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"])).map(|_| ())
    }

    /// `postgres://postgres@HOST:PORT/postgres?QUERY`.
    pub fn url(&self, host: &str, query: &str) -> String {
        format!("postgres://postgres@{host}:{}/postgres?{query}", self.port)
    }

    /// The CA that signed the server's certificate (PEM).
    pub fn ca_file(&self) -> PathBuf {
        self.dir.join("tls/ca.pem")
    }

    /// A CA that signed nothing the server shows (PEM).
    pub fn other_ca_file(&self) -> PathBuf {
        self.dir.join("tls/other-ca.pem")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// PostgreSQL refuses a private key that others may read.
fn set_private(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| e.to_string())
}
