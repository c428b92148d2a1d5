//! What the user allowed for the session: the approval mode, and the
//! commands, files, questions and tools answered "always". Shared by every
//! thread (an "always" said to a child holds for its parent too). An allow
//! covers a command only as run in this workspace (its links looked at).

use std::collections::HashSet;

use crate::events::{ApprovalMode, Decision};
use crate::safety::{Verdict, shell};

/// The approval mode and what the user allowed for the session, shared by
/// every thread: an "always" said to a child holds for its parent too.
pub(super) type SharedPolicy = std::sync::Arc<std::sync::Mutex<Policy>>;

/// The mode and what the user allowed "always" in this session.
#[derive(Clone, Debug)]
pub struct Policy {
    pub mode: ApprovalMode,
    /// The mode the model was last told of (the system prompt's, then
    /// the notes on entering and leaving plan mode).
    pub(super) told: ApprovalMode,
    /// Commands allowed for the session.
    pub(super) commands: Remembered,
    /// Commands allowed to run outside the sandbox for the session.
    pub(super) unsandboxed: Remembered,
    /// Files the user allowed writing for the session, as the workspace
    /// resolves them (`a.txt`, `./a.txt` and `/abs/ws/a.txt` are one).
    pub(super) files: HashSet<std::path::PathBuf>,
    /// Questions a tool asked that the user answered "always": (tool, question).
    pub(super) questions: HashSet<(String, String)>,
    /// Tools of other programs (MCP) allowed for the session, by name.
    pub(super) tools: HashSet<String>,
    /// The mode plan mode was entered from: an approved plan runs in it
    /// unless the user names another.
    pub(super) before_plan: ApprovalMode,
}

impl Policy {
    pub fn new(mode: ApprovalMode) -> Self {
        Self {
            mode,
            told: mode,
            commands: Remembered::default(),
            unsandboxed: Remembered::default(),
            files: HashSet::new(),
            questions: HashSet::new(),
            tools: HashSet::new(),
            before_plan: if mode == ApprovalMode::Plan {
                ApprovalMode::Ask
            } else {
                mode
            },
        }
    }

    /// Switches to `mode`, remembering where plan mode was entered from.
    pub fn set_mode(&mut self, mode: ApprovalMode) {
        if mode == ApprovalMode::Plan && self.mode != ApprovalMode::Plan {
            self.before_plan = self.mode;
        }
        self.mode = mode;
    }

    /// The answer the mode, or an earlier "always", gives for the user when
    /// tool `name` asks `question` while it runs; `None`: ask the user.
    pub fn answers(&self, name: &str, question: &str) -> Option<Decision> {
        match self.mode {
            ApprovalMode::ReadOnly => Some(Decision::Refuse {
                reason: Some("read-only mode: nothing is allowed".into()),
            }),
            ApprovalMode::Yolo => Some(Decision::Once),
            _ if self
                .questions
                .contains(&(name.to_string(), question.to_string())) =>
            {
                Some(Decision::Once)
            }
            _ => None,
        }
    }

    /// The user answered "always" to tool `name`'s `question`.
    pub fn remember_question(&mut self, name: &str, question: &str) {
        self.questions
            .insert((name.to_string(), question.to_string()));
    }
}

/// Commands answered "always": allow rules (`cargo test`) and exact lines.
#[derive(Clone, Debug, Default)]
pub(super) struct Remembered {
    rules: Vec<String>,
    lines: HashSet<String>,
}

impl Remembered {
    /// `command`, run in the workspace `root`, was allowed "always".
    pub(super) fn covers(&self, command: &str, root: &std::path::Path) -> bool {
        self.lines.contains(command)
            || crate::safety::Rules {
                allow: self.rules.clone(),
                ..crate::safety::Rules::default()
            }
            .check_in(command, Some(root))
                == Verdict::Allowed
    }

    pub(super) fn add(&mut self, always: Always) {
        match always {
            Always::Rules(rules) => self.rules.extend(rules),
            Always::Line(line) => {
                self.lines.insert(line);
            }
        }
    }
}

/// What "always" on a command line allows for the session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Always {
    /// For each of its commands, the program and its first argument
    /// (`cargo test`, `git status`), or the whole command when that
    /// argument is an option (`ls -la`, `cargo --version`).
    Rules(Vec<String>),
    /// Exactly this line: when a command in it has no argument (a bare
    /// `make` must not allow `make -f /tmp/evil.mk`), or the line cannot
    /// be read or followed.
    Line(String),
}

/// What "always" on `command` allows; never a whole program.
pub fn always_for(command: &str) -> Always {
    let exact = || Always::Line(command.to_string());
    let Ok(commands) = shell::simple_commands(command) else {
        return exact();
    };
    let mut rules = Vec::new();
    for words in &commands {
        let Some(program) = words.first().map(|p| shell::basename(p)) else {
            continue;
        };
        rules.push(match words.get(1) {
            Some(arg) if !arg.starts_with('-') => format!("{program} {arg}"),
            Some(_) => std::iter::once(program)
                .chain(words[1..].iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            None => return exact(),
        });
    }
    if rules.is_empty() {
        return exact();
    }
    Always::Rules(rules)
}

/// A line's "always" rules as shown in the prompt; empty when "always"
/// allows exactly this line.
pub fn first_words(command: &str) -> Vec<String> {
    match always_for(command) {
        Always::Rules(rules) => rules,
        Always::Line(_) => Vec::new(),
    }
}
