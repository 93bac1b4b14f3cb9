//! The build script of the edition test crates: copies every fenced code block of the `forkunion` crate's doc
//! comments (`//!` and `///` lines of `../src/*.rs`) into `$OUT_DIR/crate_doc_examples.md`, which `lib.rs` holds as
//! a doc comment, so `cargo test --doc` runs the crate's own examples under this crate's edition.
use std::env;
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let sources = Path::new(&env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("..")
        .join("..")
        .join("src");
    println!("cargo:rerun-if-changed={}", sources.display());
    check_version(&sources.join("..").join("Cargo.toml"));
    let mut files: Vec<PathBuf> = fs::read_dir(&sources)
        .unwrap_or_else(|error| panic!("cannot list {}: {}", sources.display(), error))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().map_or(false, |ext| ext == "rs"))
        .collect();
    files.sort();
    let mut markdown = String::from("The `forkunion` crate's doc-comment examples, copied by `doc_examples.rs`.\n\n");
    let mut blocks = 0;
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
        let text = fs::read_to_string(file).unwrap_or_else(|error| panic!("cannot read {}: {}", file.display(), error));
        let name = file.file_name().expect("a file name").to_string_lossy().into_owned();
        let mut fence: Option<String> = None; // the open block's indentation inside the comment
        for (number, line) in text.lines().enumerate() {
            let doc = match doc_text(line) {
                Some(doc) => doc,
                None if fence.is_some() => {
                    panic!("{}:{}: a doc-comment code block ends without its closing fence", name, number + 1)
                }
                None => continue,
            };
            let trimmed = doc.trim_start();
            let indent = &doc[..doc.len() - trimmed.len()];
            match &fence {
                None if trimmed.starts_with("```") => {
                    markdown.push_str(&format!("From `src/{}`, line {}:\n\n{}\n", name, number + 1, trimmed));
                    fence = Some(indent.to_string());
                    blocks += 1;
                }
                None => {}
                Some(_) if trimmed.starts_with("```") => {
                    markdown.push_str("```\n\n");
                    fence = None;
                }
                Some(open) => {
                    markdown.push_str(doc.strip_prefix(open.as_str()).unwrap_or(trimmed));
                    markdown.push('\n');
                }
            }
        }
    }
    assert!(blocks > 0, "no doc-comment code blocks in {}: is this the crate's source?", sources.display());
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("crate_doc_examples.md");
    fs::write(&out, markdown).unwrap_or_else(|error| panic!("cannot write {}: {}", out.display(), error));
}

/// The text of a `//!` or `///` doc-comment line (one leading space removed), `None` for any other line.
fn doc_text(line: &str) -> Option<&str> {
    let code = line.trim_start();
    let rest = code.strip_prefix("//!").or_else(|| code.strip_prefix("///").filter(|rest| !rest.starts_with('/')))?;
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

/// This crate's version must be forkunion's: its examples compare `forkunion::version()` with `CARGO_PKG_VERSION`,
/// which in a doc test is the version of the crate running it.
fn check_version(manifest: &Path) {
    let text =
        fs::read_to_string(manifest).unwrap_or_else(|error| panic!("cannot read {}: {}", manifest.display(), error));
    let theirs = text
        .lines()
        .find_map(|line| line.strip_prefix("version = "))
        .map(|value| value.trim().trim_matches('"'))
        .unwrap_or_else(|| panic!("{} has no version line", manifest.display()));
    let ours = env::var("CARGO_PKG_VERSION").unwrap_or_default();
    assert_eq!(ours, theirs, "{} says version {}: set the edition crates' versions to it", manifest.display(), theirs);
}
