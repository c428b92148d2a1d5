//! `/hooks`: the hooks that run in this session and the project's that
//! wait for approval (as the engine told them); `/hooks approve` approves
//! the project's, which run from then on. `/jobs`: the background jobs.

use std::time::Instant;

use crate::text::clean_line;
use crate::tui::effect::Effect;
use crate::tui::state::{App, NoticeKind};

pub fn run(app: &mut App, args: &str, _: Instant) -> Vec<Effect> {
    match args.trim() {
        "" => {
            app.notice(NoticeKind::Info, list(app));
            Vec::new()
        }
        "approve" => vec![Effect::Send(crate::events::Op::ApproveHooks)],
        _ => {
            app.notice(NoticeKind::Warning, "Usage: /hooks, /hooks approve.");
            Vec::new()
        }
    }
}

fn list(app: &App) -> String {
    let hooks = &app.status.hooks;
    let mut out = if hooks.active.is_empty() {
        "No hooks run. Add one as [[hooks.PreToolUse]] (matcher, command, timeout) in the config file (README: Hooks).".to_string()
    } else {
        let lines: Vec<String> = hooks
            .active
            .iter()
            .map(|l| format!("  {}", clean_line(l)))
            .collect();
        format!(
            "Hooks (event, matcher, timeout, command):\n{}",
            lines.join("\n")
        )
    };
    if !hooks.waiting.is_empty() {
        out.push_str("\nThis project's hooks wait for approval (/hooks approve runs them):");
        for line in &hooks.waiting {
            out.push_str(&format!("\n  {}", clean_line(line)));
        }
    }
    out
}

/// `/jobs`: the session's background jobs, as the engine last told them.
pub fn jobs(app: &mut App, _: &str, _: Instant) -> Vec<Effect> {
    let jobs = &app.status.jobs;
    let text = if jobs.is_empty() {
        "No background jobs. The agent starts one with bash and run_in_background; it reads one with job_output and stops one with job_kill; all end with the session.".to_string()
    } else {
        let lines: Vec<String> = jobs
            .iter()
            .map(|j| {
                let how = j.ended.as_deref().map_or_else(
                    || "running".to_string(),
                    |h| format!("ended: {}", clean_line(h)),
                );
                format!("  {} · {} · {how}", j.id, clean_line(&j.command))
            })
            .collect();
        format!("Background jobs:\n{}", lines.join("\n"))
    };
    app.notice(NoticeKind::Info, text);
    Vec::new()
}
