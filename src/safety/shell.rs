//! Reading a shell command line the way a shell would split it, without
//! running or expanding anything: the simple commands it runs, each as its
//! words with quotes removed. Commands inside `$(…)`, backticks, `<(…)`,
//! subshells, `bash -c '…'`/`sh -c`, `eval`, `xargs` and `find -exec` are
//! commands too, and wrappers (`sudo`, `env`, `nohup`, `timeout`, `nice`,
//! `command`, `exec`, assignments) are looked through. Invariant: a line
//! this reader cannot follow (an open quote, a here-document, a program
//! named by a variable) is an error, never a guess.

use thiserror::Error;

#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct Unparsed(pub String);

/// Nesting allowed for `bash -c` inside `$(…)` inside … before giving up.
const MAX_DEPTH: usize = 8;

/// The simple commands `line` runs, each as its words (program first,
/// wrappers removed).
pub fn simple_commands(line: &str) -> Result<Vec<Vec<String>>, Unparsed> {
    let mut out = Vec::new();
    collect(line, 0, &mut out)?;
    Ok(out)
}

fn collect(line: &str, depth: usize, out: &mut Vec<Vec<String>>) -> Result<(), Unparsed> {
    if depth > MAX_DEPTH {
        return Err(Unparsed("commands nested too deeply".into()));
    }
    let mut lexer = Lexer {
        chars: line.chars().collect(),
        pos: 0,
        nested: Vec::new(),
    };
    let commands = lexer.commands()?;
    for inner in std::mem::take(&mut lexer.nested) {
        collect(&inner, depth + 1, out)?;
    }
    for words in commands {
        expand(words, depth, out)?;
    }
    Ok(())
}

/// Looks through wrappers and runs of `bash -c`, `eval`, `xargs` and
/// `find -exec`, adding every command found.
fn expand(words: Vec<String>, depth: usize, out: &mut Vec<Vec<String>>) -> Result<(), Unparsed> {
    let words = strip_wrappers(words);
    let Some(program) = words.first() else {
        return Ok(());
    };
    if program.contains('$') || program.contains('`') {
        return Err(Unparsed(format!(
            "the program `{program}` is named by an expansion"
        )));
    }
    let name = basename(program);
    match name {
        "bash" | "sh" | "zsh" | "dash" | "ksh" | "fish" => {
            // `-c STRING`, also in a cluster such as `-lc` or `-ec`.
            let mut args = words.iter().skip(1);
            while let Some(arg) = args.next() {
                if arg.starts_with('-') && !arg.starts_with("--") && arg.contains('c') {
                    let script = args
                        .next()
                        .ok_or_else(|| Unparsed(format!("`{name} -c` without a command")))?;
                    collect(script, depth + 1, out)?;
                    break;
                }
                if !arg.starts_with('-') {
                    break;
                }
            }
        }
        "eval" => collect(&words[1..].join(" "), depth + 1, out)?,
        "xargs" => {
            // The first word that is not an option (or an option's value) is the command.
            let mut i = 1;
            while i < words.len() && words[i].starts_with('-') {
                let takes_value = matches!(
                    words[i].as_str(),
                    "-I" | "-n" | "-P" | "-L" | "-s" | "-d" | "-E" | "-a"
                );
                i += if takes_value { 2 } else { 1 };
            }
            if i < words.len() {
                expand(words[i..].to_vec(), depth + 1, out)?;
            }
        }
        "find" => {
            let mut i = 1;
            while i < words.len() {
                if matches!(words[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                    let end = words[i + 1..]
                        .iter()
                        .position(|w| w == ";" || w == "+")
                        .map_or(words.len(), |p| i + 1 + p);
                    expand(words[i + 1..end].to_vec(), depth + 1, out)?;
                    i = end;
                }
                i += 1;
            }
        }
        _ => {}
    }
    out.push(words);
    Ok(())
}

/// The program's file name: `/usr/bin/rm` is `rm`.
pub fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Drops what runs the real command: assignments, `sudo`, `env`, `nohup`,
/// `time`, `nice`, `timeout`, `command`, `exec`, `builtin`, `stdbuf`.
fn strip_wrappers(mut words: Vec<String>) -> Vec<String> {
    loop {
        let Some(first) = words.first() else {
            return words;
        };
        let skip = if is_assignment(first) {
            1
        } else {
            match basename(first) {
                "nohup" | "command" | "exec" | "builtin" | "time" | "noglob" => {
                    1 + options(&words[1..], &[])
                }
                "sudo" | "doas" => 1 + options(&words[1..], &["-u", "-g", "-h", "-p", "-C", "-U"]),
                "env" => {
                    let mut n = 1 + options(&words[1..], &["-u", "-C", "-S"]);
                    while words.get(n).is_some_and(|w| is_assignment(w)) {
                        n += 1;
                    }
                    n
                }
                "nice" | "ionice" | "stdbuf" => 1 + options(&words[1..], &["-n", "-c", "-i", "-p"]),
                "timeout" => {
                    let n = 1 + options(&words[1..], &["-s", "-k", "--signal", "--kill-after"]);
                    n + 1 // the duration
                }
                _ => return words,
            }
        };
        words.drain(..skip.min(words.len()));
    }
}

/// How many leading words are options (those in `with_value` take the next word too).
fn options(words: &[String], with_value: &[&str]) -> usize {
    let mut n = 0;
    while let Some(w) = words.get(n) {
        if w == "--" {
            return n + 1;
        }
        if !w.starts_with('-') || w == "-" {
            break;
        }
        n += if with_value.contains(&w.as_str()) {
            2
        } else {
            1
        };
    }
    n.min(words.len())
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    /// The text of command substitutions, read as commands afterwards.
    nested: Vec<String>,
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    /// Every simple command in order (empty ones dropped).
    fn commands(&mut self) -> Result<Vec<Vec<String>>, Unparsed> {
        let mut commands = Vec::new();
        let mut words: Vec<String> = Vec::new();
        let mut redirect_target = false;
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' => self.pos += 1,
                '\\' if self.peek(1) == Some('\n') => self.pos += 2,
                '\n' | ';' | '&' | '|' | '(' | ')' => {
                    self.pos += 1;
                    if c == '&' && self.peek(0) == Some('>') {
                        // `&>file`: a redirection of both streams.
                        self.pos += 1;
                        if self.peek(0) == Some('>') {
                            self.pos += 1;
                        }
                        redirect_target = true;
                        continue;
                    }
                    if !words.is_empty() {
                        commands.push(std::mem::take(&mut words));
                    }
                }
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '<' | '>' => {
                    if c == '<' && self.peek(1) == Some('<') && self.peek(2) != Some('<') {
                        return Err(Unparsed("here-documents are not read".into()));
                    }
                    if self.peek(1) == Some('(') {
                        // Process substitution: a command of its own.
                        self.pos += 2;
                        let inner = self.until_close(')')?;
                        self.nested.push(inner);
                        continue;
                    }
                    while self
                        .peek(0)
                        .is_some_and(|c| matches!(c, '<' | '>' | '&' | '|'))
                    {
                        self.pos += 1;
                    }
                    // `2>&1`: the target is a descriptor, part of this word.
                    redirect_target = true;
                }
                _ => {
                    let word = self.word()?;
                    // `2>file`: a descriptor number glued to a redirection.
                    if matches!(self.peek(0), Some('<' | '>'))
                        && word.chars().all(|c| c.is_ascii_digit())
                    {
                        continue;
                    }
                    if std::mem::take(&mut redirect_target) {
                        continue;
                    }
                    words.push(word);
                }
            }
        }
        if !words.is_empty() {
            commands.push(words);
        }
        Ok(commands)
    }

    /// One word, quotes removed; substitutions inside it are kept for later.
    fn word(&mut self) -> Result<String, Unparsed> {
        let mut word = String::new();
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                '\\' => {
                    if let Some(next) = self.peek(1) {
                        if next != '\n' {
                            word.push(next);
                        }
                        self.pos += 2;
                    } else {
                        self.pos += 1;
                    }
                }
                '\'' => {
                    self.pos += 1;
                    loop {
                        match self.peek(0) {
                            None => return Err(Unparsed("a single quote is not closed".into())),
                            Some('\'') => {
                                self.pos += 1;
                                break;
                            }
                            Some(ch) => {
                                word.push(ch);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '"' => {
                    self.pos += 1;
                    loop {
                        match self.peek(0) {
                            None => return Err(Unparsed("a double quote is not closed".into())),
                            Some('"') => {
                                self.pos += 1;
                                break;
                            }
                            Some('\\') => {
                                match self.peek(1) {
                                    Some(ch @ ('"' | '\\' | '$' | '`')) => word.push(ch),
                                    Some('\n') => {}
                                    Some(ch) => {
                                        word.push('\\');
                                        word.push(ch);
                                    }
                                    None => {}
                                }
                                self.pos += 2;
                            }
                            Some('$') if self.peek(1) == Some('(') => {
                                self.substitution(&mut word)?
                            }
                            Some('`') => self.backticks(&mut word)?,
                            Some(ch) => {
                                word.push(ch);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '$' if self.peek(1) == Some('(') => self.substitution(&mut word)?,
                '`' => self.backticks(&mut word)?,
                _ => {
                    word.push(c);
                    self.pos += 1;
                }
            }
        }
        Ok(word)
    }

    /// `$(…)` (a command) or `$((…))` (arithmetic); the word keeps `$(…)`.
    fn substitution(&mut self, word: &mut String) -> Result<(), Unparsed> {
        if self.peek(2) == Some('(') {
            self.pos += 3;
            self.until_close(')')?;
            self.until_close(')')?;
            word.push_str("$((…))");
            return Ok(());
        }
        self.pos += 2;
        let inner = self.until_close(')')?;
        self.nested.push(inner);
        word.push_str("$(…)");
        Ok(())
    }

    fn backticks(&mut self, word: &mut String) -> Result<(), Unparsed> {
        self.pos += 1;
        let mut inner = String::new();
        loop {
            match self.peek(0) {
                None => return Err(Unparsed("a backquote is not closed".into())),
                Some('`') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') if self.peek(1).is_some() => {
                    inner.extend(self.peek(1));
                    self.pos += 2;
                }
                Some(ch) => {
                    inner.push(ch);
                    self.pos += 1;
                }
            }
        }
        self.nested.push(inner);
        word.push_str("`…`");
        Ok(())
    }

    /// The text up to the matching `close` (nesting and quotes respected);
    /// the position ends after it.
    fn until_close(&mut self, close: char) -> Result<String, Unparsed> {
        let start = self.pos;
        let mut level = 0usize;
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some('"'), '\\') | (None, '\\') => self.pos += 1,
                (Some(_), _) => {}
                (None, '\'' | '"' | '`') => quote = Some(c),
                (None, '(') => level += 1,
                (None, c) if c == close => {
                    if level == 0 {
                        let end = self.pos - 1;
                        return Ok(self.chars[start..end].iter().collect());
                    }
                    level -= 1;
                }
                _ => {}
            }
        }
        Err(Unparsed(format!("a `{close}` is missing")))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

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
            ("diff <(sort a) b", &["sort a", "diff b"]),
            ("echo $((1 + 2))", &["echo $((…))"]),
            ("/bin/rm -rf x # trailing comment", &["/bin/rm -rf x"]),
            ("echo a\\ b", &["echo a b"]),
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
            "cat <<EOF\nrm -rf /\nEOF",
            "$CMD -rf /",
            "bash -c",
        ] {
            assert!(simple_commands(line).is_err(), "{line}");
        }
        let deep = format!("echo {}ls{}", "$(echo ".repeat(20), ")".repeat(20));
        assert!(simple_commands(&deep).is_err());
        let fine = format!("echo {}ls{}", "$(echo ".repeat(3), ")".repeat(3));
        assert!(simple_commands(&fine).is_ok());
    }
}
