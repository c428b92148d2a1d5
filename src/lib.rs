//! Waypoint: a terminal coding agent whose signature is a live plan.
//!
//! The engine (`agent`, `llm`, `tools`, `todo`, `events`) knows nothing about
//! terminals: it talks to whatever drives it (headless printer, TUI, tests)
//! only through the typed [`events::Op`] and [`events::Event`] channels.

pub mod acp;
pub mod agent;
pub mod chat;
pub mod checkpoint;
pub mod cli;
pub mod config;
pub mod context;
pub mod demo;
pub mod events;
pub mod fsx;
pub mod goal_cli;
pub mod headless;
pub mod hooks;
pub mod json;
pub mod launch;
pub mod llm;
pub mod mcp;
pub mod models;
pub mod pricing;
pub mod programs;
pub mod prompt;
pub mod pylit;
pub mod resume;
pub mod safety;
pub mod secrets;
pub mod session;
pub mod setup;
pub mod skills;
pub mod text;
pub mod todo;
pub mod tools;
pub mod tui;
pub mod undo_cli;
pub mod units;
pub mod workspace_cli;
