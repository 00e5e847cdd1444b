//! Running the programs the tasks are made of: cargo, and the steps of a check.

use std::process::Command;

/// The cargo that runs this xtask (`CARGO`, which cargo sets), else the one on `PATH`.
pub fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// `cargo` with `args`, run to its end as a step of a check.
pub fn run_cargo(args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
    run(
        Command::new(cargo()).args(args).envs(env.iter().copied()),
        &format!("cargo {}", args.join(" ")),
    )
}

/// Runs `command` to its end, announced and reported as `shown`; fails unless it exits 0.
pub fn run(command: &mut Command, shown: &str) -> Result<(), String> {
    eprintln!("xtask: {shown}");
    let status = command
        .status()
        .map_err(|e| format!("cannot run `{shown}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{shown}` failed ({status})"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_that_exits_0_passes() {
        assert_eq!(run(&mut Command::new("true"), "true"), Ok(()));
    }

    #[test]
    fn a_failing_step_is_reported_with_its_status() {
        let error = run(&mut Command::new("false"), "false").unwrap_err();
        assert!(error.starts_with("`false` failed ("), "{error}");
        assert!(error.contains("exit status: 1"), "{error}");
    }

    #[test]
    fn a_missing_program_is_reported_by_name() {
        let error = run(&mut Command::new("/no/such/program"), "no such program").unwrap_err();
        assert!(
            error.starts_with("cannot run `no such program`: "),
            "{error}"
        );
    }
}
