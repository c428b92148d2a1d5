//! Reading a shell command line the way a shell would, without running or
//! expanding anything: the simple commands it runs, each as its words
//! (quotes removed), its assignments and its redirections. Reserved words
//! (`{ }`, `if`, `for`, `while`, `until`, `case`, `!`, `coproc`, function
//! definitions) are looked through to the commands inside; commands inside
//! `$(…)`, backticks, `<(…)`, `bash -c '…'`, `eval '…'`, `env -S '…'`,
//! `xargs`, `find -exec`, `trap '…'`, `alias x='…'` are commands too; and
//! wrappers (`sudo`, `env`, `timeout`, `setsid`, `flock`, …; see
//! [`super::wrappers`]) are looked through. Invariants: what cannot be read
//! at all is an error; what can be read but not followed (a program named
//! by an expansion, a shell reading its script from standard input, `eval`
//! of generated text, a git alias, text that reaches a context that
//! evaluates it, see [`super::evaluate`]) is said in
//! [`Reading::unfollowable`], never guessed.

use super::evaluate::Evaluation;
use super::lexer::{Lexer, RedirectKind, Tok, Word};
use super::{builtins, git, wrappers};

pub use super::lexer::Unparsed;
pub use super::simple::{INERT, Simple, basename, is_assignment, made_from_input, replace_string};

/// Nesting allowed for `bash -c` inside `$(…)` inside … before giving up.
const MAX_DEPTH: usize = 8;

/// The shells whose `-c` script is read, and which read standard input
/// without one.
const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish", "csh", "tcsh",
];

/// What a line runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    pub commands: Vec<Simple>,
    /// Why some of what the line runs cannot be known from its text.
    pub unfollowable: Option<String>,
    /// What the line gives its variables and the text it evaluates.
    pub evaluation: Evaluation,
    /// Whether it runs git, and writes git's configuration.
    pub git: git::Use,
}

impl Reading {
    fn cannot_follow(&mut self, why: String) {
        self.unfollowable.get_or_insert(why);
    }
}

/// Reads `line` into the simple commands it runs.
pub fn read(line: &str) -> Result<Reading, Unparsed> {
    let mut reading = Reading::default();
    collect(line, 0, &mut reading)?;
    let names: Vec<String> = reading
        .evaluation
        .names_bound()
        .map(str::to_string)
        .collect();
    for name in names {
        if let Some(why) = builtins::variable_problem(&name) {
            reading.cannot_follow(why);
        }
    }
    if let Some(why) = reading.evaluation.problem() {
        reading.cannot_follow(why);
    }
    if let Some(why) = reading.git.problem() {
        reading.cannot_follow(why);
    }
    Ok(reading)
}

/// The simple commands `line` runs, each as its words (program first,
/// wrappers removed); an error when the line cannot be read or followed.
pub fn simple_commands(line: &str) -> Result<Vec<Vec<String>>, Unparsed> {
    let reading = read(line)?;
    if let Some(why) = reading.unfollowable {
        return Err(Unparsed(why));
    }
    Ok(reading
        .commands
        .iter()
        .filter(|c| !c.words.is_empty())
        .map(Simple::texts)
        .collect())
}

/// A path that is the standard input (or another open descriptor).
fn stdin_like(path: &str) -> bool {
    path == "-"
        || path == "/dev/stdin"
        || path.starts_with("/dev/fd/")
        || (path.starts_with("/proc/") && path.contains("/fd/"))
}

fn collect(line: &str, depth: usize, reading: &mut Reading) -> Result<(), Unparsed> {
    if depth > MAX_DEPTH {
        return Err(Unparsed("commands nested too deeply".into()));
    }
    let mut lexer = Lexer::new(line);
    let tokens = lexer.tokens()?;
    for inner in std::mem::take(&mut lexer.nested) {
        collect(&inner, depth + 1, reading)?;
    }
    for text in &lexer.arith_texts {
        reading
            .evaluation
            .arithmetic(text, "an arithmetic expression");
    }
    for inner in &lexer.params {
        reading.evaluation.param(inner);
    }
    for simple in parse(&tokens, &mut reading.evaluation) {
        follow(simple, depth, reading)?;
    }
    Ok(())
}

/// Reads a script given as a word (`bash -c WORD`, `trap WORD`).
fn script(word: &Word, what: &str, depth: usize, reading: &mut Reading) -> Result<(), Unparsed> {
    if word.literal() {
        collect(&word.text, depth + 1, reading)
    } else {
        reading.cannot_follow(format!("the script `{what}` runs is made by an expansion"));
        Ok(())
    }
}

fn reserved(word: &Word, name: &str) -> bool {
    !word.quoted && word.text == name
}

fn finish(current: &mut Simple, out: &mut Vec<Simple>, piped_next: bool) {
    let done = std::mem::take(current);
    if !done.words.is_empty() || !done.redirects.is_empty() {
        out.push(done);
    }
    current.piped = piped_next;
}

/// The simple commands in the tokens, reserved words looked through: the
/// words of a `for` or `case` header and `case` patterns are no commands,
/// nor are function names; the commands in bodies are. A `for` gives its
/// name the values of its words.
fn parse(tokens: &[Tok], ev: &mut Evaluation) -> Vec<Simple> {
    let mut out = Vec::new();
    let mut current = Simple::default();
    // Per open `case`: whether a pattern comes next.
    let mut cases: Vec<bool> = Vec::new();
    let mut i = 0;
    while let Some(tok) = tokens.get(i) {
        i += 1;
        let start = current.words.is_empty();
        if start && cases.last() == Some(&true) {
            match tok {
                Tok::Sep => {}
                Tok::Word(w) if reserved(w, "esac") => {
                    cases.pop();
                }
                _ => {
                    // The pattern, to its `)`.
                    if *tok != Tok::Close {
                        while let Some(t) = tokens.get(i) {
                            i += 1;
                            if *t == Tok::Close {
                                break;
                            }
                        }
                    }
                    if let Some(top) = cases.last_mut() {
                        *top = false;
                    }
                }
            }
            continue;
        }
        match tok {
            Tok::Sep | Tok::AndOr | Tok::Open | Tok::Close => finish(&mut current, &mut out, false),
            Tok::Pipe => finish(&mut current, &mut out, true),
            Tok::CaseEnd => {
                finish(&mut current, &mut out, false);
                if let Some(top) = cases.last_mut() {
                    *top = true;
                }
            }
            Tok::Redirect(r) => current.redirects.push(r.clone()),
            Tok::Word(w) if start && !w.quoted => match w.text.as_str() {
                "{" | "}" | "!" | "if" | "then" | "elif" | "else" | "fi" | "do" | "done"
                | "while" | "until" => {}
                "esac" => {
                    cases.pop();
                }
                "for" | "select" => {
                    let header: Vec<&Word> = tokens[i..]
                        .iter()
                        .take_while(|t| **t != Tok::Sep)
                        .filter_map(|t| match t {
                            Tok::Word(w) => Some(w),
                            _ => None,
                        })
                        .collect();
                    builtins::bind_loop(w.text == "for", &header, ev);
                    while let Some(t) = tokens.get(i) {
                        i += 1;
                        if *t == Tok::Sep {
                            break;
                        }
                    }
                }
                "case" => {
                    while let Some(t) = tokens.get(i) {
                        i += 1;
                        if matches!(t, Tok::Word(w) if reserved(w, "in")) {
                            break;
                        }
                    }
                    cases.push(true);
                }
                "function" => {
                    i += 1;
                    if tokens.get(i) == Some(&Tok::Open) && tokens.get(i + 1) == Some(&Tok::Close) {
                        i += 2;
                    }
                }
                "coproc" => {
                    let named = matches!(tokens.get(i), Some(Tok::Word(_)))
                        && match tokens.get(i + 1) {
                            Some(Tok::Word(b)) => reserved(b, "{"),
                            Some(Tok::Open) => true,
                            _ => false,
                        };
                    if named {
                        i += 1;
                    }
                }
                // A conditional: its `&&`, `<`, `(` are its own.
                "[[" if let Some(end) = tokens[i..]
                    .iter()
                    .position(|t| matches!(t, Tok::Word(x) if reserved(x, "]]"))) =>
                {
                    current.words.push(w.clone());
                    current
                        .words
                        .extend(tokens[i..=i + end].iter().filter_map(|t| match t {
                            Tok::Word(x) => Some(x.clone()),
                            _ => None,
                        }));
                    i += end + 1;
                    finish(&mut current, &mut out, false);
                }
                // `name () body`: a function definition.
                _ if tokens.get(i) == Some(&Tok::Open)
                    && tokens.get(i + 1) == Some(&Tok::Close) =>
                {
                    i += 2;
                }
                _ => current.words.push(w.clone()),
            },
            Tok::Word(w) => current.words.push(w.clone()),
        }
    }
    finish(&mut current, &mut out, false);
    out
}

/// Adds `s` and every command it runs; says what cannot be followed.
fn follow(mut s: Simple, depth: usize, reading: &mut Reading) -> Result<(), Unparsed> {
    for text in wrappers::strip(&mut s)? {
        script(&text, "a wrapper", depth, reading)?;
    }
    for assignment in &s.assignments {
        builtins::assign(assignment, false, &mut reading.evaluation);
    }
    for word in s.words.iter().chain(s.redirects.iter().map(|r| &r.target)) {
        if git::names_config(&word.text) {
            reading.git.configures.get_or_insert(word.text.clone());
        }
    }
    let Some(program) = s.words.first() else {
        reading.commands.push(s);
        return Ok(());
    };
    if !program.literal() {
        reading.cannot_follow(format!(
            "the program `{}` is made by an expansion",
            program.raw
        ));
    }
    // `git-push` is `git push`.
    if let Some(command) = git::dashed(basename(&program.text)) {
        let command = Word::plain(command);
        s.words.splice(0..1, [Word::plain("git"), command]);
    }
    let name = basename(&s.words[0].text).to_string();
    if let Err(why) = builtins::follow(&name, &s, &mut reading.evaluation) {
        reading.cannot_follow(why);
    }
    follow_program(&name, &s, depth, reading)?;
    reading.commands.push(s);
    Ok(())
}

/// What program `name` runs besides itself (a shell's script, `eval`'s
/// text, `xargs`' and `find`'s commands, …).
fn follow_program(
    name: &str,
    s: &Simple,
    depth: usize,
    reading: &mut Reading,
) -> Result<(), Unparsed> {
    let args = &s.words[1..];
    match name {
        shell if SHELLS.contains(&shell) => follow_shell(s, shell, depth, reading)?,
        "eval" => {
            if args.iter().all(Word::literal) {
                let text: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
                collect(&text.join(" "), depth + 1, reading)?;
            } else {
                reading.cannot_follow("`eval` runs text made by an expansion".into());
            }
        }
        "source" | "." => {
            let from = args.iter().find(|w| w.text != "--");
            if from.is_none_or(|w| !w.literal() || stdin_like(&w.text)) {
                reading.cannot_follow(format!("`{name}` reads commands the line does not show"));
            }
        }
        "xargs" => follow_xargs(s, depth, reading)?,
        "find" => follow_find(s, depth, reading)?,
        "git" => {
            reading.git.runs = true;
            if let Some(why) = git::follow_options(args) {
                reading.cannot_follow(why);
            }
            if let Some(at) = git::command_at(args)
                && args[at].text == "config"
                && let Some(key) = git::config_written(&args[at + 1..])
            {
                reading.git.configures.get_or_insert(key);
            }
        }
        "hash"
            if args
                .iter()
                .any(|w| w.text.starts_with('-') && w.text.contains('p')) =>
        {
            reading.cannot_follow("`hash -p` makes a name run another program".into());
        }
        // Without `-c` (looked through as a wrapper), a shell reading stdin.
        "su" | "script" => {
            reading.cannot_follow(format!("`{name}` starts a shell reading standard input"));
        }
        "trap" => {
            let args: Vec<&Word> = args.iter().skip_while(|w| w.text == "--").collect();
            if let [action, _signal, ..] = args.as_slice()
                && !action.text.starts_with('-')
            {
                script(action, "trap", depth, reading)?;
            }
        }
        "alias" => {
            for arg in args {
                if let Some((_, value)) = arg.text.split_once('=') {
                    let value = Word {
                        text: value.to_string(),
                        ..arg.clone()
                    };
                    script(&value, "alias", depth, reading)?;
                }
            }
        }
        _ if !INERT.contains(&name) => follow_embedded_shell(s, depth, reading)?,
        _ => {}
    }
    Ok(())
}

/// `xargs [OPTIONS] COMMAND…`: the command, with arguments added from
/// its input; with `-I R` the words holding `R` are made from the input.
fn follow_xargs(s: &Simple, depth: usize, reading: &mut Reading) -> Result<(), Unparsed> {
    let args = &s.words[1..];
    let n = 1 + wrappers::options(args, "adEILnPs", wrappers::XARGS_LONG);
    let options = &s.words[1..n.min(s.words.len())];
    let mut inner = s.words[n.min(s.words.len())..].to_vec();
    if inner.is_empty() {
        inner.push(Word::plain("echo"));
    }
    if let Some(replace) = replace_string(options) {
        for word in inner.iter_mut() {
            made_from_input(word, &replace);
        }
    }
    let inner = Simple {
        words: inner,
        appended: true,
        ..Simple::default()
    };
    follow(inner, depth + 1, reading)
}

/// `find … -exec COMMAND… ;`: each command; a `{}` (a found path) that is
/// the program, or in a shell's script, is made when the line runs.
fn follow_find(s: &Simple, depth: usize, reading: &mut Reading) -> Result<(), Unparsed> {
    let mut i = 1;
    while i < s.words.len() {
        let word = s.words[i].text.as_str();
        if matches!(word, "-exec" | "-execdir" | "-ok" | "-okdir") {
            let end = s.words[i + 1..]
                .iter()
                .position(|w| w.text == ";" || w.text == "+")
                .map_or(s.words.len(), |p| i + 1 + p);
            let mut words = s.words[i + 1..end].to_vec();
            let runs_text = words
                .first()
                .is_some_and(|p| SHELLS.contains(&basename(&p.text)) || p.text == "eval");
            for (at, word) in words.iter_mut().enumerate() {
                if at == 0 || runs_text {
                    made_from_input(word, "{}");
                }
            }
            let inner = Simple {
                words,
                ..Simple::default()
            };
            follow(inner, depth + 1, reading)?;
            i = end;
        }
        i += 1;
    }
    Ok(())
}

/// A program no table knows may run a command given as its arguments (a
/// wrapper no table lists): a shell with `-c` among them is read too.
fn follow_embedded_shell(s: &Simple, depth: usize, reading: &mut Reading) -> Result<(), Unparsed> {
    let at = s.words.iter().enumerate().skip(1).position(|(i, w)| {
        w.literal()
            && SHELLS.contains(&basename(&w.text))
            && s.words.get(i + 1).is_some_and(|c| {
                c.text.starts_with('-') && !c.text.starts_with("--") && c.text.contains('c')
            })
    });
    if let Some(at) = at {
        let inner = Simple {
            words: s.words[at + 1..].to_vec(),
            ..Simple::default()
        };
        follow(inner, depth + 1, reading)?;
    }
    Ok(())
}

/// `bash -c SCRIPT` is read; a shell reading its script from standard
/// input (a pipe, a here-string, `-s`, nothing at all) cannot be followed;
/// a script file is not read.
fn follow_shell(
    s: &Simple,
    name: &str,
    depth: usize,
    reading: &mut Reading,
) -> Result<(), Unparsed> {
    let args = &s.words[1..];
    let (mut dash_c, mut dash_s) = (false, false);
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if t == "--" || t == "-" {
            i += 1;
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            i += if matches!(long, "rcfile" | "init-file") {
                2
            } else {
                1
            };
            continue;
        }
        let Some(letters) = t
            .strip_prefix('-')
            .or_else(|| t.strip_prefix('+'))
            .filter(|l| !l.is_empty())
        else {
            break;
        };
        i += 1;
        for c in letters.chars() {
            match c {
                'c' => dash_c = true,
                's' => dash_s = true,
                'o' | 'O' => i += 1,
                _ => {}
            }
        }
    }
    let operand = args.get(i);
    if dash_c {
        let text = operand.ok_or_else(|| Unparsed(format!("`{name} -c` without a command")))?;
        return script(text, name, depth, reading);
    }
    match operand.filter(|_| !dash_s) {
        Some(file) if !file.literal() || stdin_like(&file.text) => {
            reading.cannot_follow(format!("`{name}` runs a script the line does not show"));
        }
        Some(_) => {}
        None => {
            let from_file = s.redirects.iter().any(|r| {
                r.stdin
                    && r.kind == RedirectKind::File
                    && r.target.literal()
                    && !stdin_like(&r.target.text)
            });
            if !from_file {
                reading.cannot_follow(format!("`{name}` reads its script from standard input"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::safety::lexer::RedirectKind;

    fn cmds(line: &str) -> Vec<String> {
        simple_commands(line)
            .unwrap()
            .into_iter()
            .map(|w| w.join(" "))
            .collect()
    }

    #[test]
    fn lines_split_into_simple_commands() {
        let table: &[(&str, &[&str])] = &[
            ("cargo test", &["cargo test"]),
            ("cargo test; rm -rf /", &["cargo test", "rm -rf /"]),
            ("a && b || c | d & e", &["a", "b", "c", "d", "e"]),
            ("echo 'a; b' \"c && d\"", &["echo a; b c && d"]),
            ("echo $(rm -rf ~)", &["rm -rf ~", "echo $(…)"]),
            ("echo \"x $(git push) y\"", &["git push", "echo x $(…) y"]),
            ("echo `rm -rf /`", &["rm -rf /", "echo `…`"]),
            (
                "bash -c 'rm -rf /; ls'",
                &["rm -rf /", "ls", "bash -c rm -rf /; ls"],
            ),
            (
                "sh -lc \"git push --force\"",
                &["git push --force", "sh -lc git push --force"],
            ),
            ("sudo -u root rm -rf /x", &["rm -rf /x"]),
            ("env -i FOO=1 BAR=2 git push", &["git push"]),
            ("FOO=1 timeout 5 nice -n 3 rm -rf x", &["rm -rf x"]),
            ("(cd x && rm -rf y)", &["cd x", "rm -rf y"]),
            ("ls\nrm -rf z", &["ls", "rm -rf z"]),
            ("ls \\\n -la", &["ls -la"]),
            ("cat a > out.txt 2>&1", &["cat a"]),
            ("echo hi >> log; cat < in", &["echo hi", "cat"]),
            (
                "find . -name '*.o' -exec rm -f {} \\;",
                &["rm -f {}", "find . -name *.o -exec rm -f {} ;"],
            ),
            (
                "ls | xargs -n 1 rm -rf",
                &["ls", "rm -rf", "xargs -n 1 rm -rf"],
            ),
            ("eval 'git push'", &["git push", "eval git push"]),
            ("diff <(sort a) b", &["sort a", "diff <(…) b"]),
            ("echo $((1 + 2))", &["echo $((…))"]),
            ("/bin/rm -rf x # trailing comment", &["/bin/rm -rf x"]),
            ("echo a\\ b", &["echo a b"]),
            // Reserved words are looked through to the commands inside.
            ("{ rm -rf x; }", &["rm -rf x"]),
            (
                "if a; then b; elif c; then d; else e; fi",
                &["a", "b", "c", "d", "e"],
            ),
            ("for f in a b; do rm \"$f\"; done", &["rm $f"]),
            ("for ((i = 0; i < 3; i++)); do a; done", &["a"]),
            (
                "while a; do b; done; until c; do d; done",
                &["a", "b", "c", "d"],
            ),
            (
                "case $x in (a|b) one;; *.rs) two;& *) three;; esac",
                &["one", "two", "three"],
            ),
            ("! a | b", &["a", "b"]),
            ("coproc job { a; }; coproc b c", &["a", "b c"]),
            ("f() { a; }; function g { b; }; f", &["a", "b", "f"]),
            ("[[ $a == b || -n $c ]] && d", &["[[ $a == b -n $c ]]", "d"]),
            ("cat <<'EOF'\nrm -rf /\nEOF\nls", &["cat", "ls"]),
            ("cat <<EOF\n$(rm -rf x)\nEOF", &["rm -rf x", "cat"]),
            (
                "echo $(( 1 + 2 )) ${X:-$(b)}",
                &["b", "echo $((…)) ${X:-$(b)}"],
            ),
            ("$'r\\x6d' -rf x; 'r''m' y", &["rm -rf x", "rm y"]),
            // Wrappers.
            ("setsid -f nohup a", &["a"]),
            ("flock -w 5 /tmp/l -c 'a; b'", &["a", "b"]),
            ("flock /tmp/l a b", &["a b"]),
            ("exec -a name a", &["a"]),
            ("nice --adjustment 5 a; nice -n5 b", &["a", "b"]),
            ("env -S 'FOO=1 a -x' y", &["a -x y"]),
            ("env --split-string='a b'", &["a b"]),
            (
                "xargs --delimiter x -I{} a {}",
                &["a {}", "xargs --delimiter x -I{} a {}"],
            ),
            (
                "bash -o pipefail -O extglob --norc -c 'a'",
                &["a", "bash -o pipefail -O extglob --norc -c a"],
            ),
            ("stdbuf -o 0 ionice -c 3 chrt -i 0 taskset -c 1 a", &["a"]),
            ("watch -n 1 'a | b'", &["a", "b"]),
            ("su -c 'a' root", &["a"]),
            ("trap 'a' EXIT", &["a", "trap a EXIT"]),
            (
                "unshare -r setpriv --reuid=1 prlimit --nofile=1 strace -o /dev/null a",
                &["a"],
            ),
            ("setarch x86_64 -R a; nsenter -t 1 -m b", &["a", "b"]),
            ("capsh -- -c 'a'", &["a", "bash -c a"]),
            ("git-push origin", &["git push origin"]),
            (
                "tool --flag sh -c 'a'",
                &["a", "sh -c a", "tool --flag sh -c a"],
            ),
        ];
        for (line, expected) in table {
            assert_eq!(cmds(line), *expected, "{line}");
        }
    }

    #[test]
    fn what_cannot_be_followed_is_an_error() {
        for line in [
            "echo 'open",
            "echo \"open",
            "echo `open",
            "echo $(open",
            "$CMD -rf /",
            "bash -c",
            "$(printf rm) x",
            "{a,b} x",
            "/bin/r? x",
            "eval \"$X\"",
            "source <(a)",
            "echo a | bash",
            "bash <<< a",
            "sh -s < /dev/stdin",
            "bash /dev/stdin",
            "git -c alias.p=push p",
            "git -c core.pager=a log",
            "GIT_CONFIG_COUNT=1 git status",
            "export GIT_SSH_COMMAND=a",
            "env -S \"$X\"",
            "echo $(( $(a) + 1 ))",
            "alias x='b'",
            "x='a[$(b)]'; (( x ))",
            "BASH_CMDS[ls]=/bin/rm; ls",
            "git config alias.p push; git p",
        ] {
            assert!(simple_commands(line).is_err(), "{line}");
        }
        let deep = format!("echo {}ls{}", "$(echo ".repeat(20), ")".repeat(20));
        assert!(simple_commands(&deep).is_err());
        let braces = format!("echo {}x{}", "${a:-".repeat(100), "}".repeat(100));
        assert!(simple_commands(&braces).is_err());
        let fine = format!("echo {}ls{}", "$(echo ".repeat(3), ")".repeat(3));
        assert!(simple_commands(&fine).is_ok());
        for line in [
            "bash script.sh",
            "bash < script.sh",
            "git -c user.name=x commit",
            "cat <<EOF\nhi\nEOF",
            "FOO=1 make",
            "for ((i = 0; i < 3; i++)); do a $i; done",
            "n=2; echo $((n * 2)) ${#list[@]}",
            "git config user.name x && git status",
        ] {
            assert!(simple_commands(line).is_ok(), "{line}");
        }
    }

    #[test]
    fn assignments_redirections_and_wrappers_are_kept() {
        let reading = read("FOO=1 sudo env BAR=2 a > out 2>&1 < in; b <<< x | c").unwrap();
        let [a, b, c] = reading.commands.as_slice() else {
            panic!("{reading:?}")
        };
        assert_eq!(a.texts(), ["a"]);
        let assignments: Vec<&str> = a.assignments.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(assignments, ["FOO=1", "BAR=2"]);
        assert_eq!(a.wrappers, ["sudo", "env"]);
        let targets: Vec<(&str, RedirectKind, bool)> = a
            .redirects
            .iter()
            .map(|r| (r.target.text.as_str(), r.kind, r.stdin))
            .collect();
        assert_eq!(
            targets,
            [
                ("out", RedirectKind::File, false),
                ("1", RedirectKind::Dup, false),
                ("in", RedirectKind::File, true),
            ]
        );
        assert_eq!(b.redirects[0].kind, RedirectKind::HereString);
        assert!(!b.piped && c.piped);
        let split = read("env -S 'a b'").unwrap();
        assert!(split.commands[0].split_string);
        let appended = read("xargs a").unwrap();
        assert!(appended.commands[0].appended);
        let grouped = read("{ a; } > ~/x").unwrap();
        assert_eq!(grouped.commands[1].words, []);
        assert_eq!(grouped.commands[1].redirects[0].target.text, "~/x");
    }
}
