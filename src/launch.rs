//! What every front end does to start an engine: the environment as the
//! settings read it, the session and folder to work in, the factory that
//! builds model clients, and the run's approval mode and sandbox. The app,
//! headless mode and the ACP server (`waypoint acp`) start theirs alike.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use color_eyre::eyre::{Result, WrapErr};

use crate::agent::{AgentConfig, SessionSetup};
use crate::cli::Cli;
use crate::config::{self, Settings};
use crate::context;
use crate::resume;
use crate::secrets;
use crate::session::SessionStore;
use crate::setup;
use crate::tools::Workspace;

/// The environment as the settings read it: a key taken at start-up (see
/// `crate::secrets`) comes from the process's memory, the rest from the
/// environment.
pub fn env_var(key: &str) -> Option<String> {
    secrets::get(key).or_else(|| std::env::var(key).ok())
}

/// The session the engine keeps and the folder it works in; when resumed,
/// a note that says which folder that is (it is said, never assumed).
pub fn open_session(
    cli: &Cli,
    store: &SessionStore,
    choice: Option<&resume::Choice>,
    workspace_dir: PathBuf,
) -> Result<(Workspace, SessionSetup, Option<String>)> {
    let (dir, setup, resumed_in) = match choice {
        Some(choice) => {
            let here = workspace_dir
                .canonicalize()
                .unwrap_or_else(|_| workspace_dir.clone());
            let opened = resume::open(store, choice, &here, cli.workspace.as_deref())?;
            let resumed_in = format!(
                "session {} works in {}",
                crate::session::short_id(&opened.restored.file.header.id),
                opened.workspace.display()
            );
            let setup = SessionSetup::Resume(store.clone(), Box::new(opened.restored));
            (opened.workspace, setup, Some(resumed_in))
        }
        // The demo in its throwaway folder leaves no session in the
        // user's history (it could not be resumed anyway).
        None if cli.demo && cli.workspace.is_none() && !cli.keep => {
            (workspace_dir, SessionSetup::Off, None)
        }
        None => (workspace_dir, SessionSetup::New(store.clone()), None),
    };
    let workspace = Workspace::new(&dir)
        .wrap_err_with(|| format!("workspace {} is not a usable folder", dir.display()))?;
    Ok((workspace, setup, resumed_in))
}

/// The engine keeps the factory: reloading the settings or switching the
/// model builds the next client the way this first one is built.
pub fn settings_factory(
    cli: &Cli,
    file: Option<config::ConfigFile>,
    interactive: bool,
) -> Arc<setup::SettingsFactory> {
    let factory = setup::SettingsFactory::new(
        cli.layer(),
        cli.profile.clone(),
        file,
        env_var,
        Duration::from_millis(cli.retry_base_ms),
        cli.scenario.clone(),
    );
    // The app's demo is paced for a newcomer's eyes (about 10 s).
    Arc::new(factory.with_demo_pace(if interactive && cli.demo { 4 } else { 1 }))
}

/// The approval mode and sandbox for this run, the system prompt that says
/// so (with the environment and the project's instructions, read once and
/// returned: the prompt stays byte-stable for the session, for prompt
/// caching), and the start-up note: which folder a resumed session works
/// in, and why there is no sandbox. The note is said once, on stderr, and
/// returned for the app's first screen.
pub fn settle_safety(
    settings: &Settings,
    config: &mut AgentConfig,
    workspace: &Workspace,
    (interactive, demo): (bool, bool),
    resumed_in: Option<String>,
) -> (Vec<context::Instructions>, Option<String>) {
    let user_dir =
        directories::ProjectDirs::from("", "", "waypoint").map(|d| d.config_dir().to_path_buf());
    let instructions = context::instructions(workspace.root(), user_dir.as_deref());
    for file in &instructions {
        tracing::info!(path = %file.path.display(), bytes = file.size, "project instructions");
    }
    let (mode, note) = setup::safety(settings, config, workspace.root(), interactive, demo);
    setup::workspace_parts(settings, config, workspace.root(), &env_var);
    let environment = format!(
        "{}\n{}",
        context::environment(workspace.root(), &context::today()),
        setup::safety_block(mode, config.tools.sandbox.as_ref())
    );
    config.system_prompt =
        context::system_prompt(&config.system_prompt, &environment, &instructions);
    config.approval = mode;
    let note = match (resumed_in, note) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    };
    if let Some(note) = &note {
        eprintln!("waypoint: {note}");
    }
    (instructions, note)
}
