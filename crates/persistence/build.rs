//! `embed_migrations!` reads the migration folders at compile time, but Cargo only
//! knows about the files it includes: a NEW migration folder would not rebuild the
//! crate. Watching the folders makes Cargo rebuild when one is added.

fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
