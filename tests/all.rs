//! The integration suite, as one test binary.
//!
//! Every `tests/NAME.rs` is a module of this crate and every shared helper
//! folder (`tests/NAME/mod.rs`) is declared once here, so `cargo test`
//! links the library into one binary instead of one per file (71 files made
//! 71 binaries of ~276 MB each). Run one file's tests with
//! `cargo test --test all NAME::`; `Cargo.toml` sets `autotests = false`, so
//! a new file is added below, not picked up by itself.

#![allow(clippy::unwrap_used, clippy::expect_used)]

// Shared helpers.
mod cli_support;
mod common;
mod engine_support;
mod loopback;
mod scripted_support;
mod support;
mod tui_support;

// The tests, one module per file.
mod acp;
mod acp_clients;
mod acp_terminal;
mod approvals;
mod architecture;
mod caching;
mod checkpoints;
mod checkpoints_cli;
mod checkpoints_e2e;
mod claude_rules;
mod compaction;
mod containment;
mod crash_leftovers;
mod crash_output;
mod docs;
mod docs_generated;
mod editor_files;
mod editor_terminal;
mod engine_anthropic;
mod engine_openai;
mod engine_responses;
mod engine_suite;
mod export_escapes;
mod goals;
mod grep;
mod headless_cli;
mod headless_outcomes;
mod hooks;
mod hooks_e2e;
mod images;
mod jobs;
mod mcp;
mod mcp_cli;
mod mcp_e2e;
mod mcp_engine;
mod mcp_first_task;
mod mcp_flood;
mod mcp_manage;
mod mentions;
mod old_transcripts;
mod ops_in;
mod plan_contract;
mod plan_edits;
mod plan_from_file;
mod plan_honesty;
mod plan_identity;
mod plan_mode;
mod plan_narrowed;
mod plan_proposal;
mod plan_props;
mod plan_reply_hooks;
mod plan_scope;
mod plan_without_tool;
mod provider_parity;
mod recorded_streams;
mod rule_forms;
mod sandbox;
mod sandbox_world;
mod seam;
mod seam_schema;
mod security;
mod sessions;
mod sessions_cli;
mod sessions_crash;
mod skills;
mod subagents;
mod subagents_crash;
mod subagents_e2e;
mod tool_host;
mod tools_bash;
mod tools_fs;
mod trusted_programs;
mod tui_daily;
mod tui_e2e;
mod tui_goal;
mod tui_hangup;
mod tui_history_search;
mod tui_hooks;
mod tui_images;
mod tui_jobs;
mod tui_narrow;
mod tui_notify;
mod tui_plan;
mod tui_plan_engine;
mod tui_plan_lines;
mod tui_proposal;
mod tui_scope;
mod tui_skills;
mod tui_snapshots;
mod tui_state_approvals;
mod tui_state_commands;
mod tui_state_context;
mod tui_state_input;
mod tui_state_interrupts;
mod tui_state_mcp;
mod tui_state_plan;
mod tui_state_queue;
mod tui_state_render;
mod tui_state_sessions;
mod tui_state_threads;
mod tui_state_tools;
mod untrusted_files;
mod web_fetch;
