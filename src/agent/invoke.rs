//! Skills and custom commands, from the engine's side: a prompt typed as
//! `/NAME args` that names one brings its text to the model (a skill's
//! instructions, a command's prompt with the arguments put in), and a
//! skill's `## Plan` checklist seeds the plan as a user revision, whether
//! the user typed `/NAME` or the model called the `skill` tool. The app
//! is told the names at the start, for its command list.

use super::voice::Voice;
use crate::events::{CatalogEntry, ErrorKind, Event};
use crate::todo::{Author, PlanEdit};

/// Skills, commands and the background jobs, as a thread tells of them.
pub(super) struct Invocations<'a>(pub Voice<'a>);

impl Invocations<'_> {
    /// Tells the app the skills and commands, and what could not be read.
    pub fn tell_catalog(&self) {
        let catalog = self.0.host.config.tools.catalog.clone();
        for problem in &catalog.problems {
            self.0.emit(Event::Error {
                kind: ErrorKind::Catalog,
                message: format!("Skipped: {problem}"),
            });
        }
        if catalog.is_empty() {
            return;
        }
        let skills = catalog.skills.iter().map(|s| CatalogEntry {
            name: s.name.clone(),
            hint: None,
            description: s.description.clone(),
            skill: true,
        });
        let commands = catalog.commands.iter().map(|c| CatalogEntry {
            name: c.name.clone(),
            hint: c
                .hint
                .as_deref()
                .map(|h| crate::text::clean_line(h).into_owned()),
            description: c.description.clone(),
            skill: false,
        });
        let entries = commands.chain(skills).collect();
        self.0.emit(Event::Catalog { entries });
    }

    /// What a prompt typed as `/NAME args` brings when NAME is a custom
    /// command or a skill (the command's prompt, or the skill's
    /// instructions; a skill's plan is seeded); `None` for any other.
    pub fn invoked(&self, text: &str) -> Option<String> {
        let rest = text.trim().strip_prefix('/')?;
        let (name, args) = rest
            .split_once(char::is_whitespace)
            .map_or((rest, ""), |(n, a)| (n, a.trim()));
        let catalog = self.0.host.config.tools.catalog.clone();
        if let Some(command) = catalog.command(name) {
            let expanded = crate::skills::expand(&command.body, args);
            return Some(format!(
                "[The user ran the command /{name} ({}); its prompt follows.]\n\n{expanded}",
                command.path.display()
            ));
        }
        let skill = catalog.skill(name)?;
        Some(match crate::skills::body(skill) {
            Ok(body) => {
                self.seed_plan(name, &body, Author::User);
                format!(
                    "[The user invoked the skill `{name}`: follow it.]\n\n{}",
                    crate::tools::skill::loaded(skill, &body, args)
                )
            }
            Err(why) => {
                format!("[The user invoked the skill `{name}`, but it could not be read: {why}.]")
            }
        })
    }

    /// Sends the jobs to the app when one started, ended or was stopped
    /// since it last heard.
    pub fn tell_jobs(&self) {
        if self.0.host.shared.tasks.jobs.take_changed() {
            let jobs = self.0.host.shared.tasks.jobs.infos();
            self.0.emit(Event::Jobs { jobs });
        }
    }

    /// The app hears of a background job's end when it happens, even
    /// while the agent is idle (the root thread's outbox tells it).
    pub fn watch_jobs(&self) {
        let events = self.0.host.events.clone();
        self.0
            .host
            .shared
            .tasks
            .jobs
            .tell_with(std::sync::Arc::new(move |jobs| {
                events.send(Event::Jobs { jobs });
            }));
    }

    /// After a call that loaded skill `name` (`loaded`: the text the
    /// model read): the skill's plan.
    pub fn skill_loaded(&self, name: &str, loaded: &str) {
        self.seed_plan(name, loaded, Author::Skill);
    }

    /// The skill's `## Plan` checklist becomes the plan, when the plan
    /// has no open item (a plan at work is never replaced): the user's
    /// revision when the user typed `/NAME`, the skill's when the model
    /// loaded it (a repository's skill speaks for its author, not the
    /// user). The model hears of it either way.
    fn seed_plan(&self, skill: &str, body: &str, author: Author) {
        let items = crate::skills::plan_template(body);
        if items.is_empty() || !self.0.thread.plan.lock().manager.open_items().is_empty() {
            return;
        }
        let (items, mut checks): (Vec<String>, Vec<Option<String>>) = items.into_iter().unzip();
        if checks.iter().all(Option::is_none) {
            checks.clear();
        }
        let edit = PlanEdit::Template {
            skill: skill.to_string(),
            items,
            checks,
        };
        let event = super::plan::apply_user_edit(&self.0.thread.plan, &edit, author);
        // Sent as the dispatcher sends a user's edit; recorded when settled.
        self.0.host.events.send(event);
    }
}
