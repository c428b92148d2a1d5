//! Slash commands: a registry of names, arguments, help and handlers. A
//! handler changes UI state and returns `Effect`s (ops for the engine among
//! them). Typing `/` at the start of the input opens a list filtered as you
//! type. Invariant: text starting with `/` that names a command runs it,
//! and an unknown command is reported, never sent to the model.

pub mod approval;
pub mod goal;
pub mod hooks;
pub mod mcp;
pub mod plan_mode;
pub mod undo;

use std::time::Instant;

use super::effect::Effect;
use super::state::{App, Confirm, Focus, NoticeKind};
use crate::events::{ApprovalMode, Op};
use crate::models::{KNOWN, format_window};
use crate::pricing::{format_cost, price_of};
use crate::units::tokens as short;

pub struct Command {
    pub name: &'static str,
    /// `[NAME]` optional, `<NAME>` required, empty for none.
    pub args: &'static str,
    pub help: &'static str,
    run: fn(&mut App, &str, Instant) -> Vec<Effect>,
}

impl Command {
    pub fn needs_args(&self) -> bool {
        self.args.starts_with('<')
    }
}

/// In the order the list shows them. Later features register here.
pub const COMMANDS: &[Command] = &[
    Command {
        name: "help",
        args: "",
        help: "keys and commands",
        run: help,
    },
    Command {
        name: "model",
        args: "[NAME]",
        help: "switch model for the next turn; alone: list known models",
        run: model,
    },
    Command {
        name: "approval",
        args: "[MODE]",
        help: "what runs without asking; alone: the mode now and the modes",
        run: approval::run,
    },
    Command {
        name: "plan-mode",
        args: "",
        help: "plan mode: research and propose a plan; nothing can change",
        run: plan_mode::run,
    },
    Command {
        name: "approve",
        args: "[MODE] [fresh]",
        help: "approve the proposed plan; without MODE it asks how it runs (default: as before plan mode); fresh: new context",
        run: plan_mode::approve_command,
    },
    Command {
        name: "cost",
        args: "",
        help: "tokens and cost so far, per model",
        run: cost,
    },
    Command {
        name: "context",
        args: "",
        help: "the project instructions files loaded and how full the context window is",
        run: context,
    },
    Command {
        name: "mcp",
        args: "[ACTION]",
        help: "MCP servers and their state; ACTION: approve, reconnect/enable/disable NAME",
        run: mcp::run,
    },
    Command {
        name: "hooks",
        args: "[approve]",
        help: "the hooks that run; approve: run this project's .claude/settings.json hooks",
        run: hooks::run,
    },
    Command {
        name: "jobs",
        args: "",
        help: "the background jobs the agent started, running and ended",
        run: hooks::jobs,
    },
    Command {
        name: "compact",
        args: "[FOCUS]",
        help: "summarise the conversation now to free context; FOCUS: what the summary keeps",
        run: compact,
    },
    Command {
        name: "resume",
        args: "[ID]",
        help: "pick a stored session of this workspace to continue; ID: open that one",
        run: resume,
    },
    Command {
        name: "export",
        args: "[PATH]",
        help: "write this session as Markdown (default: exports/waypoint-session-ID.md in the data folder)",
        run: export,
    },
    Command {
        name: "undo",
        args: "[item N or #P]",
        help: "undo the last turn's file changes (preview first); item N: only that plan item's; #P: back to point P",
        run: undo::undo,
    },
    Command {
        name: "rewind",
        args: "[P [WHAT]]",
        help: "list the checkpoints; P: go back to one (WHAT: files, conversation or both)",
        run: undo::rewind,
    },
    Command {
        name: "diff",
        args: "[P]",
        help: "what the agent changed in this session (since point P)",
        run: undo::diff,
    },
    Command {
        name: "plan",
        args: "<EDIT>",
        help: "change the plan: add TEXT, edit N TEXT, done N, undone N, start N, remove N, move N M, check N [CMD], clear",
        run: plan,
    },
    Command {
        name: "goal",
        args: "[TEXT or ACTION]",
        help: "work on TEXT until the evidence says it is met (--check CMD, --budget B); pause, resume, clear, accept N",
        run: goal::run,
    },
    Command {
        name: "clear",
        args: "",
        help: "clear conversation and tools panes (plan stays)",
        run: clear,
    },
    Command {
        name: "new",
        args: "",
        help: "start afresh: empty conversation and plan",
        run: new_session,
    },
    Command {
        name: "quit",
        args: "",
        help: "leave Waypoint",
        run: quit,
    },
];

/// The commands as a Markdown table, as the README shows them.
pub fn markdown_table() -> String {
    let mut out = String::from("| command | does |\n| --- | --- |\n");
    for c in COMMANDS {
        let usage = if c.args.is_empty() {
            format!("`/{}`", c.name)
        } else {
            format!("`/{} {}`", c.name, c.args)
        };
        out.push_str(&format!("| {usage} | {} |\n", c.help));
    }
    out
}

/// How well `name` matches `filter`: prefix, then substring, then the
/// letters in order; `None` when it does not match.
pub(super) fn score(name: &str, filter: &str) -> Option<u8> {
    if name.starts_with(filter) {
        return Some(0);
    }
    if name.contains(filter) {
        return Some(1);
    }
    let mut letters = name.chars();
    filter.chars().all(|c| letters.any(|n| n == c)).then_some(2)
}

/// The commands matching `filter` (without the `/`), best first.
pub fn matches(filter: &str) -> Vec<&'static Command> {
    let filter = filter.to_lowercase();
    let mut found: Vec<(u8, usize, &'static Command)> = COMMANDS
        .iter()
        .enumerate()
        .filter_map(|(i, c)| score(c.name, &filter).map(|s| (s, i, c)))
        .collect();
    found.sort_by_key(|(s, i, _)| (*s, *i));
    found.into_iter().map(|(_, _, c)| c).collect()
}

/// What is typed after `/` while the list is open.
pub fn filter(app: &App) -> String {
    app.input
        .text()
        .strip_prefix('/')
        .unwrap_or_default()
        .to_string()
}

/// The list shows while a single word starting with `/` is typed, unless
/// Esc closed it for this very text.
pub fn popup_open(app: &App) -> bool {
    if app.focus != Focus::Input {
        return false;
    }
    let text = app.input.text();
    text.starts_with('/')
        && !text.contains(char::is_whitespace)
        && app.overlays.popup.dismissed_for.as_deref() != Some(text.as_str())
}

/// Runs `text` when it is a slash command (`None`: it is a message). Text
/// starting with `//` or `/ ` is a message starting with `/`.
pub fn run(app: &mut App, text: &str, now: Instant) -> Option<Vec<Effect>> {
    let rest = text.trim().strip_prefix('/')?;
    if rest.starts_with('/') || rest.starts_with(char::is_whitespace) || rest.is_empty() {
        return None;
    }
    let (name, args) = rest
        .split_once(char::is_whitespace)
        .map_or((rest, ""), |(n, a)| (n, a.trim()));
    match COMMANDS.iter().find(|c| c.name == name) {
        Some(command) => Some((command.run)(app, args, now)),
        // A skill or custom command: sent as a message, which the engine
        // expands.
        None if app.status.catalog.iter().any(|e| e.name == name) => None,
        None => {
            app.notice(
                NoticeKind::Error,
                format!(
                    "Unknown command /{name}; it was not sent to the model. Commands: {}. (Start with // to send text beginning with /.)",
                    COMMANDS
                        .iter()
                        .map(|c| format!("/{}", c.name))
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
            );
            Some(Vec::new())
        }
    }
}

fn help(app: &mut App, _: &str, _: Instant) -> Vec<Effect> {
    app.overlays.help = true;
    app.overlays.help_scroll.home();
    Vec::new()
}

fn model(app: &mut App, args: &str, _: Instant) -> Vec<Effect> {
    let mut words = args.split_whitespace();
    let (provider, name) = match (words.next(), words.next()) {
        (None, _) => {
            app.notice(NoticeKind::Info, model_list(app));
            return Vec::new();
        }
        (Some(name), None) => (None, name),
        (Some(provider), Some(name)) => (Some(provider.to_string()), name),
    };
    if !app.status.engine.present() {
        app.notice(
            NoticeKind::Error,
            "No model can be switched to: no provider is set up.",
        );
        return Vec::new();
    }
    // The engine confirms with `ModelChanged` (or says why not).
    vec![Effect::Send(Op::SetModel {
        provider,
        model: name.to_string(),
    })]
}

/// The known models with their provider, context window and price, as a
/// table narrow enough for the conversation pane of a 100-column terminal.
fn model_list(app: &App) -> String {
    let mut out = format!(
        "Model now: {}. Known models:\n",
        app.status.accounts.model()
    );
    let width = KNOWN.iter().map(|m| m.name.len()).max().unwrap_or(0);
    out.push_str(&format!(
        "  {:<width$}  {:<9}  {:>7}  $/M tokens in/out\n",
        "model", "provider", "context"
    ));
    for m in KNOWN {
        let price = price_of(m.name, app.status.accounts.prices())
            .map(|p| format!("${}/${}", p.input, p.output))
            .unwrap_or_else(|| "unknown".into());
        let mark = if m.name == app.status.accounts.model() {
            "▶"
        } else {
            " "
        };
        out.push_str(&format!(
            "{mark} {:<width$}  {:<9}  {:>7}  {price}\n",
            m.name,
            m.provider,
            format_window(m.context_window)
        ));
    }
    out.push_str("/model NAME switches (a listed model takes its provider along; any other name stays with this provider); /model PROVIDER NAME switches provider too.");
    out
}

/// `text` with its command's argument completed, for Tab: the approval
/// modes for `/approval`, the known models for `/model`. A complete
/// argument goes on to the next choice; `None` when there is nothing to
/// complete (Tab then moves the focus).
pub fn complete_argument(text: &str) -> Option<String> {
    let rest = text.strip_prefix('/')?;
    let (name, arg) = rest.split_once(' ')?;
    if arg.contains(char::is_whitespace) {
        return None;
    }
    let choices: Vec<&str> = match name {
        "approval" => ApprovalMode::ALL.iter().map(|m| m.as_str()).collect(),
        "model" => KNOWN.iter().map(|m| m.name).collect(),
        _ => return None,
    };
    let next = match choices.iter().position(|c| *c == arg) {
        Some(at) => choices[(at + 1) % choices.len()],
        None => choices.iter().find(|c| c.starts_with(arg)).copied()?,
    };
    Some(format!("/{name} {next}"))
}

fn compact(app: &mut App, args: &str, _: Instant) -> Vec<Effect> {
    if !app.status.engine.present() {
        app.notice(
            NoticeKind::Error,
            "Nothing to compact: no provider is set up.",
        );
        return Vec::new();
    }
    let focus = (!args.is_empty()).then(|| args.to_string());
    // The engine answers with `CompactionBegin` … `CompactionEnd` (or says why not).
    vec![Effect::Send(Op::Compact { focus })]
}

fn cost(app: &mut App, _: &str, now: Instant) -> Vec<Effect> {
    let s = &app.status.accounts;
    let mut out = format!("Tokens so far: ↑{} in", s.prompt_tokens());
    if let Some(pc) = s.cached_percent() {
        out.push_str(&format!(" ({pc}% cached)"));
    }
    out.push_str(&format!(", ↓{} out", s.totals().output_tokens));
    match s.cost() {
        Some(usd) => out.push_str(&format!(", {}", format_cost(usd))),
        None if s.prompt_tokens() != 0 || s.totals().output_tokens != 0 => {
            out.push_str(" (cost unknown: a model's price is not known)")
        }
        None => {}
    }
    out.push('.');
    for u in s.by_model() {
        let usd = u
            .cost()
            .map(format_cost)
            .unwrap_or_else(|| "price unknown".into());
        let cached = u
            .usage
            .cached_percent()
            .map(|pc| format!(" ({pc}% cached)"))
            .unwrap_or_default();
        out.push_str(&format!(
            "\n  {}: ↑{}{cached} ↓{} · {usd}",
            u.model,
            short(u.usage.prompt_tokens()),
            short(u.usage.output_tokens)
        ));
    }
    out.push_str(&subagents_cost(app, now));
    app.notice(NoticeKind::Info, out);
    Vec::new()
}

/// `/cost`'s lines for the subagents: each one's task, calls, tokens,
/// cost and time (their tokens are in the totals above).
fn subagents_cost(app: &App, now: Instant) -> String {
    let mut out = String::new();
    for (thread, child) in app.threads.iter() {
        if out.is_empty() {
            out.push_str("\nSubagents (counted above):");
        }
        let label = child
            .parent_call
            .as_deref()
            .and_then(|call| app.root.trace.entries.iter().find(|t| t.id == call))
            .map(|t| crate::text::clean_line(&t.summary.line).into_owned())
            .unwrap_or_else(|| thread.to_string());
        let cost = child
            .live
            .cost()
            .map(format_cost)
            .unwrap_or_else(|| "price unknown".into());
        out.push_str(&format!(
            "\n  {label}: {} · {} tok · {cost} · {}",
            crate::units::plural(child.view.trace.entries.len(), "tool call"),
            short(child.live.tokens),
            crate::tui::measure::clock(child.live.elapsed(now)),
        ));
    }
    out
}

fn context(app: &mut App, _: &str, _: Instant) -> Vec<Effect> {
    let (s, place) = (&app.status.accounts, &app.status.place);
    let mut out = match (s.context(), s.context_percent()) {
        (Some((used, window)), Some(pc)) => format!(
            "Context window: {} of {} tokens used ({pc}%).",
            short(used),
            format_window(window)
        ),
        _ => "Context window: not measured yet (it is after the first request).".to_string(),
    };
    if place.instructions().is_empty() {
        out.push_str("\nNo project instructions file (AGENTS.md or CLAUDE.md) was loaded.");
    } else {
        out.push_str("\nProject instructions in the system prompt:");
        for (path, bytes) in place.instructions() {
            out.push_str(&format!(
                "\n  {} · {}",
                instructions_path(path, place.workspace()),
                crate::units::bytes(*bytes)
            ));
        }
    }
    app.notice(NoticeKind::Info, out);
    Vec::new()
}

/// An instructions file's path as shown: relative to the workspace when in
/// it, cleaned (a file name is not trusted).
pub fn instructions_path(path: &str, workspace: &str) -> String {
    let shown = path
        .strip_prefix(workspace)
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|rest| !rest.is_empty())
        .unwrap_or(path);
    crate::text::clean_line(shown).into_owned()
}

/// `/plan add TEXT`, `/plan done 3`, …: a user edit, while the agent runs
/// or not (a mistyped one is explained, nothing is sent).
fn plan(app: &mut App, args: &str, _: Instant) -> Vec<Effect> {
    match crate::todo::PlanEdit::parse_command(args) {
        Ok(edit) => super::update::send_edit(app, edit),
        Err(e) => {
            app.notice(
                NoticeKind::Error,
                format!("/plan: {}", crate::text::clean_line(&e)),
            );
            Vec::new()
        }
    }
}

fn clear(app: &mut App, _: &str, _: Instant) -> Vec<Effect> {
    if app.status.turn.running() {
        app.notice(
            NoticeKind::Warning,
            "The agent is working: /clear waits for it to stop (Esc interrupts).",
        );
        return Vec::new();
    }
    app.root.conversation.clear();
    app.root.trace.clear();
    vec![Effect::Redraw]
}

fn new_session(app: &mut App, _: &str, now: Instant) -> Vec<Effect> {
    if app.status.turn.running() {
        app.overlays.confirm = Some(Confirm::NewSession);
        return Vec::new();
    }
    confirmed(app, Confirm::NewSession, now)
}

fn resume(app: &mut App, args: &str, _: Instant) -> Vec<Effect> {
    if args.is_empty() {
        // The app loop reads the listing (once) and opens the picker.
        return vec![Effect::OpenPicker];
    }
    if !app.status.engine.present() {
        app.notice(
            NoticeKind::Error,
            "No session can be opened: no provider is set up.",
        );
        return Vec::new();
    }
    // The engine answers with `SessionStarted` and `History` (or says why not).
    vec![Effect::Send(Op::OpenSession {
        id: args.to_string(),
    })]
}

fn export(app: &mut App, args: &str, _: Instant) -> Vec<Effect> {
    let Some((id, _)) = app.status.place.session() else {
        app.notice(
            NoticeKind::Error,
            "Nothing to export: no session has been recorded yet (send a message first).",
        );
        return Vec::new();
    };
    vec![Effect::Export {
        id: id.clone(),
        path: (!args.is_empty()).then(|| args.to_string()),
    }]
}

fn quit(_: &mut App, _: &str, _: Instant) -> Vec<Effect> {
    vec![Effect::Quit]
}

/// The user said yes to `question`.
pub fn confirmed(app: &mut App, question: Confirm, _: Instant) -> Vec<Effect> {
    match question {
        Confirm::NewSession => {
            let mut effects = Vec::new();
            if app.status.turn.running() {
                effects.push(Effect::Send(Op::Interrupt));
            }
            effects.push(Effect::Send(Op::NewSession));
            effects
        }
        Confirm::Undo => undo::confirmed(app),
        Confirm::ApprovePlan { mode, fresh } => vec![Effect::Send(Op::ApprovePlan {
            mode: Some(mode),
            fresh,
            items: None,
        })],
        Confirm::ForceDone { n } => vec![Effect::Send(Op::EditPlan {
            thread: crate::events::ThreadId::ROOT,
            edit: crate::todo::PlanEdit::Status {
                n,
                status: crate::todo::TodoStatus::Completed,
            },
        })],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(filter: &str) -> Vec<&'static str> {
        matches(filter).iter().map(|c| c.name).collect()
    }

    #[test]
    fn the_filter_ranks_prefix_then_substring_then_letters() {
        assert_eq!(names("").len(), COMMANDS.len());
        assert_eq!(names("mo"), vec!["model", "plan-mode"]);
        assert_eq!(names("q"), vec!["quit"]);
        // "e" starts export; it is contained in help, model, plan-mode,
        // approve, context, resume, rewind, clear, new.
        assert_eq!(
            names("e"),
            vec![
                "export",
                "help",
                "model",
                "plan-mode",
                "approve",
                "context",
                "resume",
                "rewind",
                "clear",
                "new"
            ]
        );
        assert_eq!(names("hp"), vec!["help"]);
        assert!(names("zz").is_empty());
    }
}
