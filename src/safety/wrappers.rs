//! Commands that run another command given as their arguments: `sudo`,
//! `env`, `timeout`, `nice`, `setsid`, `flock`, `watch`, … . Looking
//! through them leaves the command they run, with what they added recorded
//! (the wrapper's name, `env`'s assignments and `-S` string); a wrapper that
//! runs a shell string (`flock -c`, `watch`, `su -c`) gives that string, to
//! be read as a script.

use super::lexer::{Lexer, Tok, Unparsed, Word};
use super::simple::{Simple, basename, is_assignment};

/// A wrapper: its options that take a value (short letters, long names)
/// and the operands before the command (`timeout`'s duration; `setarch`'s
/// comes before its options).
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

/// Wrappers whose operand comes before their options.
const OPERAND_FIRST: &[&str] = &["setarch"];

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
    wrapper(
        "unshare",
        "SGRw",
        &[
            "--setuid",
            "--setgid",
            "--root",
            "--wd",
            "--map-user",
            "--map-group",
            "--map-users",
            "--map-groups",
            "--propagation",
            "--setgroups",
            "--monotonic",
            "--boottime",
        ],
        0,
    ),
    wrapper(
        "setpriv",
        "",
        &[
            "--reuid",
            "--regid",
            "--ruid",
            "--euid",
            "--rgid",
            "--egid",
            "--groups",
            "--inh-caps",
            "--ambient-caps",
            "--bounding-set",
            "--securebits",
            "--pdeathsig",
            "--selinux-label",
            "--apparmor-profile",
            "--landlock-access",
            "--landlock-rule",
            "--seccomp-filter",
        ],
        0,
    ),
    wrapper("prlimit", "po", &["--pid", "--output"], 0),
    wrapper(
        "strace",
        "abeEIoOpPsSuUX",
        &[
            "--output",
            "--trace",
            "--signal",
            "--status",
            "--env",
            "--attach",
            "--user",
            "--string-limit",
            "--trace-path",
            "--columns",
            "--summary-sort-by",
        ],
        0,
    ),
    wrapper(
        "ltrace",
        "aADeFlnopsuwx",
        &["--output", "--library", "--config", "--align", "--indent"],
        0,
    ),
    wrapper("nsenter", "tSG", &["--target", "--setuid", "--setgid"], 0),
    wrapper("pkexec", "", &["--user"], 0),
    wrapper(
        "run0",
        "ugD",
        &[
            "--user",
            "--group",
            "--chdir",
            "--setenv",
            "--nice",
            "--unit",
            "--property",
            "--description",
            "--slice",
            "--machine",
            "--background",
        ],
        0,
    ),
    wrapper(
        "systemd-run",
        "pEuHM",
        &[
            "--property",
            "--setenv",
            "--unit",
            "--host",
            "--machine",
            "--description",
            "--slice",
            "--working-directory",
            "--uid",
            "--gid",
            "--nice",
            "--on-active",
            "--on-calendar",
            "--service-type",
        ],
        0,
    ),
    wrapper("setarch", "", &[], 1),
    wrapper("linux32", "", &[], 0),
    wrapper("linux64", "", &[], 0),
    wrapper(
        "numactl",
        "imNCpP",
        &[
            "--interleave",
            "--membind",
            "--cpunodebind",
            "--physcpubind",
            "--preferred",
        ],
        0,
    ),
    wrapper("cgexec", "g", &[], 0),
    wrapper("valgrind", "", &[], 0),
    wrapper("firejail", "", &[], 0),
    wrapper("catchsegv", "", &[], 0),
    wrapper("eatmydata", "", &[], 0),
    wrapper("nocache", "", &[], 0),
    wrapper("tsocks", "", &[], 0),
    wrapper("proxychains", "f", &[], 0),
    wrapper("proxychains4", "f", &[], 0),
    wrapper(
        "dbus-run-session",
        "",
        &["--config-file", "--dbus-daemon"],
        0,
    ),
    wrapper(
        "xvfb-run",
        "nsfepw",
        &[
            "--server-num",
            "--server-args",
            "--auth-file",
            "--error-file",
            "--xauth-protocol",
            "--wait",
        ],
        0,
    ),
    wrapper("ssh-agent", "aEtP", &[], 0),
];

/// Wrappers' options that write a file (its value): `time -o FILE`.
const WRITING: &[(&str, char, &str)] = &[
    ("time", 'o', "--output"),
    ("strace", 'o', "--output"),
    ("ltrace", 'o', "--output"),
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

/// Wrappers whose command runs with more rights than the line's, or
/// where the line's rights do not reach (other namespaces, capabilities,
/// another user, a service manager), or watched: an allow rule covers a
/// command run through one only when it names it.
pub const NAMED: &[&str] = &[
    "sudo",
    "doas",
    "su",
    "runuser",
    "chroot",
    "pkexec",
    "run0",
    "unshare",
    "setpriv",
    "nsenter",
    "capsh",
    "systemd-run",
    "firejail",
    "strace",
    "ltrace",
    "ssh-agent",
    "proxychains",
    "proxychains4",
    "torsocks",
    "tsocks",
];

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
            s.assignments.push(assignment);
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
            // `capsh … -- ARGS` runs `bash ARGS`.
            "capsh" => match s.words.iter().position(|w| w.text == "--") {
                Some(at) => {
                    s.words.splice(..=at, [Word::plain("bash")]);
                    s.wrappers.push(name);
                    continue;
                }
                None => return Ok(scripts),
            },
            _ => match WRAPPERS.iter().find(|w| w.name == name) {
                Some(w) if OPERAND_FIRST.contains(&w.name) => {
                    let from = (1 + w.operands).min(s.words.len());
                    from + options(&s.words[from..], w.short, w.long)
                }
                Some(w) => 1 + options(&s.words[1..], w.short, w.long) + w.operands,
                None => return Ok(scripts),
            },
        };
        record_written(&name, &s.words[..skip.min(s.words.len())], &mut s.written);
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

/// The files a wrapper's options (`words`, the wrapper first) write.
fn record_written(name: &str, words: &[Word], written: &mut Vec<Word>) {
    if name == "flock" {
        // The lock file is created when missing.
        let file = words
            .iter()
            .skip(1)
            .rev()
            .find(|w| !w.text.starts_with('-'));
        written.extend(file.cloned());
        return;
    }
    let Some((_, short, long)) = WRITING.iter().find(|(n, _, _)| *n == name) else {
        return;
    };
    let mut i = 1;
    while let Some(w) = words.get(i) {
        i += 1;
        let t = w.text.as_str();
        let value = if t == *long || t == format!("-{short}") {
            i += 1;
            words.get(i - 1).cloned()
        } else {
            t.strip_prefix(long)
                .and_then(|r| r.strip_prefix('='))
                .or_else(|| t.strip_prefix(&format!("-{short}")))
                .map(|v| Word {
                    text: v.to_string(),
                    raw: v.to_string(),
                    expanded: !w.literal(),
                    lead: v.chars().count(),
                    ..Word::default()
                })
        };
        written.extend(value);
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
        s.assignments.push(w.clone());
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
