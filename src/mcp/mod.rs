//! Model Context Protocol servers: their settings ([`config`]), starting
//! and stopping them ([`server`]), and their tools as Waypoint's own
//! ([`tool`], named by [`name`]). Built on the official SDK, `rmcp`.

pub mod config;
pub mod name;
pub mod server;
pub mod tool;

pub use config::McpServerConfig;
pub use server::{Running, StartError, start};
pub use tool::McpTool;
