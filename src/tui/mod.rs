//! The full-screen app: the UI thread owns the terminal and an [`state::App`];
//! the engine runs in its own task; they meet only through the engine's
//! `Op`/`Event` channels. Rendering is a pure function of the state.

pub mod app;
pub mod commands;
pub mod effect;
pub mod input;
pub mod keymap;
pub mod layout;
pub mod markdown;
pub mod measure;
pub mod notify;
pub mod outside;
pub mod popup;
pub mod sessions;
pub mod spill;
pub mod state;
pub mod style;
pub mod terminal;
pub mod update;
pub mod view;
pub mod widgets;
pub mod wrap;
