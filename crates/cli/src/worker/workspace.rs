//! A fresh working directory for each run: `<root>/<task id>/<run id>`, an empty folder,
//! or with `--repo` a git worktree of that repository on the task's own branch
//! `muster/<task id>`.
//!
//! The first attempt at a task branches from the repository's `HEAD`; a later attempt
//! checks out the same branch again and so continues from the commits of the earlier
//! ones (not from their uncommitted changes). A successful run's workspace is removed
//! (the branch and its commits stay, for review); a failed run's is kept as it is, for
//! a person to look into.

use std::ffi::OsStr;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::Arc;

use anyhow::{Context as _, bail};
use tokio::sync::Mutex;
use uuid::Uuid;

#[cfg(test)]
mod tests;

/// Where the worker makes its runs' workspaces.
#[derive(Debug)]
pub struct Workspaces {
    root: PathBuf,
    repo: Option<Arc<Repo>>,
}

/// The `--repo` repository.
#[derive(Debug)]
struct Repo {
    path: PathBuf,
    /// Held around each `git worktree` command: concurrent runs would otherwise race
    /// for the repository's lock files and fail now and then.
    lock: Mutex<()>,
}

/// One run's working directory.
#[derive(Debug)]
pub struct Workspace {
    /// The directory (absolute).
    pub path: PathBuf,
    branch: Option<String>,
    repo: Option<Arc<Repo>>,
}

impl Workspaces {
    /// root: `--workspace-root` (created if missing); repo: `--repo` (must be a git
    /// repository with at least one commit: checked here, with a clear error otherwise).
    #[allow(clippy::needless_pass_by_value)] // owned: the worker hands over its parsed arguments
    pub fn new(root: PathBuf, repo: Option<PathBuf>) -> anyhow::Result<Self> {
        std::fs::create_dir_all(&root)
            .with_context(|| format!("cannot create the workspace root {}", root.display()))?;
        // Absolute, because git reads a worktree's path relative to the repository.
        let root = std::fs::canonicalize(&root)
            .with_context(|| format!("cannot read the workspace root {}", root.display()))?;
        let repo = match repo {
            None => None,
            Some(path) => Some(Arc::new(Repo {
                path: check_repository(&path)?,
                lock: Mutex::new(()),
            })),
        };
        Ok(Self { root, repo })
    }

    /// Default root when `--workspace-root` is not given: `$XDG_CACHE_HOME/muster/worker`
    /// or `~/.cache/muster/worker`, else the temp dir's `muster-worker`.
    pub fn default_root() -> PathBuf {
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|home| PathBuf::from(home).join(".cache"))
            });
        match cache {
            Some(cache) => cache.join("muster").join("worker"),
            None => std::env::temp_dir().join("muster-worker"),
        }
    }

    /// The root, absolute.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Makes `<root>/<task id>/<run id>`: an empty folder, or a worktree on branch
    /// `muster/<task id>` (new from `HEAD` the first time, else the existing branch, even
    /// when a kept workspace of a failed attempt has it checked out).
    pub async fn prepare(&self, task_id: Uuid, run_id: Uuid) -> anyhow::Result<Workspace> {
        let parent = self.root.join(task_id.to_string());
        let path = parent.join(run_id.to_string());
        tokio::fs::create_dir_all(&parent)
            .await
            .with_context(|| format!("cannot create {}", parent.display()))?;
        let Some(repo) = &self.repo else {
            // `create_dir`, not `_all`: a folder that already exists is not fresh.
            tokio::fs::create_dir(&path)
                .await
                .with_context(|| format!("cannot create the workspace {}", path.display()))?;
            return Ok(Workspace {
                path,
                branch: None,
                repo: None,
            });
        };
        let branch = format!("muster/{task_id}");
        let _guard = repo.lock.lock().await;
        if repo.has_branch(&branch).await? {
            repo.git(&[
                "worktree".as_ref(),
                "add".as_ref(),
                "--force".as_ref(),
                path.as_os_str(),
                branch.as_ref(),
            ])
            .await?;
        } else {
            repo.git(&[
                "worktree".as_ref(),
                "add".as_ref(),
                "-b".as_ref(),
                branch.as_ref(),
                path.as_os_str(),
            ])
            .await?;
        }
        Ok(Workspace {
            path,
            branch: Some(branch),
            repo: Some(Arc::clone(repo)),
        })
    }
}

impl Workspace {
    /// The branch checked out in it (`muster/<task id>`), for a worktree.
    pub fn branch(&self) -> Option<&str> {
        self.branch.as_deref()
    }

    /// After a successful run: removes the folder (and, for a git worktree, the worktree
    /// registration; the branch and its commits stay).
    pub async fn remove(self) -> anyhow::Result<()> {
        if let Some(repo) = &self.repo {
            let _guard = repo.lock.lock().await;
            if tokio::fs::try_exists(&self.path).await.unwrap_or(true) {
                // `--force`: the run may have left changes or untracked files behind.
                repo.git(&[
                    "worktree".as_ref(),
                    "remove".as_ref(),
                    "--force".as_ref(),
                    self.path.as_os_str(),
                ])
                .await?;
            } else {
                // Someone deleted the folder already: forget its registration.
                repo.git(&["worktree".as_ref(), "prune".as_ref()]).await?;
            }
        }
        match tokio::fs::remove_dir_all(&self.path).await {
            Ok(()) => {}
            Err(err) if err.kind() == ErrorKind::NotFound => {}
            Err(err) => {
                return Err(err).with_context(|| {
                    format!("cannot remove the workspace {}", self.path.display())
                });
            }
        }
        // The task's folder too, once empty; it is not while a failed attempt's workspace
        // is kept in it, and that refusal is expected.
        if let Some(parent) = self.path.parent() {
            let _ = tokio::fs::remove_dir(parent).await;
        }
        Ok(())
    }

    /// After a failed run: leaves it as it is; returns the path (the worker writes it
    /// into the run log).
    pub fn keep(self) -> PathBuf {
        self.path
    }
}

/// The absolute path of `path` when it is a git repository with a commit.
fn check_repository(path: &Path) -> anyhow::Result<PathBuf> {
    let absolute = std::fs::canonicalize(path)
        .with_context(|| format!("--repo {}: no such directory", path.display()))?;
    if !absolute.is_dir() {
        bail!("--repo {}: not a directory", path.display());
    }
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(&absolute)
        .args(["rev-parse", "--git-dir"])
        .stdin(Stdio::null())
        .output()
        .context("cannot run git (is it installed and on PATH?)")?;
    if !output.status.success() {
        bail!(
            "--repo {} is not a git repository: {}",
            path.display(),
            stderr(&output)
        );
    }
    let head = std::process::Command::new("git")
        .arg("-C")
        .arg(&absolute)
        .args(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
        .stdin(Stdio::null())
        .output()
        .context("cannot run git")?;
    if !head.status.success() {
        bail!(
            "--repo {} has no commit yet: a worktree starts from one",
            path.display()
        );
    }
    Ok(absolute)
}

impl Repo {
    /// Runs `git -C <repo> args…`; an exit other than 0 is an error carrying git's stderr.
    async fn git(&self, args: &[&OsStr]) -> anyhow::Result<()> {
        let output = self.run(args).await?;
        if !output.status.success() {
            bail!(
                "`git {}` in {} failed ({}): {}",
                show(args),
                self.path.display(),
                output.status,
                stderr(&output)
            );
        }
        Ok(())
    }

    async fn has_branch(&self, branch: &str) -> anyhow::Result<bool> {
        let reference = format!("refs/heads/{branch}");
        let args: [&OsStr; 4] = [
            "show-ref".as_ref(),
            "--verify".as_ref(),
            "--quiet".as_ref(),
            reference.as_ref(),
        ];
        let output = self.run(&args).await?;
        match output.status.code() {
            Some(0) => Ok(true),
            Some(1) => Ok(false),
            _ => bail!(
                "`git {}` in {} failed ({}): {}",
                show(&args),
                self.path.display(),
                output.status,
                stderr(&output)
            ),
        }
    }

    async fn run(&self, args: &[&OsStr]) -> anyhow::Result<Output> {
        tokio::process::Command::new("git")
            .arg("-C")
            .arg(&self.path)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .await
            .with_context(|| format!("cannot run `git {}`", show(args)))
    }
}

fn show(args: &[&OsStr]) -> String {
    args.iter()
        .map(|arg| arg.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

fn stderr(output: &Output) -> String {
    let text = String::from_utf8_lossy(&output.stderr).trim().to_owned();
    if text.is_empty() {
        "(git printed nothing)".to_owned()
    } else {
        text
    }
}
