//! ACP clients nobody here wrote, as `.ci/run` installs them: the official
//! TypeScript SDK (`@agentclientprotocol/sdk`, driven by
//! `tests/acp/client.mjs`) and the `acpx` CLI, in the folder named by
//! `WAYPOINT_TEST_ACP_DIR`. Without them (or without `node`) a test says it
//! was skipped; with `WAYPOINT_TEST_ACP_REQUIRED` set (as `.ci/run` does)
//! it fails instead.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long one client run may take (a few turns of a scripted model;
/// the machine may be busy).
const LIMIT: Duration = Duration::from_secs(120);

fn skip(why: &str) -> Option<PathBuf> {
    assert!(
        std::env::var_os("WAYPOINT_TEST_ACP_REQUIRED").is_none(),
        "{why} (WAYPOINT_TEST_ACP_REQUIRED is set; .ci/run installs the ACP clients with npm)"
    );
    eprintln!(
        "SKIPPED: {why} (set WAYPOINT_TEST_ACP_DIR to the folder npm installed \
         @agentclientprotocol/sdk and acpx into; .ci/run does)"
    );
    None
}

/// The folder the clients are installed in, or `None` after saying the
/// test is skipped.
pub fn dir() -> Option<PathBuf> {
    if !on_path("node") {
        return skip("node is not on PATH: the ACP tests need Node.js 20 or newer");
    }
    let Some(dir) = std::env::var_os("WAYPOINT_TEST_ACP_DIR").map(PathBuf::from) else {
        return skip("WAYPOINT_TEST_ACP_DIR is not set");
    };
    let sdk = dir.join("node_modules/@agentclientprotocol/sdk/package.json");
    if !sdk.is_file() {
        return skip(&format!("{} is missing", sdk.display()));
    }
    Some(dir)
}

/// The `acpx` program, or `None` after saying the test is skipped.
pub fn acpx() -> Option<PathBuf> {
    let program = dir()?.join("node_modules/.bin/acpx");
    if !program.is_file() {
        return skip(&format!("{} is missing", program.display()));
    }
    Some(program)
}

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(name).is_file()))
}

/// The environment the agent runs in, as `support::run_waypoint` gives
/// it: the machine's PATH, everything else of the user's left out.
pub fn agent_env(home: &Path) -> Vec<(String, String)> {
    vec![
        ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
        ("HOME".into(), home.to_string_lossy().into_owned()),
        (
            "WAYPOINT_HOME".into(),
            home.join(".waypoint").to_string_lossy().into_owned(),
        ),
    ]
}

/// Runs `program` with `args` in folder `cwd` and `env` (only), its own
/// process group, killed after [`LIMIT`]: its exit status, stdout and
/// stderr.
pub fn run_bounded(
    program: &Path,
    args: &[&str],
    cwd: &Path,
    env: &[(String, String)],
) -> (std::process::ExitStatus, String, String) {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let reader = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let out = reader(Box::new(child.stdout.take().unwrap()));
    let err = reader(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > LIMIT {
            // SAFETY: kill has no memory-safety preconditions; the child
            // leads its own group.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            panic!(
                "{} did not finish in {LIMIT:?}\nstdout:\n{}\nstderr:\n{}",
                program.display(),
                out.join().unwrap(),
                err.join().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (status, out.join().unwrap(), err.join().unwrap())
}

/// What the SDK client printed: one JSON value a line (see
/// `tests/acp/client.mjs`), with the agent's stderr for failure messages.
pub struct Log {
    pub lines: Vec<Value>,
    pub stderr: String,
}

/// Runs `tests/acp/client.mjs` on `script` (written to `home`), the SDK
/// in `dir`, in folder `home` (the agent too: its workspace is the one
/// session/new names).
pub fn run_client(dir: &Path, home: &Path, script: &Value) -> Log {
    let file = home.join("acp-client-script.json");
    std::fs::write(&file, serde_json::to_string_pretty(script).unwrap()).unwrap();
    let client = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/acp/client.mjs");
    let mut env = agent_env(home);
    env.push((
        "WAYPOINT_TEST_ACP_DIR".into(),
        dir.to_string_lossy().into_owned(),
    ));
    let (status, stdout, stderr) = run_bounded(
        Path::new("node"),
        &[client.to_str().unwrap(), file.to_str().unwrap()],
        home,
        &env,
    );
    assert!(
        status.success(),
        "the ACP client failed ({status})\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let lines = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let log = Log { lines, stderr };
    // WAYPOINT_TEST_ACP_DUMP=1: everything the client saw, to read along.
    if std::env::var_os("WAYPOINT_TEST_ACP_DUMP").is_some() {
        eprintln!("{}", log.dump());
    }
    log
}

impl Log {
    fn at(&self, step: usize) -> impl Iterator<Item = &Value> {
        self.lines
            .iter()
            .filter(move |l| l["step"].as_u64() == Some(step as u64))
    }

    /// The answer to step `step`'s request (a failure when it failed).
    pub fn result(&self, step: usize) -> &Value {
        &self
            .at(step)
            .find(|l| l["event"] == "result")
            .unwrap_or_else(|| panic!("step {step} has no result\n{}", self.dump()))["result"]
    }

    /// The `update` of each session/update received during step `step`.
    pub fn updates(&self, step: usize) -> Vec<&Value> {
        self.at(step)
            .filter(|l| l["event"] == "update")
            .map(|l| &l["params"]["update"])
            .collect()
    }

    /// Step `step`'s updates of kind `kind` (`sessionUpdate`).
    pub fn updates_of(&self, step: usize, kind: &str) -> Vec<&Value> {
        self.updates(step)
            .into_iter()
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    }

    /// The permission requests of step `step`, each with the answer given.
    pub fn permissions(&self, step: usize) -> Vec<&Value> {
        self.at(step)
            .filter(|l| l["event"] == "permission")
            .collect()
    }

    /// The one line of event `event`.
    pub fn event(&self, event: &str) -> &Value {
        self.lines
            .iter()
            .find(|l| l["event"] == event)
            .unwrap_or_else(|| panic!("no {event} line\n{}", self.dump()))
    }

    /// Where (which line) the first line matching `keep` is.
    pub fn position(&self, keep: impl Fn(&Value) -> bool) -> Option<usize> {
        self.lines.iter().position(keep)
    }

    /// Everything, for a failure message.
    pub fn dump(&self) -> String {
        let mut text: String = self
            .lines
            .iter()
            .map(|l| {
                let mut s = l.to_string();
                s.truncate(600);
                s + "\n"
            })
            .collect();
        text.push_str("agent stderr:\n");
        text.push_str(&self.stderr);
        text
    }
}

/// Every `text` string in `value`, at any depth, joined (the message
/// chunks, a tool call's output, a command shown).
/// The session updates of `kind` among raw messages (acpx's log).
pub fn updates_in<'a>(messages: &'a [Value], kind: &str) -> Vec<&'a Value> {
    messages
        .iter()
        .filter(|m| m["params"]["update"]["sessionUpdate"] == kind)
        .map(|m| &m["params"]["update"])
        .collect()
}

pub fn texts(value: &Value) -> String {
    let mut out = String::new();
    collect(value, &mut out);
    out
}

fn collect(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                match v {
                    Value::String(s) if k == "text" => out.push_str(s),
                    _ => collect(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect(v, out)),
        _ => {}
    }
}

/// A test's folders, outside every folder the sandbox hides: `home` (the
/// agent's HOME and data) and `ws`, the workspace.
pub struct Dirs {
    _root: tempfile::TempDir,
    pub home: PathBuf,
    pub ws: PathBuf,
}

pub fn dirs() -> Dirs {
    let root = super::sandbox::outside_hidden("acp-");
    let home = root.path().join("home");
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    Dirs {
        _root: root,
        home,
        ws,
    }
}

/// The agent the client spawns: `waypoint acp --scenario FILE` (the
/// scenario written to `home`) and `extra`, in the agent's environment.
pub fn agent(home: &Path, scenario: Value, extra: &[&str]) -> Value {
    let file = home.join("scenario.json");
    std::fs::write(&file, scenario.to_string()).unwrap();
    let mut args = vec!["acp".to_string(), "--scenario".into()];
    args.push(file.to_string_lossy().into_owned());
    args.extend(extra.iter().map(|a| a.to_string()));
    let env: serde_json::Map<String, Value> = agent_env(home)
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    json!({"command": env!("CARGO_BIN_EXE_waypoint"), "args": args, "env": env})
}

/// Plays `steps` against `agent`; `None` when the client is not installed.
pub fn play(d: &Dirs, agent: Value, steps: Value) -> Option<Log> {
    let dir = dir()?;
    let mut script = agent;
    script["steps"] = steps;
    Some(run_client(&dir, &d.home, &script))
}

pub fn todo(items: &[(&str, &str)]) -> Value {
    let todos: Vec<Value> = items
        .iter()
        .map(|(content, status)| {
            json!({"content": content, "activeForm": content, "status": status})
        })
        .collect();
    json!({"name": "todo_write", "input": {"todos": todos}})
}

/// A plan update's entries as (content, status).
pub fn entries(plan_entries: &Value) -> Vec<(String, String)> {
    plan_entries
        .as_array()
        .unwrap_or_else(|| panic!("no entries: {plan_entries}"))
        .iter()
        .map(|e| {
            (
                e["content"].as_str().unwrap().to_string(),
                e["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

pub fn owned(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(c, s)| (c.to_string(), s.to_string()))
        .collect()
}
