//! Workspaces against a real git repository in a temporary directory.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

use uuid::Uuid;

use super::Workspaces;

/// A unique directory under the system's temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        let path = std::env::temp_dir().join(format!("muster-workspace-test-{}", Uuid::now_v7()));
        std::fs::create_dir_all(&path).unwrap();
        Self(std::fs::canonicalize(path).unwrap())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs git in `dir`, asserting success; its stdout, trimmed.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// A repository with one commit, `README` holding `hello`.
fn repository(temp: &TempDir) -> PathBuf {
    let repo = temp.0.join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["config", "user.name", "Test"]);
    git(&repo, &["config", "user.email", "test@example.com"]);
    git(&repo, &["config", "commit.gpgsign", "false"]);
    std::fs::write(repo.join("README"), "hello\n").unwrap();
    git(&repo, &["add", "README"]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    repo
}

/// Commits a new file `name` in the worktree `dir`; the commit's id.
fn commit_file(dir: &Path, name: &str) -> String {
    std::fs::write(dir.join(name), "work\n").unwrap();
    git(dir, &["add", name]);
    git(dir, &["commit", "-q", "-m", name]);
    git(dir, &["rev-parse", "HEAD"])
}

fn worktrees(repo: &Path) -> String {
    git(repo, &["worktree", "list", "--porcelain"])
}

#[tokio::test]
async fn without_a_repository_each_run_gets_an_empty_folder() {
    let temp = TempDir::new();
    // A root that does not exist yet is made.
    let root = temp.0.join("a").join("root");
    let workspaces = Workspaces::new(root.clone(), None).unwrap();
    let (task, run) = (Uuid::now_v7(), Uuid::now_v7());

    let workspace = workspaces.prepare(task, run).await.unwrap();
    assert_eq!(
        workspace.path,
        root.join(task.to_string()).join(run.to_string())
    );
    assert!(workspace.path.is_dir());
    assert_eq!(std::fs::read_dir(&workspace.path).unwrap().count(), 0);
    assert_eq!(workspace.branch(), None);

    // The same run twice is refused: a workspace is always fresh.
    assert!(workspaces.prepare(task, run).await.is_err());

    std::fs::write(workspace.path.join("out.txt"), "x").unwrap();
    let path = workspace.path.clone();
    workspace.remove().await.unwrap();
    assert!(!path.exists());
    // The emptied task folder goes too.
    assert!(!root.join(task.to_string()).exists());
}

#[tokio::test]
async fn with_a_repository_a_run_gets_a_worktree_on_the_task_branch() {
    let temp = TempDir::new();
    let repo = repository(&temp);
    let workspaces = Workspaces::new(temp.0.join("root"), Some(repo.clone())).unwrap();
    let (task, run) = (Uuid::now_v7(), Uuid::now_v7());

    let workspace = workspaces.prepare(task, run).await.unwrap();
    let branch = format!("muster/{task}");
    assert_eq!(workspace.branch(), Some(branch.as_str()));
    assert_eq!(
        workspace.path,
        temp.0
            .join("root")
            .join(task.to_string())
            .join(run.to_string())
    );
    assert_eq!(
        std::fs::read_to_string(workspace.path.join("README")).unwrap(),
        "hello\n"
    );
    assert_eq!(git(&workspace.path, &["branch", "--show-current"]), branch);
    assert_eq!(
        git(&workspace.path, &["rev-parse", "HEAD"]),
        git(&repo, &["rev-parse", "HEAD"])
    );
    assert!(worktrees(&repo).contains(&format!("worktree {}", workspace.path.display())));
    // The repository's own checkout is untouched.
    assert_ne!(git(&repo, &["branch", "--show-current"]), branch);
}

#[tokio::test]
async fn a_later_attempt_continues_from_the_earlier_commits() {
    let temp = TempDir::new();
    let repo = repository(&temp);
    let workspaces = Workspaces::new(temp.0.join("root"), Some(repo.clone())).unwrap();
    let task = Uuid::now_v7();

    let first = workspaces.prepare(task, Uuid::now_v7()).await.unwrap();
    let commit = commit_file(&first.path, "attempt-1");
    // The failed attempt's worktree is kept, with the branch still checked out in it.
    let kept = first.keep();

    let second = workspaces.prepare(task, Uuid::now_v7()).await.unwrap();
    assert_ne!(second.path, kept);
    assert_eq!(
        git(&second.path, &["branch", "--show-current"]),
        format!("muster/{task}")
    );
    assert_eq!(git(&second.path, &["rev-parse", "HEAD"]), commit);
    assert!(second.path.join("attempt-1").is_file());
    assert!(kept.join("attempt-1").is_file());

    // Another task starts from HEAD, not from this task's branch.
    let other = workspaces
        .prepare(Uuid::now_v7(), Uuid::now_v7())
        .await
        .unwrap();
    assert!(!other.path.join("attempt-1").exists());
}

#[tokio::test]
async fn remove_drops_the_worktree_but_keeps_the_branch() {
    let temp = TempDir::new();
    let repo = repository(&temp);
    let workspaces = Workspaces::new(temp.0.join("root"), Some(repo.clone())).unwrap();
    let task = Uuid::now_v7();

    let workspace = workspaces.prepare(task, Uuid::now_v7()).await.unwrap();
    let commit = commit_file(&workspace.path, "done");
    // Uncommitted leftovers do not stop the removal.
    std::fs::write(workspace.path.join("scratch"), "tmp").unwrap();
    std::fs::write(workspace.path.join("README"), "changed\n").unwrap();
    let path = workspace.path.clone();
    workspace.remove().await.unwrap();

    assert!(!path.exists());
    assert!(!worktrees(&repo).contains(&path.display().to_string()));
    assert_eq!(
        git(&repo, &["rev-parse", &format!("refs/heads/muster/{task}")]),
        commit
    );

    // A removed workspace whose folder someone deleted first is pruned instead.
    let workspace = workspaces.prepare(task, Uuid::now_v7()).await.unwrap();
    let path = workspace.path.clone();
    std::fs::remove_dir_all(&path).unwrap();
    workspace.remove().await.unwrap();
    assert!(!worktrees(&repo).contains(&path.display().to_string()));
}

#[tokio::test]
async fn keep_leaves_the_workspace_as_it_is() {
    let temp = TempDir::new();
    let repo = repository(&temp);
    let workspaces = Workspaces::new(temp.0.join("root"), Some(repo.clone())).unwrap();

    let workspace = workspaces
        .prepare(Uuid::now_v7(), Uuid::now_v7())
        .await
        .unwrap();
    std::fs::write(workspace.path.join("half-done"), "x").unwrap();
    let expected = workspace.path.clone();
    let kept = workspace.keep();
    assert_eq!(kept, expected);
    assert!(kept.join("half-done").is_file());
    assert!(worktrees(&repo).contains(&format!("worktree {}", kept.display())));

    let plain = Workspaces::new(temp.0.join("plain"), None).unwrap();
    let kept = plain
        .prepare(Uuid::now_v7(), Uuid::now_v7())
        .await
        .unwrap()
        .keep();
    assert!(kept.is_dir());
}

#[test]
fn new_refuses_what_is_not_a_repository() {
    let temp = TempDir::new();
    let folder = temp.0.join("folder");
    std::fs::create_dir(&folder).unwrap();

    let err = Workspaces::new(temp.0.join("root"), Some(folder.clone())).unwrap_err();
    let message = format!("{err:#}");
    assert!(message.contains("is not a git repository"), "{message}");
    assert!(message.contains(&folder.display().to_string()), "{message}");

    let missing = temp.0.join("missing");
    let message = format!(
        "{:#}",
        Workspaces::new(temp.0.join("root"), Some(missing)).unwrap_err()
    );
    assert!(message.contains("no such directory"), "{message}");

    let empty = temp.0.join("empty");
    std::fs::create_dir(&empty).unwrap();
    git(&empty, &["init", "-q"]);
    let message = format!(
        "{:#}",
        Workspaces::new(temp.0.join("root"), Some(empty)).unwrap_err()
    );
    assert!(message.contains("has no commit yet"), "{message}");
}

#[test]
fn the_default_root_is_a_cache_folder() {
    let root = Workspaces::default_root();
    assert!(
        root.ends_with("muster/worker") || root.ends_with("muster-worker"),
        "{}",
        root.display()
    );
}
