//! Commands that run another command given as their arguments: `sudo`,
//! `env`, `timeout`, `nice`, `setsid`, `flock`, `watch`, … . Looking
//! through them leaves the command they run, with what they added recorded
//! (the wrapper's name, `env`'s assignments and `-S` string); a wrapper that
//! runs a shell string (`flock -c`, `watch`, `su -c`) gives that string, to
//! be read as a script.

use super::lexer::{Lexer, Tok, Unparsed, Word};
use super::simple::{Simple, basename, is_assignment};

/// A wrapper: its options that take a value (short letters, long names)
/// and the operands before the command (`timeout`'s duration).
struct Wrapper {
    name: &'static str,
    short: &'static str,
    long: &'static [&'static str],
    operands: usize,
}

const fn wrapper(
    name: &'static str,
    short: &'static str,
    long: &'static [&'static str],
    operands: usize,
) -> Wrapper {
    Wrapper {
        name,
        short,
        long,
        operands,
    }
}

const WRAPPERS: &[Wrapper] = &[
    wrapper("nohup", "", &[], 0),
    wrapper("command", "", &[], 0),
    wrapper("builtin", "", &[], 0),
    wrapper("noglob", "", &[], 0),
    wrapper("nocorrect", "", &[], 0),
    wrapper("exec", "a", &[], 0),
    wrapper("time", "fo", &["--format", "--output"], 0),
    wrapper("nice", "n", &["--adjustment"], 0),
    wrapper(
        "ionice",
        "cnpPu",
        &["--class", "--classdata", "--pid", "--pgid", "--uid"],
        0,
    ),
    wrapper("stdbuf", "ioe", &["--input", "--output", "--error"], 0),
    wrapper("timeout", "sk", &["--signal", "--kill-after"], 1),
    wrapper("setsid", "", &[], 0),
    wrapper(
        "sudo",
        "CDgprTtUu",
        &[
            "--chdir",
            "--close-from",
            "--group",
            "--host",
            "--prompt",
            "--role",
            "--type",
            "--other-user",
            "--user",
            "--command-timeout",
            "--chroot",
        ],
        0,
    ),
    wrapper("doas", "uC", &[], 0),
    wrapper(
        "chrt",
        "TPD",
        &["--sched-runtime", "--sched-period", "--sched-deadline"],
        1,
    ),
    wrapper("taskset", "", &[], 1),
    wrapper("unbuffer", "", &[], 0),
    wrapper("chroot", "", &["--userspec", "--groups"], 1),
    wrapper("busybox", "", &[], 0),
    wrapper("toybox", "", &[], 0),
    wrapper("fakeroot", "", &[], 0),
    wrapper("torsocks", "", &[], 0),
];

/// `xargs`'s long options that take the next word as their value.
pub const XARGS_LONG: &[&str] = &[
    "--arg-file",
    "--delimiter",
    "--max-args",
    "--max-procs",
    "--max-chars",
    "--process-slot-var",
];

/// Wrappers whose command runs with more rights than the line's.
pub const ELEVATING: &[&str] = &["sudo", "doas", "su", "runuser", "chroot"];

/// Removes the assignments and wrappers in front of `s`'s program,
/// recording them in `s`; returns the shell strings they run.
pub fn strip(s: &mut Simple) -> Result<Vec<Word>, Unparsed> {
    let mut scripts = Vec::new();
    loop {
        let Some(first) = s.words.first() else {
            return Ok(scripts);
        };
        if is_assignment(first) {
            let assignment = s.words.remove(0);
            s.assignments.push(assignment.text);
            continue;
        }
        if !first.literal() {
            return Ok(scripts);
        }
        let name = basename(&first.text).to_string();
        let skip = match name.as_str() {
            "env" => env(s)?,
            "flock" => match flock(&s.words) {
                Ok(n) => n,
                Err(text) => {
                    scripts.push(text);
                    s.words.clear();
                    s.wrappers.push(name);
                    return Ok(scripts);
                }
            },
            "watch" => {
                let n = 1 + options(&s.words[1..], "nq", &["--interval", "--equexit"]);
                let exec = s.words[1..n.min(s.words.len())].iter().any(|w| {
                    w.text == "--exec"
                        || (w.text.starts_with('-')
                            && !w.text.starts_with("--")
                            && w.text.contains('x'))
                });
                if !exec {
                    // `watch` runs its words joined, with `sh -c`.
                    let rest = &s.words[n.min(s.words.len())..];
                    let text: Vec<&str> = rest.iter().map(|w| w.text.as_str()).collect();
                    let mut joined = Word::plain(&text.join(" "));
                    joined.expanded = rest.iter().any(|w| !w.literal());
                    scripts.push(joined);
                    s.words.clear();
                    s.wrappers.push(name);
                    return Ok(scripts);
                }
                n
            }
            "su" | "runuser" | "script" => {
                let string = s
                    .words
                    .iter()
                    .position(|w| w.text == "-c" || w.text == "--command");
                match string.and_then(|i| s.words.get(i + 1)) {
                    Some(text) => {
                        scripts.push(text.clone());
                        s.words.clear();
                        s.wrappers.push(name);
                        return Ok(scripts);
                    }
                    None if name == "runuser" => {
                        1 + options(
                            &s.words[1..],
                            "ugGw",
                            &["--user", "--group", "--supp-group"],
                        )
                    }
                    None => return Ok(scripts),
                }
            }
            _ => match WRAPPERS.iter().find(|w| w.name == name) {
                Some(w) => 1 + options(&s.words[1..], w.short, w.long) + w.operands,
                None => return Ok(scripts),
            },
        };
        if matches!(name.as_str(), "sudo" | "doas") && skip >= s.words.len() {
            // `sudo -s`, `sudo -i`, `doas -s` without a command: a shell.
            let shell = s.words[1..].iter().any(|w| {
                let t = w.text.as_str();
                matches!(t, "--shell" | "--login")
                    || (!t.starts_with("--")
                        && t.starts_with('-')
                        && (t.contains('s') || t.contains('i')))
            });
            if shell {
                s.wrappers.push(name);
                s.words = vec![Word::plain("sh")];
                return Ok(scripts);
            }
        }
        s.wrappers.push(name);
        s.words.drain(..skip.min(s.words.len()));
    }
}

/// How many leading `words` are options and their values: a short option
/// in `short` takes the rest of its cluster or the next word, a long one in
/// `long` the next word unless written `--name=value`; `--` ends them.
pub fn options(words: &[Word], short: &str, long: &[&str]) -> usize {
    let mut i = 0;
    while let Some(w) = words.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            return i + 1;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        let takes_next = if t.starts_with("--") {
            long.contains(&t)
        } else {
            t.char_indices()
                .skip(1)
                .find(|(_, c)| short.contains(*c))
                .is_some_and(|(at, c)| at + c.len_utf8() == t.len())
        };
        i += if takes_next { 2 } else { 1 };
    }
    i.min(words.len())
}

/// `env [OPTIONS] [NAME=VALUE]… COMMAND`: the words before the command.
/// `-S STRING` is split into words that take its place.
fn env(s: &mut Simple) -> Result<usize, Unparsed> {
    let mut i = 1;
    let mut splits = 0;
    while let Some(w) = s.words.get(i) {
        let t = w.text.clone();
        if t == "--" {
            i += 1;
            break;
        }
        if t == "-" || !t.starts_with('-') {
            if t == "-" {
                i += 1;
                continue;
            }
            break;
        }
        // The string `-S` splits, and how many words it and its option take.
        let (string, taken) = if let Some(value) = t.strip_prefix("--split-string=") {
            (Some(value.to_string()), 1)
        } else if t == "--split-string" {
            (s.words.get(i + 1).map(|w| w.text.clone()), 2)
        } else if t.starts_with("--") {
            let takes = matches!(t.as_str(), "--unset" | "--chdir");
            (None, if takes { 2 } else { 1 })
        } else {
            match t.char_indices().skip(1).find(|(_, c)| "uCS".contains(*c)) {
                Some((at, c)) => {
                    let rest = &t[at + c.len_utf8()..];
                    let value = if rest.is_empty() {
                        s.words.get(i + 1).map(|w| w.text.clone())
                    } else {
                        Some(rest.to_string())
                    };
                    let taken = if rest.is_empty() { 2 } else { 1 };
                    (value.filter(|_| c == 'S'), taken)
                }
                None => (None, 1),
            }
        };
        match string {
            Some(text) => {
                splits += 1;
                if splits > 8 {
                    return Err(Unparsed("`env -S` strings nested too deeply".into()));
                }
                let expanded = s.words[i..(i + taken).min(s.words.len())]
                    .iter()
                    .any(|w| !w.literal());
                let mut split = split_words(&text)?;
                for word in &mut split {
                    word.expanded |= expanded;
                }
                let end = (i + taken).min(s.words.len());
                s.words.splice(i..end, split);
                s.split_string = true;
            }
            None => i += taken,
        }
    }
    while let Some(w) = s
        .words
        .get(i)
        .filter(|w| w.text.contains('=') && !w.text.starts_with('='))
    {
        s.assignments.push(w.text.clone());
        i += 1;
    }
    Ok(i.min(s.words.len()))
}

/// The words of an `env -S` string.
fn split_words(text: &str) -> Result<Vec<Word>, Unparsed> {
    let mut lexer = Lexer::new(text);
    Ok(lexer
        .tokens()?
        .into_iter()
        .filter_map(|t| match t {
            Tok::Word(w) => Some(w),
            _ => None,
        })
        .collect())
}

/// `flock [OPTIONS] FILE COMMAND…` (the words before the command), or
/// `flock [OPTIONS] FILE -c STRING` (the string, as `Err`).
fn flock(words: &[Word]) -> Result<usize, Word> {
    let mut i = 1;
    let mut file = false;
    while let Some(w) = words.get(i) {
        let t = w.text.as_str();
        if t == "-c" || t == "--command" {
            return match words.get(i + 1) {
                Some(text) => Err(text.clone()),
                None => Ok(words.len()),
            };
        }
        if t == "--" {
            return Ok(i + 1);
        }
        if t.starts_with('-') && t != "-" {
            let takes = matches!(
                t,
                "-w" | "-E" | "--wait" | "--timeout" | "--conflict-exit-code"
            );
            i += if takes { 2 } else { 1 };
            continue;
        }
        if file {
            break;
        }
        file = true;
        i += 1;
    }
    Ok(i.min(words.len()))
}
