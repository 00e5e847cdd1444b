//! `muster task|agent|events` against a live server: credentials from the environment
//! or a profile, tables and `--json`, and the API's message on a refusal.

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::shutdown::{Server, start_with};
use crate::{Scratch, assert_one_clear_error, muster, stderr};

/// A bootstrapped server and its HR agent's credentials.
struct Live {
    scratch: Scratch,
    server: Server,
    agent_id: String,
    secret: String,
}

fn live() -> Live {
    live_with(&[])
}

/// [`live`], bootstrapped with `extra` arguments.
fn live_with(extra: &[&str]) -> Live {
    let scratch = Scratch::new();
    let out = muster()
        .args([
            "bootstrap",
            "--org-name",
            "Acme",
            "--admin-email",
            "admin@example.com",
        ])
        .args(["--database-url", &scratch.sqlite_url()])
        .args(extra)
        .env("MUSTER_ADMIN_PASSWORD", "a good long password")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let org: Value = serde_json::from_slice(&out.stdout).unwrap();
    let server = start_with(&scratch, &[], Stdio::null());
    Live {
        agent_id: org["hrAgent"]["agentId"].as_str().unwrap().to_owned(),
        secret: org["hrAgent"]["secret"].as_str().unwrap().to_owned(),
        scratch,
        server,
    }
}

impl Live {
    /// `muster <args>` as the HR agent, credentials in the environment.
    fn muster(&self, args: &[&str]) -> Command {
        let mut cmd = self.anonymous(args);
        cmd.env("MUSTER_AGENT_ID", &self.agent_id)
            .env("MUSTER_AGENT_SECRET", &self.secret);
        cmd
    }

    /// `muster <args>` with the server named but no credentials (and no config file).
    fn anonymous(&self, args: &[&str]) -> Command {
        let mut cmd = muster();
        cmd.args(args)
            .env(
                "MUSTER_SERVER",
                format!("http://127.0.0.1:{}", self.server.port),
            )
            .env("XDG_CONFIG_HOME", self.scratch.0.join("config"))
            .env_remove("MUSTER_AGENT_ID")
            .env_remove("MUSTER_AGENT_SECRET")
            .env_remove("MUSTER_API_KEY")
            .env_remove("MUSTER_EMAIL")
            .env_remove("MUSTER_PASSWORD")
            .env_remove("MUSTER_ORG_ID")
            .env_remove("MUSTER_TOTP_CODE")
            .env_remove("MUSTER_PROFILE")
            .env_remove("MUSTER_CONFIG");
        cmd
    }

    fn ok(&self, args: &[&str]) -> String {
        succeeded(&self.muster(args).output().unwrap())
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut with_json = args.to_vec();
        with_json.push("--json");
        serde_json::from_str(&self.ok(&with_json)).unwrap()
    }
}

fn succeeded(out: &Output) -> String {
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(out));
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn task_commands_run_an_agents_whole_loop() {
    let live = live();
    let created = live.json(&[
        "task",
        "create",
        "Write the docs",
        "--priority",
        "high",
        "--tag",
        "docs",
    ]);
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["status"], "todo");
    assert_eq!(created["priority"], "high");
    assert_eq!(created["tags"], serde_json::json!(["docs"]));

    let table = live.ok(&["task", "list"]);
    let mut lines = table.lines();
    assert_eq!(
        lines.next().unwrap().split_whitespace().collect::<Vec<_>>(),
        ["ID", "STATUS", "PRIORITY", "ASSIGNEE", "TITLE"]
    );
    let row = lines.next().unwrap();
    assert!(
        row.starts_with(&id) && row.contains("todo") && row.ends_with("Write the docs"),
        "{table}"
    );
    assert_eq!(
        live.json(&["task", "list", "--status", "done"])["data"],
        serde_json::json!([])
    );

    // Pages: a table ends with the cursor of the next page, which gets it.
    let other = live.json(&["task", "create", "Second"]);
    let first = live.ok(&["task", "list", "--limit", "1"]);
    let cursor = first.lines().last().unwrap();
    let cursor = cursor
        .strip_prefix("(more: --cursor ")
        .unwrap()
        .trim_end_matches(')');
    let second = live.ok(&["task", "list", "--limit", "1", "--cursor", cursor]);
    assert_eq!(second.lines().count(), 2, "{second}");
    assert_ne!(
        first.lines().nth(1),
        second.lines().nth(1),
        "{first}{second}"
    );
    let other = other["id"].as_str().unwrap();
    assert_eq!(
        live.json(&["task", "move", other, "cancelled"])["status"],
        "cancelled"
    );

    let shown = live.ok(&["task", "show", &id]);
    assert!(
        shown.contains("title:") && shown.contains("Write the docs"),
        "{shown}"
    );

    let claimed = live.json(&["task", "claim"]);
    assert_eq!(claimed["id"], id.as_str());
    assert_eq!(claimed["status"], "in_progress");
    assert_eq!(live.ok(&["task", "claim"]).trim(), "no task to claim");

    let comment = live.ok(&["task", "comment", &id, "on it"]);
    assert!(
        comment.trim().ends_with(&format!("on task {id}")),
        "{comment}"
    );
    let moved = live.json(&["task", "move", &id, "done", "--reason", "shipped"]);
    assert_eq!(moved["status"], "done");
}

#[test]
fn a_treasury_funded_at_bootstrap_pays_the_rewards_people_set() {
    let live = live_with(&["--treasury", "100"]);
    let as_admin = |args: &[&str]| {
        let out = live
            .anonymous(args)
            .env("MUSTER_EMAIL", "admin@example.com")
            .env("MUSTER_PASSWORD", "a good long password")
            .output()
            .unwrap();
        serde_json::from_str::<Value>(&succeeded(&out)).unwrap()
    };
    let task = as_admin(&[
        "task",
        "create",
        "Paid by the treasury",
        "--reward",
        "30",
        "--json",
    ]);
    assert_eq!(task["reward"], 30, "{task}");
    assert_eq!(task["rewardPayer"]["kind"], "treasury", "{task}");
    // The HR agent holds no credits: a reward it names is refused, and nothing is made.
    let out = live
        .muster(&["task", "create", "Paid by HR", "--reward", "5"])
        .output()
        .unwrap();
    assert_one_clear_error(
        &out,
        "Insufficient balance: 0 credits available, 5 needed (409)",
    );
    let shown = live.ok(&["task", "show", task["id"].as_str().unwrap()]);
    assert!(shown.contains("30 from treasury"), "{shown}");
    // Out of range is refused before anything is sent.
    let out = live
        .muster(&["task", "create", "Too dear", "--reward", "1000000001"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_eq!(
        live.json(&["task", "list"])["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn agent_commands_register_list_and_show() {
    let live = live();
    let created = live.json(&[
        "agent",
        "register",
        "builder-9",
        "Builder Nine",
        "--capability",
        "rust:expert",
        "--level",
        "3",
    ]);
    let secret = created["secret"].as_str().unwrap();
    assert_eq!(secret.len(), 64, "{created}");
    let uuid = created["data"]["id"].as_str().unwrap().to_owned();
    assert_eq!(created["data"]["agentId"], "builder-9");

    let table = live.ok(&["agent", "list"]);
    assert!(
        table
            .lines()
            .any(|l| l.starts_with(&uuid) && l.contains("builder-9")),
        "{table}"
    );
    let shown = live.ok(&["agent", "show", &uuid]);
    assert!(shown.contains("Builder Nine"), "{shown}");
    // Without --json the secret is printed once, labelled.
    let text = live.ok(&["agent", "register", "builder-10", "Builder Ten"]);
    assert!(
        text.lines()
            .any(|l| l.starts_with("secret: ") && l.len() == "secret: ".len() + 64),
        "{text}"
    );
}

#[test]
fn a_profile_of_the_config_file_names_the_server_and_the_agent() {
    let live = live();
    let config = live.scratch.0.join("muster.toml");
    std::fs::write(
        &config,
        format!(
            "default = \"local\"\n[profiles.local]\nserver = \"http://127.0.0.1:{}\"\nagent_id = \"{}\"\nagent_secret = \"{}\"\n",
            live.server.port, live.agent_id, live.secret
        ),
    )
    .unwrap();
    let out = muster()
        .args(["task", "create", "From a profile", "--json", "--config"])
        .arg(&config)
        .env_remove("MUSTER_SERVER")
        .env_remove("MUSTER_AGENT_ID")
        .env_remove("MUSTER_API_KEY")
        .env_remove("MUSTER_EMAIL")
        .output()
        .unwrap();
    let task: Value = serde_json::from_str(&succeeded(&out)).unwrap();
    assert_eq!(task["title"], "From a profile");

    let out = live
        .anonymous(&["task", "list", "--profile", "staging", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_one_clear_error(&out, "has no profile staging");
    std::fs::write(&config, "[profiles.local]\nsevrer = \"typo\"\n").unwrap();
    let out = live
        .anonymous(&["task", "list", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_one_clear_error(
        &out,
        "is not a valid config file: line 2: unknown field `sevrer`",
    );
}

#[test]
fn refusals_print_the_apis_message_and_exit_non_zero() {
    let live = live();
    let missing = uuid::Uuid::now_v7().to_string();
    let out = live.muster(&["task", "show", &missing]).output().unwrap();
    assert_one_clear_error(&out, "(404)");
    let out = live
        .muster(&["task", "create", &"x".repeat(256)])
        .output()
        .unwrap();
    assert_one_clear_error(&out, "title must be at most 255 characters (400)");
    let out = live
        .anonymous(&["task", "list"])
        .env("MUSTER_AGENT_ID", &live.agent_id)
        .env("MUSTER_AGENT_SECRET", "0".repeat(64))
        .output()
        .unwrap();
    assert_one_clear_error(&out, "(401)");
    let out = live.anonymous(&["task", "list"]).output().unwrap();
    assert_one_clear_error(&out, "no credentials");
    // A status that is not one of the API's is refused before anything is sent.
    let out = live
        .muster(&["task", "list", "--status", "finished"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("unknown variant `finished`"),
        "{}",
        stderr(&out)
    );
    // Nothing above created anything.
    assert_eq!(live.json(&["task", "list"])["data"], serde_json::json!([]));
}

#[test]
fn a_user_signs_in_with_email_and_password_from_the_environment() {
    let live = live();
    let task = live.json(&["task", "create", "Seen by the admin"]);
    let as_user = |password: &str| {
        live.anonymous(&["task", "list", "--json"])
            .env("MUSTER_EMAIL", "admin@example.com")
            .env("MUSTER_PASSWORD", password)
            .output()
            .unwrap()
    };
    let listed: Value = serde_json::from_str(&succeeded(&as_user("a good long password"))).unwrap();
    assert_eq!(listed["data"][0]["id"], task["id"], "{listed}");
    let out = as_user("not the password");
    assert_one_clear_error(&out, "(401)");
    // An e-mail without a password is refused before anything is sent.
    let out = live
        .anonymous(&["task", "list"])
        .env("MUSTER_EMAIL", "admin@example.com")
        .output()
        .unwrap();
    assert_one_clear_error(&out, "has no password");
}

#[test]
fn events_tail_prints_events_as_they_happen() {
    let live = live();
    let mut tail = live
        .muster(&["events", "tail", "--type", "task.created", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = tail.stdout.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if lines.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    // The stream starts with what is recorded after it opens: create until one shows.
    let mut created = Vec::new();
    let event: Value = loop {
        created.push(
            live.json(&["task", "create", "Watched"])["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
        if let Ok(line) = received.recv_timeout(Duration::from_millis(500)) {
            break serde_json::from_str(&line).unwrap();
        }
        assert!(created.len() < 20, "no event reached the tail");
    };
    let _ = tail.kill();
    let _ = tail.wait();
    assert_eq!(event["type"], "task.created");
    assert!(
        created.iter().any(|id| event["entityId"] == id.as_str()),
        "{event}"
    );
}

#[test]
fn run_log_follow_prints_lines_as_they_come_and_ends_with_the_run() {
    use std::io::Read;

    let live = live();
    let task = live.json(&["task", "create", "Followed"])["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(live.json(&["task", "claim"])["id"], task.as_str());
    let run = live.json(&["run", "start", &task])["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // The run's agent appends lines as a worker does (the CLI has no command for it).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let base = format!("http://127.0.0.1:{}", live.server.port);
    let client = muster_client::Client::agent(&base, &live.agent_id, &live.secret).unwrap();
    let run_id: uuid::Uuid = run.parse().unwrap();
    let append = |text: &str| {
        let body = muster_client::types::runs::LogBody {
            lines: vec![muster_client::types::runs::LogLineBody {
                stream: "stdout".to_owned(),
                text: text.to_owned(),
            }],
        };
        runtime
            .block_on(client.append_run_log(run_id, &body))
            .unwrap();
    };
    append("before the follow");

    let mut follow = live
        .muster(&["run", "log", &run, "--follow"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = follow.stdout.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if lines.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let within = Duration::from_secs(15);
    assert_eq!(
        received.recv_timeout(within).unwrap(),
        "stdout before the follow"
    );
    append("while following");
    assert_eq!(
        received.recv_timeout(within).unwrap(),
        "stdout while following"
    );
    live.ok(&["run", "finish", &run, "--status", "succeeded"]);
    // It exits by itself once the run ended, having printed nothing more.
    let deadline = std::time::Instant::now() + within;
    let status = loop {
        if let Some(status) = follow.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = follow.kill();
            panic!("`run log --follow` did not exit when the run ended");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut errors = String::new();
    follow
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut errors)
        .unwrap();
    assert!(status.success(), "{status:?}: {errors}");
    assert_eq!(errors.trim(), format!("run {run}: succeeded"));
    assert!(
        received.recv_timeout(Duration::from_secs(5)).is_err(),
        "no line after the run ended"
    );
}

/// `muster mcp` with `lines` on stdin (then closed): its stdout, one answer per line.
fn mcp_session(cmd: &mut Command, lines: &[Value]) -> Vec<Value> {
    use std::io::Write;
    let mut child = cmd
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn mcp_over_stdio_relays_an_agents_session_to_the_server() {
    let live = live();
    let request = |id: u64, method: &str, params: Value| serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let answers = mcp_session(
        &mut live.muster(&[]),
        &[
            request(
                1,
                "initialize",
                serde_json::json!({
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "stdio-test", "version": "1"}
                }),
            ),
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            request(2, "tools/list", serde_json::json!({})),
            request(
                3,
                "tools/call",
                serde_json::json!({"name": "create_task", "arguments": {"title": "Over stdio"}}),
            ),
            request(
                4,
                "tools/call",
                serde_json::json!({"name": "claim_task", "arguments": {}}),
            ),
        ],
    );
    // One answer per request, none for the notification, in order.
    let ids: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
    assert_eq!(ids, [1, 2, 3, 4], "{answers:?}");
    assert_eq!(answers[0]["result"]["serverInfo"]["name"], "muster");
    let tools = answers[1]["result"]["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "claim_task"), "{tools:?}");
    // The run tools are the server's catalog too.
    for name in [
        "start_run",
        "append_run_log",
        "report_usage",
        "finish_run",
        "get_run",
    ] {
        assert!(tools.iter().any(|t| t["name"] == name), "{name}: {tools:?}");
    }
    let created = &answers[2]["result"]["structuredContent"]["data"];
    assert_eq!(created["title"], "Over stdio");
    assert_eq!(
        answers[3]["result"]["structuredContent"]["data"]["id"],
        created["id"]
    );

    // Credentials the server refuses: each request still gets an answer, saying why.
    let mut forged = live.anonymous(&[]);
    forged
        .env("MUSTER_AGENT_ID", &live.agent_id)
        .env("MUSTER_AGENT_SECRET", "0".repeat(64));
    let answers = mcp_session(&mut forged, &[request(9, "ping", serde_json::json!({}))]);
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], 9);
    assert!(
        answers[0]["error"]["message"]
            .as_str()
            .unwrap()
            .ends_with("(401)"),
        "{answers:?}"
    );
}

#[test]
fn project_commands_group_tasks_and_show_their_progress() {
    let live = live();
    let project = live.json(&[
        "project",
        "create",
        "Launch",
        "--goal",
        "Ten customers",
        "--due",
        "2027-01-31",
    ]);
    let id = project["id"].as_str().unwrap().to_owned();
    assert_eq!(project["status"], "active");
    assert_eq!(project["dueAt"], "2027-01-31T00:00:00.000Z");
    let task = live.json(&["task", "create", "Inside", "--project", &id]);
    assert_eq!(task["projectId"], id.as_str());
    live.ok(&["task", "create", "Outside"]);
    let listed = live.json(&["task", "list", "--project", &id]);
    assert_eq!(listed["data"].as_array().map(Vec::len), Some(1), "{listed}");

    let shown = live.ok(&["project", "show", &id]);
    assert!(shown.contains("Ten customers"), "{shown}");
    assert!(shown.contains("0% done (0 of 1 tasks, 1 open)"), "{shown}");
    let table = live.ok(&["project", "list"]);
    assert!(table.starts_with("ID"), "{table}");
    assert!(table.contains(&id) && table.contains("Launch"), "{table}");

    let edited = live.json(&["project", "update", &id, "--name", "Relaunch"]);
    assert_eq!(edited["name"], "Relaunch");
    let archived = live.json(&["project", "archive", &id]);
    assert_eq!(archived["status"], "archived");
    // A refusal: the API's message, one line, exit status 1.
    let out = live
        .muster(&["task", "create", "Late", "--project", &id])
        .output()
        .unwrap();
    assert_one_clear_error(&out, "is archived");
}

#[test]
fn routine_commands_create_run_switch_and_delete_a_routine() {
    let live = live();
    let routine = live.json(&[
        "routine",
        "create",
        "Morning triage",
        "--schedule",
        "0 9 * * MON-FRI",
        "--timezone",
        "Europe/Berlin",
        "--title",
        "Triage new issues",
        "--catch-up",
        "skip",
    ]);
    let id = routine["id"].as_str().unwrap().to_owned();
    assert_eq!(routine["catchUp"], "skip");
    assert_eq!(routine["enabled"], true);
    let shown = live.ok(&["routine", "show", &id]);
    assert!(shown.contains("0 9 * * MON-FRI (Europe/Berlin)"), "{shown}");
    assert!(shown.contains("task \"Triage new issues\""), "{shown}");
    let ran = live.ok(&["routine", "run", &id]);
    assert!(
        ran.starts_with("created task ") && ran.contains("Triage new issues"),
        "{ran}"
    );
    let off = live.json(&["routine", "disable", &id]);
    assert_eq!(
        (off["enabled"].clone(), off["nextRunAt"].clone()),
        (Value::Bool(false), Value::Null)
    );
    let table = live.ok(&["routine", "list"]);
    assert!(table.contains(&id) && table.contains("off"), "{table}");
    let out = live
        .muster(&[
            "routine",
            "create",
            "Bad",
            "--schedule",
            "every day",
            "--title",
            "x",
        ])
        .output()
        .unwrap();
    assert_one_clear_error(&out, "schedule");
    assert_eq!(
        live.ok(&["routine", "delete", &id]).trim(),
        format!("deleted routine {id}")
    );
    let out = live.muster(&["routine", "show", &id]).output().unwrap();
    assert_one_clear_error(&out, "not found");
}
