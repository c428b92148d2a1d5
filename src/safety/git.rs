//! Git as the rules read it: its own options (`-c alias.*` and other
//! `-c` keys that run commands), its commands by every name they have
//! (`git-push`, the plumbing `send-pack` that pushes too), and what makes
//! a git command run something its words do not show: a word that is no
//! git command (an alias), or a line that writes git's configuration
//! (`git config alias.p push`, `>> .git/config`, a hook) and runs git.

use super::lexer::Word;

/// `git -c` keys that run nothing (a prefix ends with `.`).
const QUIET_CONFIG: &[&str] = &[
    "user.",
    "color.",
    "advice.",
    "column.",
    "i18n.",
    "init.defaultbranch",
    "safe.directory",
    "commit.gpgsign",
    "tag.gpgsign",
    "pull.rebase",
    "pull.ff",
    "merge.ff",
    "push.default",
    "core.quotepath",
    "core.autocrlf",
    "core.abbrev",
    "log.",
    "protocol.version",
];

/// Git's commands (git 2.4x, `git help -a` and `git --exec-path`): a word
/// that is none of them can only be an alias or another program's.
const COMMANDS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archimport",
    "archive",
    "bisect",
    "blame",
    "branch",
    "bugreport",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "citool",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "credential",
    "credential-cache",
    "credential-store",
    "cvsexportcommit",
    "cvsimport",
    "cvsserver",
    "daemon",
    "describe",
    "diagnose",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "difftool",
    "fast-export",
    "fast-import",
    "fetch",
    "fetch-pack",
    "filter-branch",
    "fmt-merge-msg",
    "for-each-ref",
    "for-each-repo",
    "format-patch",
    "fsck",
    "fsck-objects",
    "gc",
    "get-tar-commit-id",
    "grep",
    "gui",
    "hash-object",
    "help",
    "hook",
    "http-backend",
    "http-fetch",
    "http-push",
    "imap-send",
    "index-pack",
    "init",
    "init-db",
    "instaweb",
    "interpret-trailers",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "mailinfo",
    "mailsplit",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-index",
    "merge-one-file",
    "merge-tree",
    "mergetool",
    "mktag",
    "mktree",
    "multi-pack-index",
    "mv",
    "name-rev",
    "notes",
    "p4",
    "pack-objects",
    "pack-redundant",
    "pack-refs",
    "patch-id",
    "prune",
    "prune-packed",
    "pull",
    "push",
    "quiltimport",
    "range-diff",
    "read-tree",
    "rebase",
    "receive-pack",
    "reflog",
    "refs",
    "remote",
    "repack",
    "replace",
    "replay",
    "request-pull",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "send-email",
    "send-pack",
    "shortlog",
    "show",
    "show-branch",
    "show-index",
    "show-ref",
    "sparse-checkout",
    "stage",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "svn",
    "switch",
    "symbolic-ref",
    "tag",
    "unpack-file",
    "unpack-objects",
    "update-index",
    "update-ref",
    "update-server-info",
    "upload-archive",
    "upload-pack",
    "var",
    "verify-commit",
    "verify-pack",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
];

/// Commands that do what another does, under another name: plumbing
/// (`send-pack` pushes) and porcelain (`switch` checks out).
const SAME_AS: &[(&str, &str)] = &[
    ("send-pack", "push"),
    ("http-push", "push"),
    ("fetch-pack", "fetch"),
    ("http-fetch", "fetch"),
    ("commit-tree", "commit"),
    ("switch", "checkout"),
    ("restore", "checkout"),
    ("checkout-index", "checkout"),
    ("stage", "add"),
    ("init-db", "init"),
];

/// Words that name git's configuration or hooks: writing there changes
/// what a later git command runs.
const CONFIG_PATHS: &[&str] = &[
    ".git/config",
    ".gitconfig",
    ".git/hooks",
    ".config/git/",
    ".git/info/attributes",
];

/// Whether `word` is one of git's commands.
pub fn is_command(word: &str) -> bool {
    COMMANDS.contains(&word)
}

/// The command `git-NAME` is (`git-push` is `git push`).
pub fn dashed(program: &str) -> Option<&str> {
    program.strip_prefix("git-").filter(|name| is_command(name))
}

/// The command another git command does the same as (`send-pack`: `push`).
pub fn same_as(command: &str) -> Option<&'static str> {
    SAME_AS
        .iter()
        .find(|(name, _)| *name == command)
        .map(|(_, same)| *same)
}

/// Where git's command is among its arguments (after its own options).
pub fn command_at(args: &[Word]) -> Option<usize> {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        match w.text.as_str() {
            "-c" | "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env"
            | "--exec-path" => i += 2,
            t if t.starts_with('-') => i += 1,
            _ => return Some(i),
        }
    }
    None
}

/// Whether a word names git's configuration or hooks.
pub fn names_config(text: &str) -> bool {
    CONFIG_PATHS.iter().any(|p| text.contains(p))
}

/// Why git's own options make it run what the words do not show: `-c
/// alias.*` defines an alias, most other `-c` keys can run commands
/// (`core.pager`, `core.fsmonitor`, …), `--config-env` reads a variable.
pub fn follow_options(args: &[Word]) -> Option<String> {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        i += 1;
        match t {
            "-c" => {
                if let Some(why) = args.get(i).and_then(check_config) {
                    return Some(why);
                }
                i += 1;
            }
            "--config-env" => {
                return Some("`git --config-env` takes configuration from a variable".into());
            }
            _ if t.starts_with("--config-env=") => {
                return Some("`git --config-env` takes configuration from a variable".into());
            }
            "-C" | "--git-dir" | "--work-tree" | "--namespace" => i += 1,
            _ if t.starts_with('-') => {}
            _ => break,
        }
    }
    None
}

fn check_config(setting: &Word) -> Option<String> {
    if !setting.literal() {
        return Some("`git -c` sets configuration made by an expansion".into());
    }
    let key = key_of(&setting.text);
    if key.starts_with("alias.") {
        Some(format!("`git -c {key}` defines a git alias"))
    } else if !quiet(&key) {
        Some(format!("`git -c {key}` can make git run other commands"))
    } else {
        None
    }
}

fn key_of(setting: &str) -> String {
    setting
        .split_once('=')
        .map_or(setting, |(k, _)| k)
        .to_ascii_lowercase()
}

fn quiet(key: &str) -> bool {
    QUIET_CONFIG
        .iter()
        .any(|q| key == *q || (q.ends_with('.') && key.starts_with(q)))
}

/// What `git config ARGS` writes that can change what git runs: the key
/// (or `--edit`, a file); `None` when it only reads or writes a key that
/// runs nothing (`user.name`).
pub fn config_written(args: &[Word]) -> Option<String> {
    const READS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "-l",
        "--list",
        "get",
        "list",
    ];
    if args.iter().any(|w| READS.contains(&w.text.as_str())) {
        return None;
    }
    let operands: Vec<&Word> = args
        .iter()
        .filter(|w| !w.text.starts_with('-') && !matches!(w.text.as_str(), "set" | "unset"))
        .collect();
    let edits = args.iter().any(|w| {
        matches!(
            w.text.as_str(),
            "-e" | "--edit" | "edit" | "--file" | "-f" | "--blob" | "--rename-section"
        )
    });
    match operands.first() {
        _ if edits => Some("git config --edit".into()),
        Some(key) if !key.literal() => Some(key.raw.clone()),
        // One operand reads a key (`git config user.name`), unless told to
        // unset it.
        Some(key) if operands.len() > 1 || args.iter().any(|w| w.text.starts_with("--unset")) => {
            let key = key_of(&key.text);
            (!quiet(&key)).then_some(key)
        }
        _ => None,
    }
}

/// What a line does with git: whether it runs git, and what it writes of
/// git's configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Use {
    pub runs: bool,
    pub configures: Option<String>,
}

impl Use {
    /// Why a git command of the line may run what its words do not show.
    pub fn problem(&self) -> Option<String> {
        let configured = self.configures.as_ref().filter(|_| self.runs)?;
        Some(format!(
            "the line writes git's configuration (`{configured}`) and runs git, which may then run an alias or a command written there"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Word> {
        line.split_whitespace().map(Word::plain).collect()
    }

    #[test]
    fn git_commands_by_every_name() {
        assert_eq!(dashed("git-push"), Some("push"));
        assert_eq!(dashed("git-frobnicate"), None);
        assert_eq!(same_as("send-pack"), Some("push"));
        assert_eq!(command_at(&words("-C repo -c a=b push origin")), Some(4));
        assert!(is_command("status") && !is_command("p"));
    }

    #[test]
    fn config_writes_that_change_what_git_runs() {
        assert_eq!(
            config_written(&words("alias.p push")),
            Some("alias.p".into())
        );
        assert_eq!(
            config_written(&words("--global core.pager less")),
            Some("core.pager".into())
        );
        assert_eq!(config_written(&words("user.name x")), None);
        assert_eq!(config_written(&words("--get alias.p")), None);
        assert_eq!(config_written(&words("alias.p")), None);
        assert_eq!(
            config_written(&words("--unset alias.p")),
            Some("alias.p".into())
        );
        assert!(config_written(&words("-e")).is_some());
    }
}
