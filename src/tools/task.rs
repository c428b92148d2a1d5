//! The `task` tool: hands a piece of work to a subagent, a child agent
//! with a fresh context (the prompt, the project's instructions and the
//! environment, never the parent's conversation) and a plan of its own,
//! drawn under the parent's item in progress. The tool only reads its
//! input and asks the host ([`Subagents`]) to run the child; the engine
//! owns threads, budgets and accounts. Invariant: the result is the
//! child's final answer (or what it had when it stopped, saying why)
//! followed by one line of account.

use std::time::Duration;

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::args::TypedTool;
use super::{
    Access, Failure, ToolCtx, ToolDetail, ToolOutput, ToolSpec, ToolSummary, summary_line,
};
use crate::chat::Usage;

/// What kind of agent a task runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentKind {
    /// Read-only tools and a plan; runs beside other tasks.
    Explore,
    /// The parent's tools and approval mode; its writes wait for the others'.
    General,
}

impl AgentKind {
    pub fn name(self) -> &'static str {
        match self {
            AgentKind::Explore => "explore",
            AgentKind::General => "general",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "explore" => Some(AgentKind::Explore),
            "general" => Some(AgentKind::General),
            _ => None,
        }
    }
}

/// A task as the model asked for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRequest {
    /// 3–5 words: how the task is shown.
    pub description: String,
    pub prompt: String,
    pub agent: AgentKind,
    /// It runs while the parent goes on; its result comes later, as a
    /// message.
    pub background: bool,
}

/// A `task` call's arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct TaskArgs {
    /// What the task is, in 3-5 words.
    pub description: String,
    /// The whole task for the subagent: what to do, where, and what to report back.
    pub prompt: String,
    /// explore: read-only tools; general: your tools (default).
    #[schemars(extend("enum" = ["explore", "general"]))]
    pub agent: Option<String>,
    /// Run it while you go on with other work; its result comes as a message when it finishes (your turn waits for it before it ends).
    pub background: Option<bool>,
}

impl TaskRequest {
    /// Reads the call's input; why not, in words for the model.
    pub fn parse(input: &Value) -> Result<Self, String> {
        let args = super::args::parse::<TaskArgs>(input).map_err(|why| why.to_string())?;
        Self::from_args(args)
    }

    /// Reads the call's arguments; why not, in words for the model.
    pub fn from_args(args: TaskArgs) -> Result<Self, String> {
        let description = args.description.trim().to_string();
        let prompt = args.prompt.trim().to_string();
        if description.is_empty() || prompt.is_empty() {
            return Err("`description` and `prompt` must not be empty".into());
        }
        let agent = match args.agent.as_deref() {
            None => AgentKind::General,
            Some(kind) => AgentKind::parse(kind).ok_or_else(|| {
                format!("`agent` must be \"explore\" or \"general\", got \"{kind}\"")
            })?,
        };
        Ok(Self {
            description,
            prompt,
            agent,
            background: args.background.unwrap_or(false),
        })
    }
}

/// What a child spent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskAccount {
    pub tool_calls: u32,
    pub usage: Usage,
    pub cost_usd: Option<f64>,
    pub elapsed: Duration,
}

impl TaskAccount {
    /// `12 tool calls · 48k tokens · $0.09 · 3m12s`.
    pub fn line(&self) -> String {
        let calls = match self.tool_calls {
            1 => "1 tool call".to_string(),
            n => format!("{n} tool calls"),
        };
        let tokens = self.usage.prompt_tokens() + self.usage.output_tokens;
        let mut line = format!("{calls} · {} tokens", crate::units::whole_tokens(tokens));
        if let Some(usd) = self.cost_usd {
            line.push_str(&format!(" · ${usd:.2}"));
        }
        let secs = self.elapsed.as_secs();
        line.push_str(&format!(" · {}m{:02}s", secs / 60, secs % 60));
        line
    }
}

/// How a task ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskEnd {
    /// The child answered.
    Answered,
    /// It reached a limit (turns, tokens, time, the session's budget).
    Limit(String),
    /// The user interrupted it.
    Interrupted,
    /// Its model requests failed.
    Failed(String),
    /// It was started in the background: the answer says how it will report.
    Started,
}

/// A task done: the child's answer (its last words), how it ended, and
/// what it spent.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskReport {
    pub answer: String,
    pub end: TaskEnd,
    pub account: TaskAccount,
}

/// What runs subagents: the engine. A tool reaches it through
/// [`super::ToolHost::subagents`].
pub trait Subagents: Send + Sync {
    /// Runs `request` as a child of the calling thread (for the call the
    /// host knows), until it answers, stops or is cancelled through the
    /// call's token.
    fn run<'a>(&'a self, request: TaskRequest) -> BoxFuture<'a, Result<TaskReport, String>>;
}

/// The `task` tool.
pub struct Task;

const DESCRIPTION: &str = "Run a subagent on a self-contained task. It starts from `prompt` alone (never this conversation): say all it needs. `explore`: read-only tools, for finding and understanding code; `general` (default): your tools and approval mode. Tasks in one reply run at once. Returns its final answer and its cost.";

impl TypedTool for Task {
    type Args = TaskArgs;
    const PARALLEL: bool = true;
    fn spec_for(&self, schema: Value) -> ToolSpec {
        let mut spec = ToolSpec::builtin("task", DESCRIPTION, schema, Access::Plan);
        spec.origin = super::Origin::Agent;
        spec
    }

    fn summary_of(&self, args: Option<&TaskArgs>) -> ToolSummary {
        let line = match args {
            Some(args) => match TaskRequest::from_args(args.clone()) {
                Ok(task) => format!("{} · {}", task.agent.name(), task.description),
                Err(_) => args.description.clone(),
            },
            None => String::new(),
        };
        ToolSummary {
            line: summary_line(&line),
            detail: ToolDetail::Output,
        }
    }

    fn call<'a>(&'a self, args: TaskArgs, ctx: ToolCtx<'a>) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move {
            let request = match TaskRequest::from_args(args) {
                Ok(request) => request,
                Err(why) => return ToolOutput::failed(Failure::InvalidInput, why),
            };
            let Some(subagents) = ctx.host.subagents() else {
                return ToolOutput::error("subagents cannot run here (no engine to run them)");
            };
            match subagents.run(request).await {
                Ok(report) => report_output(&report),
                Err(why) => ToolOutput::error(why),
            }
        })
    }
}

/// The tool's result for `report`.
pub fn report_output(report: &TaskReport) -> ToolOutput {
    let account = report.account.line();
    let answer = report.answer.trim();
    let answer = if answer.is_empty() {
        "(the subagent gave no answer)"
    } else {
        answer
    };
    match &report.end {
        TaskEnd::Answered => ToolOutput::ok(format!("{answer}\n\n[subagent: {account}]")),
        TaskEnd::Limit(why) => ToolOutput::ok(format!(
            "{answer}\n\n[subagent stopped: {why}; the above is what it had. {account}]"
        )),
        TaskEnd::Interrupted => ToolOutput::interrupted(
            &format!("The subagent was interrupted by the user ({account})."),
            report.answer.trim(),
        ),
        TaskEnd::Failed(why) => ToolOutput::error(format!(
            "the subagent failed: {why}. What it had:\n{answer}\n[{account}]"
        )),
        TaskEnd::Started => ToolOutput::ok(answer.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn input_is_read_with_reasons() {
        let ok = TaskRequest::parse(
            &json!({"description": "Find callers", "prompt": "Find x", "agent": "explore"}),
        );
        assert_eq!(ok.map(|t| t.agent), Ok(AgentKind::Explore));
        let default = TaskRequest::parse(&json!({"description": "d", "prompt": "p"}));
        assert_eq!(default.map(|t| t.agent), Ok(AgentKind::General));
        let bad = TaskRequest::parse(&json!({"description": "d", "prompt": "p", "agent": "boss"}));
        assert_eq!(
            bad,
            Err("`agent` must be \"explore\" or \"general\", got \"boss\"".into())
        );
        assert!(TaskRequest::parse(&json!({"description": " ", "prompt": "p"})).is_err());
        assert!(TaskRequest::parse(&json!({"prompt": "p"})).is_err());
    }

    #[test]
    fn the_account_is_one_line() {
        let account = TaskAccount {
            tool_calls: 12,
            usage: Usage {
                input_tokens: 40_000,
                output_tokens: 8_000,
                ..Usage::default()
            },
            cost_usd: Some(0.094),
            elapsed: Duration::from_secs(192),
        };
        assert_eq!(account.line(), "12 tool calls · 48k tokens · $0.09 · 3m12s");
        let report = TaskReport {
            answer: "found it".into(),
            end: TaskEnd::Limit("its token limit (40k)".into()),
            account,
        };
        let out = report_output(&report);
        assert!(
            out.content
                .starts_with("found it\n\n[subagent stopped: its token limit (40k)")
        );
        assert!(!out.is_error());
    }
}
