//! What the agent may run: shell command lines read into their simple
//! commands ([`lexer`], [`simple`], [`wrappers`], [`builtins`], [`git`],
//! [`shell`]), with the text they evaluate ([`evaluate`]), and the rules
//! matched on them ([`rules`], [`deny`], [`allow`]) and on the files and
//! hosts tools reach ([`access`]). Part of the engine: it knows no terminal.

pub mod access;
pub mod allow;
pub mod blocked;
pub mod builtins;
pub mod child;
pub mod deny;
pub mod evaluate;
pub mod git;
pub mod lexer;
pub mod narrowed;
mod read_only;
pub mod rules;
pub mod sandbox;
pub mod shell;
pub mod simple;
pub mod world;
pub mod wrappers;

pub use narrowed::Narrowing;
pub use rules::{Rules, Verdict};
pub use sandbox::{Confinement, Sandbox, SandboxError, landlock_abi};
pub use world::SOCKET_VARS;
