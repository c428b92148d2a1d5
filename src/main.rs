//! The `waypoint` binary: parses flags, resolves the settings (flags, env,
//! config file), sets up logging to a file, and runs the full-screen app,
//! headless mode, or a subcommand.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{CommandFactory, Parser};
use color_eyre::eyre::{Result, WrapErr, eyre};
use waypoint::agent::{Agent, AgentConfig, AgentHandle, ClientFactory, ModelChoice, SessionSetup};
use waypoint::cli::{Cli, Command};
use waypoint::config::{self, Inputs, Settings, Theme};
use waypoint::demo::DemoDir;
use waypoint::events::Op;
use waypoint::headless::{InputFormat, OpsIn, Outcome, Printer, RunResult, Seam, print_events};
use waypoint::launch::{env_var, open_session, settings_factory, settle_safety};
use waypoint::prompt;
use waypoint::resume;
use waypoint::secrets;
use waypoint::session::SessionStore;
use waypoint::setup;
use waypoint::tools::Workspace;
use waypoint::tui::app::{AppSettings, StartEngine, TuiOptions};
use waypoint::tui::notify::Notifier;
use waypoint::tui::style::Palette;

const DEMO_PROMPT: &str = "Write a small greeting script, run it, and add a test.";

fn main() {
    // SAFETY: first thing in `main`: no other thread exists yet and nothing
    // else reads or changes the environment while this runs.
    unsafe { secrets::take_from_environment() };
    let cli = Cli::parse();
    if let Some(Command::Completions { shell }) = cli.command {
        let mut script = Vec::new();
        clap_complete::generate(shell, &mut Cli::command(), "waypoint", &mut script);
        let written = std::io::Write::write_all(&mut std::io::stdout(), &script);
        std::process::exit(i32::from(written.is_err()));
    }
    if let Some(Command::Schema) = cli.command {
        let schema = waypoint::headless::schema_text();
        let written = std::io::Write::write_all(&mut std::io::stdout(), schema.as_bytes());
        std::process::exit(i32::from(written.is_err()));
    }
    // Before anything else (no thread, no runtime): this process becomes the command.
    if let Some(Command::Sandbox {
        write,
        no_network,
        command,
    }) = &cli.command
    {
        std::process::exit(setup::run_sandboxed(write, !no_network, command));
    }
    if let Err(e) = color_eyre::install() {
        eprintln!("waypoint: cannot install the error handler: {e}");
    }
    setup::init_logging();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("waypoint: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    let code = match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("waypoint: {e:#}");
            1
        }
    };
    // Dropping the runtime drops every task, and with them any child process
    // still running (tools kill their process group on drop).
    runtime.shutdown_timeout(Duration::from_secs(1));
    setup::say_unsaved(); // the terminal is restored by now
    std::process::exit(code);
}

/// The whole run: the settings, then a subcommand, the full-screen app or
/// a headless task; returns the exit code.
async fn run(cli: Cli) -> Result<i32> {
    let (config_path, file) = config::load(&env_var)?;
    let settings = config::resolve(Inputs {
        flags: cli.layer(),
        profile: cli.profile.clone(),
        env: &env_var,
        file: file.clone(),
    })?;
    let store = session_store();
    if let Some(code) = subcommand(&cli, &settings, &store, config_path.as_deref())? {
        return Ok(code);
    }
    if let Some(Command::Acp) = cli.command {
        return waypoint::acp::serve(cli, settings, file, store).await;
    }
    if let Some(code) = waypoint::undo_cli::command(cli.command.as_ref(), &store).await {
        return code.map_err(|e| eyre!(e));
    }
    if let Some(code) = waypoint::workspace_cli::workspace_command(&cli, &settings).await {
        return Ok(code?);
    }
    let interactive =
        cli.print.is_none() && std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let choice = resume::choice(cli.continue_last, cli.resume.as_deref());
    // `-r` without an id: a picker in the app, a list in headless mode.
    let pick = cli.resume.as_deref().is_some_and(|id| id.trim().is_empty());
    if pick && !interactive {
        print!(
            "{}",
            resume::table(&store.list()?, waypoint::session::now_ms())
        );
        return Ok(0);
    }
    let headless = headless_prompt(&cli, interactive, choice.is_some())?;
    cli.check_approve_plan(
        headless.is_some(),
        headless.as_ref().is_some_and(Option::is_some),
        choice.is_some(),
    )
    .map_err(|e| eyre!(e))?;
    let edited = cli.edited_plan().map_err(|e| eyre!(e))?;
    // The demo's workspace goes when this guard does (at the end of `run`),
    // unless --keep.
    let (workspace_dir, _demo_dir) = workspace_dir(&cli, interactive)?;
    let (workspace, setup, resumed_in) =
        open_session(&cli, &store, choice.as_ref(), workspace_dir)?;
    let mut config = setup::agent_config(&settings);
    config.auto_continue = cli.auto_continue.unwrap_or(0);
    let modes = (interactive, cli.demo);
    let (instructions, note) = settle_safety(&settings, &mut config, &workspace, modes, resumed_in);
    let factory = settings_factory(&cli, file, interactive);
    let client = factory
        .build(&ModelChoice::default(), false)
        .map_err(|e| e.to_string());
    let Some(prompt) = headless else {
        let engine = client.map_err(|reason| {
            let ollama = setup::ollama_running();
            setup::first_run_help(&reason, config_path.as_deref(), &env_var, ollama)
        });
        let instructions = instructions.iter();
        let instructions = instructions.map(|f| (f.path.display().to_string(), f.size));
        let session = TuiSession {
            setup,
            store,
            pick,
            safety_note: note,
            instructions: instructions.collect(),
        };
        return run_tui(&cli, &settings, workspace, config, engine, factory, session).await;
    };
    let client = client.map_err(|reason| eyre!("{reason}"))?;
    tracing::info!(model = client.model(), workspace = %workspace.root().display(), "headless run");
    // The task is given at start: its first request waits for the MCP
    // servers still starting, so their tools are in it.
    config.tools.mcp.wait_at_start = true;
    let started = std::time::Instant::now();
    let handle = Agent::builder(client, workspace)
        .factory(factory)
        .config(config)
        .session(setup)
        .spawn()?;
    run_headless(&cli, &settings, handle, (prompt, edited), started).await
}

/// Without a home folder, sessions still survive the process (not a reboot).
fn session_store() -> SessionStore {
    SessionStore::from_env(env_var).unwrap_or_else(|e| {
        let dir = std::env::temp_dir().join("waypoint-sessions");
        eprintln!(
            "waypoint: {e}; sessions are kept in {} for now",
            dir.display()
        );
        SessionStore::new(dir)
    })
}

/// Runs `config`, `sessions` or `export`; `None` when the command is none of them.
fn subcommand(
    cli: &Cli,
    settings: &Settings,
    store: &SessionStore,
    config_path: Option<&std::path::Path>,
) -> Result<Option<i32>> {
    match &cli.command {
        Some(Command::Config) => print!("{}", setup::config_text(cli, settings, config_path)?),
        Some(Command::Sessions { action }) => {
            let out = &mut std::io::stdout().lock();
            return resume::sessions(store, action.as_ref(), out).map(Some);
        }
        Some(Command::Export { id, output, format }) => {
            let to_terminal = output.is_none() && std::io::stdout().is_terminal();
            let bytes = resume::export(store, id, *format, &settings.prices, to_terminal)?;
            match output {
                Some(path) => {
                    std::fs::write(path, &bytes)
                        .wrap_err_with(|| format!("cannot write {}", path.display()))?;
                    eprintln!("waypoint: exported to {}", path.display());
                }
                None => std::io::Write::write_all(&mut std::io::stdout().lock(), &bytes)?,
            }
        }
        _ => return Ok(None),
    }
    Ok(Some(0))
}

/// Reads the prompt before anything else, so a missing one fails fast. A
/// resumed session needs none: it continues where it stopped.
/// `None`: the app; `Some(None)`: headless, resuming without a new message.
fn headless_prompt(cli: &Cli, interactive: bool, resuming: bool) -> Result<Option<Option<String>>> {
    if interactive {
        return Ok(None);
    }
    let given = cli
        .print
        .as_deref()
        .is_some_and(|p| p != prompt::FROM_STDIN);
    if cli.goal.is_some() {
        return waypoint::goal_cli::goal_task(given)
            .map(Some)
            .map_err(|e| eyre!(e));
    }
    // Ops on stdin (`--input-format jsonl`): a task only from `-p TEXT`.
    if cli.input_format == InputFormat::Jsonl {
        return Ok(Some(cli.print.clone().filter(|p| p != prompt::FROM_STDIN)));
    }
    match read_prompt(cli) {
        Ok(prompt) => Ok(Some(Some(prompt))),
        Err(_) if resuming && !given && !cli.demo => Ok(Some(None)),
        Err(e) => Err(e),
    }
}

/// The folder to work in: `--workspace`, a new demo folder (with the guard
/// that removes it), or the current directory.
fn workspace_dir(cli: &Cli, interactive: bool) -> Result<(PathBuf, Option<DemoDir>)> {
    match (&cli.workspace, cli.demo) {
        (Some(dir), _) => Ok((dir.clone(), None)),
        (None, true) => {
            let dir = tempfile::Builder::new()
                .prefix("waypoint-demo-")
                .tempdir()
                .wrap_err("cannot create a temporary demo workspace")?;
            let path = dir.path().to_path_buf();
            if !interactive {
                let fate = if cli.keep {
                    "kept"
                } else {
                    "removed on exit; --keep keeps it"
                };
                eprintln!("waypoint: demo workspace {} ({fate})", path.display());
            }
            let keep = cli.keep;
            let guard = DemoDir {
                dir: Some(dir),
                keep,
                tell: interactive,
            };
            Ok((path, Some(guard)))
        }
        // A folder deleted under the shell cannot be read back (getcwd fails).
        (None, false) => {
            let here = std::env::current_dir().wrap_err(
                "cannot read the current directory (was it deleted?); run from an existing folder or pass --workspace DIR",
            )?;
            Ok((here, None))
        }
    }
}

/// Headless mode: hands the engine the task (or the resume), prints its
/// events until the turn ends, stops it, and prints the totals.
async fn run_headless(
    cli: &Cli,
    settings: &Settings,
    mut handle: AgentHandle,
    (prompt, edited): (Option<String>, Option<Vec<waypoint::todo::TodoItem>>),
    started: std::time::Instant,
) -> Result<i32> {
    let first = match prompt {
        _ if cli.goal.is_some() => waypoint::goal_cli::goal_op(cli),
        Some(text) => Op::Submit { text },
        None if cli.approve_plan => Op::ApprovePlan {
            mode: cli.approval,
            fresh: cli.fresh,
            items: edited,
        },
        None => Op::Resume,
    };
    let stdout = std::io::stdout().lock();
    let live = stdout.is_terminal();
    let mut printer = Printer::new(cli.output_format, stdout, std::io::stderr())
        .live_text(live)
        .approving(cli.approve_plan);
    let ops = OpsIn::stdin(cli.input_format);
    let seam = Seam {
        ops: &handle.ops,
        events: &mut handle.events,
    };
    let printed = print_events(seam, &mut printer, first, ops).await;
    // Whatever happened (even a closed stdout), stop the engine so a running
    // tool is killed with its process group before the process exits.
    let _ = handle.ops.send(Op::Quit);
    let joined = tokio::time::timeout(Duration::from_secs(5), handle.task).await;
    match (printed.map_err(|e| eyre!(e))?, joined) {
        (Some((outcome, by_model)), _) => {
            let finished = printer.finish(&RunResult {
                outcome,
                by_model: by_model.priced(&settings.prices),
                duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            });
            // After a hang-up there may be no terminal to write to: the
            // exit code still says what happened.
            if !matches!(outcome, Outcome::HungUp | Outcome::Terminated) {
                finished.wrap_err("cannot write the output")?;
            }
            Ok(outcome.exit_code())
        }
        (None, Ok(Err(e))) => Err(eyre!("the engine stopped unexpectedly: {e}")),
        (None, _) => Err(eyre!("the engine stopped unexpectedly")),
    }
}

/// What the app does with sessions: the one its engine keeps, where they
/// live, and whether to open the picker first (`-r` without an id).
struct TuiSession {
    setup: SessionSetup,
    store: SessionStore,
    pick: bool,
    /// The project instructions read (path, bytes), for `/context`.
    instructions: Vec<(String, u64)>,
    /// Why the sandbox is missing, when `auto` was asked for.
    safety_note: Option<String>,
}

/// The full-screen app; without a usable provider it still opens and says how to set one up.
async fn run_tui(
    cli: &Cli,
    settings: &Settings,
    workspace: Workspace,
    mut config: AgentConfig,
    client: std::result::Result<Arc<dyn waypoint::llm::ModelClient>, String>,
    factory: Arc<setup::SettingsFactory>,
    session: TuiSession,
) -> Result<i32> {
    let initial_prompt = cli
        .prompt
        .clone()
        .or_else(|| cli.demo.then(|| DEMO_PROMPT.to_string()));
    // A task given at start waits for the MCP servers still starting
    // before its first request (Esc skips the wait).
    config.tools.mcp.wait_at_start = initial_prompt.is_some();
    let TuiSession {
        setup,
        store,
        pick,
        instructions,
        safety_note,
    } = session;
    // A session to resume is handed to the first engine started (now, or
    // once the settings work).
    let mut setup = Some(setup);
    let shown_workspace = workspace.root().display().to_string();
    let model = match &client {
        Ok(c) => c.model().to_string(),
        Err(_) => settings.model.value.clone(),
    };
    tracing::info!(model, workspace = %shown_workspace, "interactive session");
    // Without a provider at launch, a message or F5 reads the settings
    // again and starts the engine then (a key added to the config file works
    // without a restart).
    let start: Option<StartEngine> = client.is_err().then(|| {
        let (factory, workspace, config) = (factory.clone(), workspace.clone(), config.clone());
        let config_path = config::config_path(&env_var);
        let store = store.clone();
        let mut setup = setup.take();
        Box::new(move || match factory.build(&ModelChoice::default(), true) {
            Ok(client) => {
                let model = client.model().to_string();
                let setup = setup
                    .take()
                    .unwrap_or_else(|| SessionSetup::New(store.clone()));
                let handle = Agent::builder(client, workspace.clone())
                    .factory(factory.clone())
                    .config(config.clone())
                    .session(setup)
                    .spawn()
                    .map_err(|e| e.to_string())?;
                Ok((handle, model))
            }
            Err(e) => Err(setup::first_run_help(
                &e.to_string(),
                config_path.as_deref(),
                &env_var,
                setup::ollama_running(),
            )),
        }) as StartEngine
    });
    let engine = match client {
        Ok(c) => {
            let setup = setup
                .take()
                .unwrap_or_else(|| SessionSetup::New(store.clone()));
            Ok(Agent::builder(c, workspace)
                .factory(factory)
                .config(config)
                .session(setup)
                .spawn()?)
        }
        Err(e) => Err(e),
    };
    let palette = match settings.theme.value {
        Theme::Auto => Palette::colored(),
        Theme::NoColor => Palette::monochrome(),
    };
    let prices = waypoint::tui::app::Prices::of(&model, &settings.prices);
    let ended = waypoint::tui::app::run(TuiOptions {
        start,
        model,
        workspace: shown_workspace,
        initial_prompt,
        engine,
        palette,
        prices,
        sessions: Some(store),
        pick_session: pick,
        instructions,
        notice: safety_note,
        settings: AppSettings {
            max_retries: Some(settings.max_retries.value),
            notify: Notifier::for_terminal(&settings.notify, &env_var),
        },
    })
    .await
    .wrap_err("the terminal failed")?;
    if let Some((id, path)) = &ended.session
        && std::path::Path::new(path).exists()
    {
        eprintln!("resume with: waypoint -r {id}");
    }
    Ok(ended.ended.exit_code())
}

fn read_prompt(cli: &Cli) -> Result<String> {
    let sources = prompt::Sources {
        print: cli.print.as_deref(),
        positional: cli.prompt.as_deref(),
        demo: cli.demo.then_some(DEMO_PROMPT),
    };
    prompt::task(sources, prompt::stdin_kind(), prompt::read_stdin).map_err(|e| eyre!("{e}"))
}
