//! `embed_migrations!` reads the migration folders at compile time, but Cargo only
//! knows about the files it includes: a NEW migration folder would not rebuild the
//! crate. Watching the folders makes Cargo rebuild when one is added.
//!
//! It also digests every migration file (its path and bytes) into
//! `MIGRATIONS_DIGEST_OF_THIS_BUILD`: the test support names its migrated template databases
//! after it, so a test never copies a template built from other migrations than the
//! ones this build embeds.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
    let mut files = Vec::new();
    collect(Path::new("../../migrations"), &mut files);
    files.sort();
    let mut digest = Fnv::default();
    for file in &files {
        digest.write(file.to_string_lossy().as_bytes());
        digest.write(&[0]);
        digest.write(&std::fs::read(file).unwrap_or_default());
        digest.write(&[0]);
    }
    println!(
        "cargo:rustc-env=MIGRATIONS_DIGEST_OF_THIS_BUILD={:016x}",
        digest.0
    );
}

/// Every file under `dir`, depth first.
fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}

/// 64-bit FNV-1a: stable across compilers, which the standard hasher is not promised
/// to be (a template named under one toolchain stays valid under the next).
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}
