//! `/goal`: the session's goal (issue 46). `/goal TEXT [--check CMD]
//! [--budget B]` sets it, `/goal pause|resume|clear` and `/goal accept N`
//! act on it, `/goal` alone shows it. Invariant: a mistyped goal is
//! explained in one line and nothing is sent; the engine decides the rest
//! (and says why it refuses).

use std::time::Instant;

use crate::events::{Budget, Goal, GoalAction, Op};
use crate::tui::effect::Effect;
use crate::tui::state::goal::{mark_text, ran, report_text};
use crate::tui::state::{App, NoticeKind};

/// The usage of `/goal`, for errors.
const USAGE: &str =
    "/goal TEXT [--check CMD] [--budget B] [--item-budget B] | pause | resume | clear | accept N";

pub fn run(app: &mut App, args: &str, _now: Instant) -> Vec<Effect> {
    let action = match parse(args) {
        Ok(None) => {
            show(app);
            return Vec::new();
        }
        Ok(Some(action)) => action,
        Err(e) => {
            app.notice(NoticeKind::Error, format!("/goal: {e}"));
            return Vec::new();
        }
    };
    if !app.status.engine.present() {
        app.notice(
            NoticeKind::Error,
            "No goal can be set: no provider is set up.",
        );
        return Vec::new();
    }
    // The engine answers with `GoalSet` / `GoalUpdated` (or says why not).
    vec![Effect::Send(Op::Goal { action })]
}

/// Reads `/goal`'s arguments; `None`: show the goal.
pub fn parse(args: &str) -> Result<Option<GoalAction>, String> {
    let args = args.trim();
    let (verb, rest) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
    let rest = rest.trim();
    match (verb, rest) {
        ("", _) => return Ok(None),
        ("pause", "") => return Ok(Some(GoalAction::Pause)),
        ("resume", "") => return Ok(Some(GoalAction::Resume)),
        ("clear", "") => return Ok(Some(GoalAction::Clear)),
        ("accept", n) => {
            return match n.parse::<usize>() {
                Ok(n) if n > 0 => Ok(Some(GoalAction::Accept { n })),
                _ => Err(format!(
                    "accept takes an item number (1, 2, …). Usage: {USAGE}"
                )),
            };
        }
        _ => {}
    }
    // TEXT, then options: `--check CMD` and `--budget B` take the words up
    // to the next option.
    let mut text = Vec::new();
    let (mut check, mut budget) = (None::<Vec<&str>>, None::<Vec<&str>>);
    let mut item_budget = None::<Vec<&str>>;
    let mut into: Option<&mut Vec<&str>> = None;
    for word in args.split_whitespace() {
        match word {
            "--check" => into = Some(check.insert(Vec::new())),
            "--budget" => into = Some(budget.insert(Vec::new())),
            "--item-budget" => into = Some(item_budget.insert(Vec::new())),
            w => match into.as_mut() {
                Some(list) => list.push(w),
                None => text.push(w),
            },
        }
    }
    if text.is_empty() {
        return Err(format!("the goal's text is missing. Usage: {USAGE}"));
    }
    let check = match check {
        Some(words) if words.is_empty() => {
            return Err(format!("--check needs a command. Usage: {USAGE}"));
        }
        words => words.map(|w| w.join(" ")),
    };
    let read = |words: Option<Vec<&str>>| match words {
        Some(words) => Budget::parse(&words.join(" ")),
        None => Ok(Budget::default()),
    };
    let (budget, item_budget) = (read(budget)?, read(item_budget)?);
    Ok(Some(GoalAction::Set {
        goal: Goal {
            text: text.join(" "),
            check,
            budget,
            item_budget,
        },
    }))
}

/// `/goal` alone: the goal's state and report, or that none is set.
fn show(app: &mut App) {
    let view = &app.root.plan.goal;
    let Some(goal) = view.goal.as_ref() else {
        app.notice(NoticeKind::Info, format!("No goal is set. {USAGE}"));
        return;
    };
    let text = match &view.report {
        Some(report) => report_text(report),
        None => format!(
            "Goal {}: {}",
            view.state.map(|s| s.as_str()).unwrap_or("active"),
            crate::text::clean_line(&goal.text)
        ),
    };
    let mut lines = vec![text];
    let plan = &app.root.plan;
    if let Some(f) = plan.stats.forecast().filter(|_| plan.open() > 0) {
        lines.push(format!("Forecast: {}.", f.describe()));
    }
    for (n, item) in plan.items.iter().enumerate() {
        if let (Some(mark), Some(e)) = (view.mark(item), view.last(item)) {
            lines.push(format!("  {}. {}: {}", n + 1, mark_text(mark), ran(e)));
        }
    }
    app.notice(NoticeKind::Info, lines.join("\n"));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn goal_arguments_read_as_typed() {
        assert_eq!(parse("").unwrap(), None);
        assert_eq!(parse("pause").unwrap(), Some(GoalAction::Pause));
        assert_eq!(
            parse("accept 3").unwrap(),
            Some(GoalAction::Accept { n: 3 })
        );
        assert!(parse("accept x").is_err());
        let Some(GoalAction::Set { goal }) =
            parse("make the parser fast --check cargo test -p parser --budget 2M $5").unwrap()
        else {
            panic!("a goal")
        };
        assert_eq!(goal.text, "make the parser fast");
        assert_eq!(goal.check.as_deref(), Some("cargo test -p parser"));
        assert_eq!(goal.budget.tokens, Some(2_000_000));
        assert_eq!(goal.budget.cost_cents, Some(500));
        // A bad budget is a one-line error; so is a missing text or check.
        assert!(
            parse("ship it --budget lots")
                .unwrap_err()
                .contains("not a budget")
        );
        assert!(parse("--budget 2M").is_err());
        assert!(parse("ship it --check").is_err());
        // A goal may start with a word that is a verb elsewhere.
        assert!(matches!(
            parse("pause the world").unwrap(),
            Some(GoalAction::Set { .. })
        ));
    }
}
