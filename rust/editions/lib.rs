//! A crate outside `forkunion` that depends on it by path, built once per edition (`e2021/`, `e2024/`): what a
//! user's `cargo new` project compiles. Its doc tests are the README's Rust section, the documentation's snippets
//! and (feature `crate-doc-examples`) every example of the crate's doc comments, compiled and run under this crate's
//! edition; `uses.rs` holds the patterns that editions treat differently.

/// The README's Rust section.
#[cfg(doctest)]
#[doc = include_str!("../../docs/readme-sections/rust.md")]
pub struct ReadmeSection;

/// The documentation's Rust snippets.
#[cfg(doctest)]
#[doc = include_str!("../tests/documented_snippets.md")]
pub struct DocumentedSnippets;

/// The crate's doc-comment examples (copied by `doc_examples.rs`): on by default in `e2024` only, since the crate's
/// own `cargo test` already runs them under edition 2021 (`--features crate-doc-examples` runs them in `e2021`).
#[cfg(all(doctest, feature = "crate-doc-examples"))]
#[doc = include_str!(concat!(env!("OUT_DIR"), "/crate_doc_examples.md"))]
pub struct CrateDocExamples;
