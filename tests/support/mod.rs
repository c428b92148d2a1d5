//! Helpers shared by integration test crates that are not about a model
//! provider: process liveness (`proc`), the MCP reference servers (`mcp`)
//! and the temp-workspace fixture of the tools (`workspace`). A test crate declares `mod support;` and uses what it
//! needs; the rest is dead code there. `repo`: git repositories and file
//! trees for the checkpoint tests. `sandbox`: what the sandbox tests need of
//! the machine, and the switch that makes a missing piece a failure.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod mcp;
pub mod proc;
pub mod repo;
pub mod sandbox;
pub mod tmux;
pub mod workspace;
