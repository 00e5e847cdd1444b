//! One agent CLI as a child process in a process group of its own: started with its
//! prompt, its output read line by line, and stopped as a whole (the CLI and whatever
//! it started) with SIGTERM, then SIGKILL.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::Context;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

use super::adapters::{Invocation, Stream};

/// The longest line passed on whole; a longer one arrives in pieces of this size.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// A line the program printed.
#[derive(Debug)]
pub struct Line {
    pub stream: Stream,
    pub text: String,
}

/// A running CLI.
pub struct Process {
    child: Child,
    group: Option<Pid>,
}

/// What the program sees of its task: the variables of its environment.
pub struct Environment<'a> {
    pub task_id: String,
    pub task_title: &'a str,
    pub run_id: String,
    pub workspace: &'a Path,
    /// Whether the worker's credentials stay in its environment (`--pass-credentials`).
    pub pass_credentials: bool,
}

/// The variables that hold a Muster secret: a CLI does not inherit them unless told to
/// (whatever it prints reaches the run's log, and a prompt may be written by anyone who
/// may comment on a task).
const SECRET_VARIABLES: [&str; 4] = [
    "MUSTER_AGENT_SECRET",
    "MUSTER_API_KEY",
    "MUSTER_PASSWORD",
    "MUSTER_TOTP_CODE",
];

impl Process {
    /// Starts `invocation` in `env.workspace`, in a new process group; its stdout and
    /// stderr lines arrive on `lines` (closed when both end).
    pub fn start(
        invocation: &Invocation,
        env: &Environment<'_>,
        lines: mpsc::Sender<Line>,
    ) -> anyhow::Result<Self> {
        let mut command = Command::new(&invocation.program);
        if !env.pass_credentials {
            for name in SECRET_VARIABLES {
                command.env_remove(name);
            }
        }
        command
            .args(&invocation.args)
            .current_dir(env.workspace)
            .env("MUSTER_TASK_ID", &env.task_id)
            .env("MUSTER_TASK_TITLE", env.task_title)
            .env("MUSTER_RUN_ID", &env.run_id)
            .env("MUSTER_WORKSPACE", env.workspace)
            .stdin(if invocation.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own group: a terminal's Ctrl-C reaches the worker alone, and a stop
            // reaches the CLI's own children too.
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .with_context(|| format!("could not start `{}`", invocation.program))?;
        let group = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        if let (Some(text), Some(mut stdin)) = (invocation.stdin.clone(), child.stdin.take()) {
            // A program that never reads its stdin must not hold the run up.
            tokio::spawn(async move {
                let _ = stdin.write_all(text.as_bytes()).await;
                let _ = stdin.shutdown().await;
            });
        }
        if let Some(stdout) = child.stdout.take() {
            tokio::spawn(forward(stdout, Stream::Stdout, lines.clone()));
        }
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(forward(stderr, Stream::Stderr, lines));
        }
        Ok(Self { child, group })
    }

    /// Waits for the program to exit: its exit code, `None` when a signal ended it.
    pub async fn wait(&mut self) -> anyhow::Result<Option<i32>> {
        let status = self
            .child
            .wait()
            .await
            .context("could not wait for the program")?;
        Ok(status.code())
    }

    /// How the program ended, if it already has, without waiting.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Sends `signal` to the whole process group (a group already gone is fine).
    pub fn signal(&self, signal: Signal) {
        if let Some(group) = self.group {
            let _ = killpg(group, signal);
        }
    }

    /// Stops the program: SIGTERM to its group, SIGKILL after `grace` if it has not
    /// exited by then. Its exit code (`None`: ended by a signal).
    pub async fn stop(&mut self, grace: Duration) -> anyhow::Result<Option<i32>> {
        self.signal(Signal::SIGTERM);
        if let Ok(code) = tokio::time::timeout(grace, self.wait()).await {
            self.signal(Signal::SIGKILL);
            return code;
        }
        self.signal(Signal::SIGKILL);
        self.wait().await
    }

    /// After the program exited: kills what it left running in its group, so that
    /// nothing of a run outlives it.
    pub fn reap_group(&self) {
        self.signal(Signal::SIGKILL);
    }
}

/// Reads `from` line by line (lossy UTF-8, without line endings, NUL bytes replaced,
/// long lines split) and sends each line, until the end or until nobody listens.
async fn forward(from: impl AsyncRead + Unpin, stream: Stream, lines: mpsc::Sender<Line>) {
    let mut reader = BufReader::new(from);
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        let Ok(read) = read_line(&mut reader, &mut buffer).await else {
            break;
        };
        if read == 0 {
            break;
        }
        let text = to_text(&buffer);
        if lines.send(Line { stream, text }).await.is_err() {
            break;
        }
    }
}

/// Reads up to and including the next `\n`, at most [`MAX_LINE_BYTES`]; the bytes read.
async fn read_line(
    reader: &mut (impl AsyncBufReadExt + Unpin),
    buffer: &mut Vec<u8>,
) -> std::io::Result<usize> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(buffer.len());
        }
        let room = MAX_LINE_BYTES - buffer.len();
        let window = &available[..available.len().min(room)];
        if let Some(end) = window.iter().position(|&b| b == b'\n') {
            buffer.extend_from_slice(&window[..=end]);
            reader.consume(end + 1);
            return Ok(buffer.len());
        }
        let taken = window.len();
        buffer.extend_from_slice(window);
        reader.consume(taken);
        if buffer.len() >= MAX_LINE_BYTES {
            return Ok(buffer.len());
        }
    }
}

/// A line's bytes as log text: lossy UTF-8, no line ending, no NUL (the log refuses it).
fn to_text(bytes: &[u8]) -> String {
    let mut end = bytes.len();
    while end > 0 && matches!(bytes[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    String::from_utf8_lossy(&bytes[..end]).replace('\0', "\u{fffd}")
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines_of(bytes: &'static [u8]) -> Vec<String> {
        let (tx, mut rx) = mpsc::channel(16);
        tokio::spawn(forward(bytes, Stream::Stdout, tx));
        let mut out = Vec::new();
        while let Some(line) = rx.recv().await {
            out.push(line.text);
        }
        out
    }

    #[tokio::test]
    async fn output_is_read_as_lines_of_text() {
        assert_eq!(
            lines_of(b"one\r\ntwo\n\nthree").await,
            ["one", "two", "", "three"]
        );
        assert_eq!(lines_of(b"a\0b\xff\n").await, ["a\u{fffd}b\u{fffd}"]);
    }

    #[tokio::test]
    async fn a_line_longer_than_the_limit_arrives_in_pieces() {
        let long: &'static [u8] = Box::leak(vec![b'x'; MAX_LINE_BYTES + 10].into_boxed_slice());
        let lines = lines_of(long).await;
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].len(), MAX_LINE_BYTES);
        assert_eq!(lines[1].len(), 10);
    }

    fn shell(script: &str) -> Invocation {
        Invocation {
            program: "sh".to_owned(),
            args: vec!["-c".to_owned(), script.to_owned()],
            stdin: Some("the prompt".to_owned()),
        }
    }

    fn env(dir: &Path) -> Environment<'_> {
        Environment {
            task_id: "t-1".to_owned(),
            task_title: "Title",
            run_id: "r-1".to_owned(),
            workspace: dir,
            pass_credentials: false,
        }
    }

    #[tokio::test]
    async fn the_program_gets_its_prompt_environment_and_workspace() {
        let dir = std::env::temp_dir();
        let (tx, mut rx) = mpsc::channel(16);
        let mut process = Process::start(
            &shell(r#"read p; echo "$p|$MUSTER_TASK_ID|$MUSTER_TASK_TITLE|$MUSTER_RUN_ID"; pwd; echo oops >&2; exit 3"#),
            &env(&dir),
            tx,
        )
        .unwrap();
        assert_eq!(process.wait().await.unwrap(), Some(3));
        let mut got = Vec::new();
        while let Some(line) = rx.recv().await {
            got.push((line.stream, line.text));
        }
        assert!(got.contains(&(Stream::Stdout, "the prompt|t-1|Title|r-1".to_owned())));
        assert!(got.contains(&(Stream::Stderr, "oops".to_owned())));
        let pwd = std::fs::canonicalize(&dir).unwrap();
        assert!(got.iter().any(|(_, text)| Path::new(text) == pwd));
    }

    /// Whether process `pid` is gone or a zombie (killed, not yet reaped by whoever
    /// inherited it).
    fn dead(pid: &str) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        }
    }

    #[tokio::test]
    async fn a_stop_ends_the_whole_group_and_kills_what_ignores_sigterm() {
        let dir = std::env::temp_dir();
        let (tx, mut rx) = mpsc::channel(16);
        // A shell that ignores SIGTERM, and a grandchild sleeping in the same group.
        let mut process = Process::start(
            &shell("trap '' TERM; sleep 30 & echo $!; sleep 30; wait"),
            &env(&dir),
            tx,
        )
        .unwrap();
        let grandchild = rx.recv().await.unwrap().text;
        assert!(!dead(&grandchild));
        let started = std::time::Instant::now();
        let code = process.stop(Duration::from_millis(300)).await.unwrap();
        assert_eq!(code, None, "killed by a signal");
        assert!(started.elapsed() < Duration::from_secs(10));
        let mut gone = false;
        for _ in 0..100 {
            if dead(&grandchild) {
                gone = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(gone, "the CLI's child outlived the stop");
    }
}
