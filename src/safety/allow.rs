//! How an allow rule covers one simple command: its words begin the
//! command's, and whatever else the command carries is named by the rule
//! or harmless. Invariant: a command is covered only when nothing in it
//! evaluates text (`${a[x]}`, `$((x))`, `${!x}`, `${x@P}`), every file it
//! writes (a redirection, a writing option such as `git diff --output`, a
//! wrapper's `time -o`) stays in the workspace without passing through a
//! link, and it runs through no wrapper that changes its rights unless
//! the rule names it.

use std::path::{Component, Path};

use super::evaluate;
use super::lexer::{Redirect, RedirectKind, Word};
use super::shell::{self, Simple, basename};
use super::wrappers::NAMED;

/// Redirection targets that are no file of the user's.
const HARMLESS_TARGETS: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr"];

/// Options that write a file (their value), per program: long names (any
/// beginning of them is taken, as getopt and git take one) and short
/// letters.
const WRITING: &[(&str, &[&str], &str)] = &[
    ("git", &["output", "output-directory"], "o"),
    ("sort", &["output"], "o"),
    (
        "curl",
        &[
            "output",
            "output-dir",
            "dump-header",
            "cookie-jar",
            "trace",
            "trace-ascii",
            "stderr",
            "libcurl",
            "etag-save",
            "hsts",
            "alt-svc",
        ],
        "oDc",
    ),
    (
        "wget",
        &[
            "output-document",
            "output-file",
            "append-output",
            "directory-prefix",
        ],
        "OoaP",
    ),
    ("cargo", &["target-dir", "artifact-dir", "out-dir"], ""),
    ("rustc", &["out-dir"], "o"),
    ("cc", &[], "o"),
    ("gcc", &[], "o"),
    ("g++", &[], "o"),
    ("clang", &[], "o"),
    ("clang++", &[], "o"),
    ("tar", &["file", "directory"], "fC"),
    ("patch", &["output"], "o"),
    ("pytest", &["junitxml", "junit-xml", "basetemp"], ""),
    ("ssh-keygen", &[], "f"),
    ("strace", &["output"], "o"),
    ("ltrace", &["output"], "o"),
];

/// `find`'s actions that write the file they name.
const FIND_WRITING: &[&str] = &["-fprint", "-fprint0", "-fprintf", "-fls"];

/// Where the line's files land: the workspace's folder (links beneath it
/// are looked at), and whether the line changes folder first (`cd`).
#[derive(Clone, Copy)]
pub struct Place<'a> {
    pub root: Option<&'a Path>,
    pub moved: bool,
}

/// A file the line writes stays in the workspace: a relative path without
/// `..`, `~` or `.git`, none of whose parts beneath the workspace is a
/// link (nor the file one with other names), in a line that does not
/// change folder; or `/dev/null`. Absolute paths are outside.
fn stays_inside(target: &Word, place: Place<'_>) -> bool {
    let path = target.text.as_str();
    if HARMLESS_TARGETS.contains(&path) {
        return true;
    }
    target.literal()
        && !path.is_empty()
        && !path.starts_with('/')
        && !path.starts_with('~')
        && !path.split('/').any(|part| part == ".." || part == ".git")
        && !place.moved
        && place.root.is_some_and(|root| no_link_beneath(root, path))
}

/// No part of `rel` beneath `root` is a symbolic link, and the file, when
/// it exists, has no other name (a hard link); parts that do not exist
/// yet are fine.
fn no_link_beneath(root: &Path, rel: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    let mut at = root.to_path_buf();
    for part in Path::new(rel).components() {
        match part {
            Component::CurDir => continue,
            Component::Normal(name) => at.push(name),
            _ => return false,
        }
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => return false,
            Ok(meta) if meta.is_file() && meta.nlink() > 1 => return false,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return true,
            Err(_) => return false,
        }
    }
    true
}

/// A redirection stays in the workspace (a copy of a descriptor and a
/// here-document write nothing).
pub fn redirect_inside(redirect: &Redirect, place: Place<'_>) -> bool {
    redirect.kind != RedirectKind::File || stays_inside(&redirect.target, place)
}

/// The files a command's own options write (`git diff --output=FILE`,
/// `sort -o FILE`, `tee FILE`, `dd of=FILE`, `find -fprint FILE`).
fn written_by_options(simple: &Simple) -> Vec<Word> {
    let Some(program) = simple.program() else {
        return Vec::new();
    };
    let args: Vec<&Word> = simple.words[1..]
        .iter()
        .take_while(|w| w.text != "--")
        .collect();
    match program {
        "tee" => {
            return args
                .into_iter()
                .filter(|w| !w.text.starts_with('-'))
                .cloned()
                .collect();
        }
        "dd" => {
            return args
                .iter()
                .filter_map(|w| w.text.strip_prefix("of=").map(|v| value_word(w, v)))
                .collect();
        }
        "find" => {
            return args
                .windows(2)
                .filter(|pair| FIND_WRITING.contains(&pair[0].text.as_str()))
                .map(|pair| pair[1].clone())
                .collect();
        }
        _ => {}
    }
    let Some((_, long, short)) = WRITING.iter().find(|(p, _, _)| *p == program) else {
        return Vec::new();
    };
    // `git -C DIR`: its files are written from another folder.
    let elsewhere = program == "git" && args.iter().any(|w| w.text == "-C");
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        let t = w.text.as_str();
        if let Some(given) = t.strip_prefix("--") {
            let (name, value) = given
                .split_once('=')
                .map_or((given, None), |(n, v)| (n, Some(v)));
            if name.is_empty() || !long.iter().any(|full| full.starts_with(name)) {
                continue;
            }
            match value {
                Some(v) => out.push(value_word(w, v)),
                None => {
                    out.extend(args.get(i).map(|v| (*v).clone()));
                    i += 1;
                }
            }
        } else if let Some(letters) = t.strip_prefix('-').filter(|l| !l.is_empty()) {
            let Some((at, c)) = letters.char_indices().find(|(_, c)| short.contains(*c)) else {
                continue;
            };
            let rest = &letters[at + c.len_utf8()..];
            if rest.is_empty() {
                out.extend(args.get(i).map(|v| (*v).clone()));
                i += 1;
            } else {
                out.push(value_word(w, rest));
            }
        }
    }
    if elsewhere {
        for word in &mut out {
            word.expanded = true;
        }
    }
    out
}

/// The value part of an option word (`--output=VALUE`), expanded when the
/// word is.
fn value_word(word: &Word, value: &str) -> Word {
    Word {
        text: value.to_string(),
        raw: value.to_string(),
        expanded: !word.literal(),
        ..Word::default()
    }
}

/// Whether `word` holds an expansion that evaluates text.
fn evaluates(word: &Word) -> bool {
    !word.literal() && evaluate::evaluates(&word.raw)
}

/// An allow rule read like a command: its words, and the assignments,
/// `env -S`, wrappers and redirection targets it names; an exact rule
/// covers only its own words.
pub struct AllowRule {
    words: Vec<String>,
    assignments: Vec<String>,
    wrappers: Vec<String>,
    split_string: bool,
    targets: Vec<String>,
    exact: bool,
}

impl AllowRule {
    pub fn parse(text: &str, exact: bool) -> Self {
        if let Ok(reading) = shell::read(text)
            && reading.unfollowable.is_none()
            && let [simple] = reading.commands.as_slice()
            && !simple.words.is_empty()
        {
            return Self {
                words: simple.texts(),
                assignments: simple.assignments.iter().map(|a| a.text.clone()).collect(),
                wrappers: simple.wrappers.clone(),
                split_string: simple.split_string,
                targets: simple
                    .redirects
                    .iter()
                    .map(|r| r.target.text.clone())
                    .collect(),
                exact,
            };
        }
        Self {
            words: text.split_whitespace().map(str::to_string).collect(),
            assignments: Vec::new(),
            wrappers: Vec::new(),
            split_string: false,
            targets: Vec::new(),
            exact,
        }
    }

    /// The rule's words begin the command's (the program by file name):
    /// `cargo test` covers `cargo test --all`, not `cargo install`; and
    /// what else the command carries is named by the rule.
    pub fn covers(&self, simple: &Simple, place: Place<'_>) -> bool {
        let words = simple.texts();
        let Some((program, rest)) = self.words.split_first() else {
            return false;
        };
        let length = if self.exact {
            words.len() == self.words.len()
        } else {
            words.len() > rest.len()
        };
        length
            && basename(&words[0]) == basename(program)
            && rest.iter().zip(&words[1..]).all(|(r, w)| r == w)
            && simple
                .assignments
                .iter()
                .all(|a| self.assignments.contains(&a.text) && !evaluates(a))
            && (!simple.split_string || self.split_string)
            && simple
                .wrappers
                .iter()
                .all(|w| !NAMED.contains(&w.as_str()) || self.wrappers.contains(w))
            && !simple.words.iter().any(evaluates)
            && simple.redirects.iter().all(|r| {
                !evaluates(&r.target)
                    && (redirect_inside(r, place) || self.targets.contains(&r.target.text))
            })
            && simple
                .written
                .iter()
                .chain(&written_by_options(simple))
                .all(|w| stays_inside(w, place))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn simple(line: &str) -> Simple {
        shell::read(line).unwrap().commands.remove(0)
    }

    #[test]
    fn writing_options_are_found_in_their_spellings() {
        let texts = |line: &str| -> Vec<String> {
            written_by_options(&simple(line))
                .into_iter()
                .map(|w| w.text)
                .collect()
        };
        assert_eq!(texts("git diff --output=/a"), ["/a"]);
        assert_eq!(texts("git diff --outp /a"), ["/a"]);
        assert_eq!(texts("sort -o/a x"), ["/a"]);
        assert_eq!(texts("curl -sSo /a https://x"), ["/a"]);
        assert_eq!(texts("tee -a /a b"), ["/a", "b"]);
        assert_eq!(texts("dd if=x of=/a"), ["/a"]);
        assert_eq!(texts("find . -fprint /a"), ["/a"]);
        assert!(texts("git diff --stat -- --output=/a").is_empty());
        assert!(texts("ls -o").is_empty());
        let elsewhere = written_by_options(&simple("git -C x diff --output=out"));
        assert!(elsewhere.iter().all(|w| !w.literal()));
    }

    #[test]
    fn links_beneath_the_workspace_are_outside() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join("d")).unwrap();
        std::fs::write(ws.path().join("f"), "").unwrap();
        std::os::unix::fs::symlink("/tmp", ws.path().join("l")).unwrap();
        std::fs::hard_link(ws.path().join("f"), ws.path().join("h")).unwrap();
        for (rel, inside) in [
            ("new.txt", true),
            ("d/new.txt", true),
            ("./d/x/y", true),
            ("l", false),
            ("l/x", false),
            ("f", false),
            ("h", false),
        ] {
            assert_eq!(no_link_beneath(ws.path(), rel), inside, "{rel}");
        }
    }
}
