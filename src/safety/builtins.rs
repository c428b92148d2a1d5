//! The shell's builtins that give variables values or evaluate text
//! (`declare -i`, `let`, `[[ … -eq … ]]`, `read`, `printf -v`, `mapfile`,
//! `unset`, `for`, …), read into an [`Evaluation`]; those that change what
//! a name runs (`alias`, `enable -f`), and the variables that do (`PAGER`,
//! `BASH_CMDS`, …), which no rule can follow.

use super::evaluate::{Evaluation, Value};
use super::lexer::Word;
use super::simple::{Simple, is_assignment};

/// `[[ … ]]`'s operators whose operands are arithmetic.
const ARITHMETIC_TESTS: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

/// Variables that make programs run commands of their choosing.
const COMMAND_VARS: &[&str] = &[
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "GIT_EXEC_PATH",
    "GIT_PROXY_COMMAND",
    "PAGER",
    "MANPAGER",
    "EDITOR",
    "VISUAL",
    "SSH_ASKPASS",
    "LD_PRELOAD",
    "LD_AUDIT",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "LESSOPEN",
    "LESSCLOSE",
];

/// Why a variable the line sets makes a name run what the line does not
/// show: one that makes programs run commands, or one of the shell's
/// tables of what a name runs.
pub fn variable_problem(name: &str) -> Option<String> {
    if COMMAND_VARS.contains(&name)
        || name.starts_with("GIT_CONFIG")
        || name.starts_with("BASH_FUNC_")
    {
        return Some(format!(
            "`{name}` is set, which can make programs run other commands"
        ));
    }
    matches!(name, "BASH_CMDS" | "BASH_ALIASES")
        .then(|| format!("`{name}` is set, which makes a name run another program"))
}

/// A `for` (or `select`) header after the reserved word: `NAME in WORDS`
/// gives `NAME` each word's value; without `in` (the positional
/// parameters) or for `select` (the user's choice) a value made at run time.
pub fn bind_loop(for_loop: bool, header: &[&Word], ev: &mut Evaluation) {
    let Some((name, rest)) = header.split_first() else {
        return;
    };
    match rest.split_first() {
        Some((word, values)) if for_loop && word.text == "in" && !word.quoted => {
            for value in values {
                ev.bind(&name.text, Value::of(value));
            }
        }
        _ => ev.bind(&name.text, Value::Generated),
    }
}

/// Reads what builtin `name` does with names and evaluated text into
/// `ev`; `Err(why)` when it makes a name run code the line does not show.
pub fn follow(name: &str, s: &Simple, ev: &mut Evaluation) -> Result<(), String> {
    let args = s.words.get(1..).unwrap_or_default();
    match name {
        "declare" | "typeset" | "local" | "export" | "readonly" => declare(name, args, ev),
        "let" => {
            for arg in args {
                ev.arithmetic_word(arg, "`let`");
            }
        }
        "[[" => conditional(args, ev),
        "test" | "[" => {
            for pair in args.windows(2) {
                if pair[0].text == "-v" {
                    ev.name_operand(&pair[1], "`test -v`");
                }
            }
        }
        "read" => {
            let names = operands(args, "adinNptu", &['a']);
            bind_read(&names, ev, "`read`");
        }
        "mapfile" | "readarray" => {
            if args.iter().take_while(|w| w.text != "--").any(|w| {
                w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains('C')
            }) {
                return Err(format!(
                    "`{name} -C` runs a callback with each line it reads, which the line does not show"
                ));
            }
            let names = operands(args, "dnOsuc", &[]);
            bind_read(&names, ev, "`mapfile`");
        }
        // Only the `-v` name: the rest are the format and its values.
        "printf" if args.iter().any(|w| w.text.starts_with("-v")) => {
            let names = operands(args, "v", &['v']);
            bind_read(names.get(..1).unwrap_or_default(), ev, "`printf -v`");
        }
        "getopts" => bind_read(args.get(1..2).unwrap_or_default(), ev, "`getopts`"),
        "wait" if args.iter().any(|w| w.text.starts_with("-p")) => {
            let names = operands(args, "p", &['p']);
            bind_read(names.get(..1).unwrap_or_default(), ev, "`wait -p`");
        }
        "unset" => {
            for arg in args.iter().filter(|w| !w.text.starts_with('-')) {
                ev.name_operand(arg, "`unset`");
            }
        }
        "source" | "." => ev.unknown(format!("`{name}` sets variables the line does not show")),
        "alias" if args.iter().any(|w| w.text.contains('=')) => {
            return Err("`alias` makes a name run other commands".into());
        }
        "enable"
            if args
                .iter()
                .any(|w| w.text.starts_with('-') && w.text.contains('f')) =>
        {
            return Err("`enable -f` loads a builtin from a file".into());
        }
        _ => {}
    }
    Ok(())
}

/// `declare [OPTIONS] NAME[=VALUE]…`: `-i` makes the names integers,
/// whose values are evaluated; a word made by an expansion that is no
/// assignment gives names and values no one can know.
fn declare(name: &str, args: &[Word], ev: &mut Evaluation) {
    let mut integer = false;
    for arg in args {
        let t = arg.text.as_str();
        if arg.literal() && t.len() > 1 && t.starts_with(['-', '+']) && !t.contains('=') {
            integer |= t.starts_with('-') && t.contains('i');
            continue;
        }
        if arg.literal() || is_assignment(arg) {
            assign(arg, integer, ev);
        } else {
            ev.unknown(format!(
                "`{name}` is given `{}`, made by an expansion",
                arg.raw
            ));
        }
    }
}

/// `NAME[SUB]=VALUE` (or a name alone): the subscript is evaluated, the
/// value bound; returns the name.
pub fn assign(word: &Word, integer: bool, ev: &mut Evaluation) -> Option<String> {
    // A word made by an expansion is read as written.
    let text = if word.literal() {
        &word.text
    } else {
        &word.raw
    };
    let (target, value) = split_assignment(text);
    let name: String = target
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if name.is_empty() {
        return None;
    }
    ev.subscript_of(target);
    if integer {
        ev.integer(&name);
    }
    if let Some(value) = value {
        let value = if word.literal() {
            Value::of(&Word::plain(value))
        } else {
            let raw = Word {
                text: value.to_string(),
                raw: value.to_string(),
                expanded: value.contains(['$', '`']),
                ..Word::default()
            };
            Value::of(&raw)
        };
        ev.bind(&name, value);
    }
    Some(name)
}

/// `NAME[SUB]+=VALUE` split at its `=` (outside the subscript).
fn split_assignment(text: &str) -> (&str, Option<&str>) {
    let mut level = 0i32;
    for (i, c) in text.char_indices() {
        match c {
            '[' => level += 1,
            ']' => level -= 1,
            '=' if level <= 0 => {
                let target = text[..i].strip_suffix('+').unwrap_or(&text[..i]);
                return (target, Some(&text[i + 1..]));
            }
            _ => {}
        }
    }
    (text, None)
}

/// `[[ A -eq B ]]`: both operands are arithmetic; `-v NAME` evaluates a
/// subscript.
fn conditional(args: &[Word], ev: &mut Evaluation) {
    for (i, w) in args.iter().enumerate() {
        if w.quoted {
            continue;
        }
        if ARITHMETIC_TESTS.contains(&w.text.as_str()) {
            for operand in [i.checked_sub(1), Some(i + 1)]
                .into_iter()
                .flatten()
                .filter_map(|at| args.get(at))
            {
                ev.arithmetic_word(operand, "`[[ … -eq … ]]`");
            }
        } else if w.text == "-v"
            && let Some(operand) = args.get(i + 1)
        {
            ev.name_operand(operand, "`[[ -v … ]]`");
        }
    }
}

/// The operands of a builtin after its options (`short`: the letters that
/// take a value), with the values of the letters in `named` first: they
/// are names too.
fn operands(args: &[Word], short: &str, named: &[char]) -> Vec<Word> {
    let (mut names, mut out) = (Vec::new(), Vec::new());
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        let t = w.text.as_str();
        if t == "--" {
            out.extend(args[i..].iter().cloned());
            break;
        }
        let Some(letters) = t.strip_prefix('-').filter(|l| !l.is_empty()) else {
            out.push(w.clone());
            continue;
        };
        let Some((at, c)) = letters.char_indices().find(|(_, c)| short.contains(*c)) else {
            continue;
        };
        let rest = &letters[at + c.len_utf8()..];
        let value = if rest.is_empty() {
            i += 1;
            args.get(i - 1).cloned()
        } else {
            Some(Word {
                text: rest.to_string(),
                raw: rest.to_string(),
                expanded: !w.literal(),
                ..Word::default()
            })
        };
        if named.contains(&c) {
            names.extend(value);
        }
    }
    names.extend(out);
    names
}

/// Names given values read when the line runs.
fn bind_read(names: &[Word], ev: &mut Evaluation, context: &str) {
    for name in names {
        ev.name_operand(name, context);
        if let Some(bound) = assign(name, false, ev) {
            ev.bind(&bound, Value::Generated);
        }
    }
}
