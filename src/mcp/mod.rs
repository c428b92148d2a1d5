//! Model Context Protocol servers: their settings
//! ([`McpServerConfig`], read with the config), starting
//! and stopping them ([`server`]), and their tools as Waypoint's own
//! ([`tool`], named by [`name`]). Built on the official SDK, `rmcp`.

pub mod cli;
pub mod edit;
pub mod http;
pub mod manager;
pub mod name;
pub mod place;
pub mod project;
pub mod search;
pub mod server;
pub mod tool;

pub use crate::config::{McpServerConfig, McpSettings as Settings};
pub use manager::Servers;
pub use server::{Running, StartError, start};
pub use tool::McpTool;
