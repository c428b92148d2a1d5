//! What the agent may run: shell command lines read into their simple
//! commands ([`lexer`], [`simple`], [`wrappers`], [`shell`]) and the config's
//! `allow`/`deny` rules matched on them ([`rules`]). Part of the engine: it knows no terminal.

pub mod blocked;
pub mod child;
pub mod lexer;
pub mod rules;
pub mod sandbox;
pub mod shell;
pub mod simple;
pub mod world;
pub mod wrappers;

pub use rules::{Rules, Verdict};
pub use sandbox::{Confinement, Sandbox, SandboxError, landlock_abi};
pub use world::SOCKET_VARS;
