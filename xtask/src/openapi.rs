//! `cargo xtask openapi`: regenerates `docs/openapi.json` from the code (`muster
//! openapi`), the file a test holds equal to what `GET /openapi.json` serves.

use std::path::Path;
use std::process::Command;

use crate::command::cargo;

pub fn openapi() -> Result<(), String> {
    let output = Command::new(cargo())
        .args(["run", "--quiet", "-p", "muster-server", "--", "openapi"])
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "muster openapi failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/openapi.json");
    std::fs::write(&target, &output.stdout)
        .map_err(|e| format!("cannot write {}: {e}", target.display()))?;
    eprintln!(
        "xtask: wrote {} ({} bytes)",
        target.display(),
        output.stdout.len()
    );
    Ok(())
}
