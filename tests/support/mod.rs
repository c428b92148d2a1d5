//! Helpers shared by integration test crates that are not about a model
//! provider: process liveness (`proc`), the MCP reference servers (`mcp`)
//! and the temp-workspace fixture of the tools (`workspace`). A test crate declares `mod support;` and uses what it
//! needs; the rest is dead code there. `repo`: git repositories and file
//! trees for the checkpoint tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod mcp;
pub mod proc;
pub mod repo;
pub mod tmux;
pub mod workspace;
