//! Text the shell evaluates as code although no command shows it.
//! Arithmetic (`((…))`, `$((…))`, `$[…]`, `let`, `[[ a -eq b ]]`, array
//! subscripts, `${s:offset:length}`, values given to `declare -i` names)
//! evaluates the value of every name in it, and a value such as
//! `a[$(rm -rf x)]` runs `rm`; `${!x}` and `${x@P}` do the same with `x`'s
//! value. Invariant: a name whose value reaches such a context is followed
//! only when every value the line gives it is a number; any other value
//! (text the line holds, one made by an expansion or read when the line
//! runs, a name the line never sets or one the shell sets from outside
//! data) is code the line does not show, and [`Evaluation::problem`] says so.

use std::collections::BTreeSet;

use super::lexer::Word;

/// Nesting of subscripts inside arithmetic read before giving up.
const MAX_NESTING: usize = 16;

/// Names the shell itself gives values read from outside the line.
const RUNTIME: &[&str] = &[
    "_",
    "REPLY",
    "MAPFILE",
    "BASH_REMATCH",
    "OPTARG",
    "PWD",
    "OLDPWD",
    "BASH_COMMAND",
    "BASH_ARGV",
    "BASH_EXECUTION_STRING",
    "COPROC",
    "DIRSTACK",
    "FUNCNAME",
    "READLINE_LINE",
];

/// What a value given to a name is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A number, written as one or made by arithmetic.
    Number,
    /// Text the line holds.
    Text(String),
    /// Made by an expansion, or read when the line runs.
    Generated,
}

impl Value {
    /// The value a word gives (`x=WORD`, `for x in WORD`).
    pub fn of(word: &Word) -> Self {
        if word.literal() {
            if is_number(&word.text) {
                return Value::Number;
            }
            return Value::Text(word.text.clone());
        }
        if numeric_expansion(word.raw.trim_matches('"')) {
            Value::Number
        } else {
            Value::Generated
        }
    }

    /// The value of text a shell would still expand (`${x:=TEXT}`).
    fn of_text(text: &str) -> Self {
        if text.contains(['$', '`']) {
            Value::Generated
        } else if is_number(text) {
            Value::Number
        } else {
            Value::Text(text.to_string())
        }
    }
}

/// A number as arithmetic reads one: `12`, `-3`, `0x1f`, `2#101`.
fn is_number(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    digits.starts_with(|c: char| c.is_ascii_digit())
        && digits
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '#' | '@'))
}

/// An expansion that always gives a number: `$((…))` (its inside is
/// checked on its own), `$#`, `$?`, `$$`, `$!`, `${#name}`.
fn numeric_expansion(raw: &str) -> bool {
    if matches!(raw, "$#" | "$?" | "$$" | "$!") {
        return true;
    }
    if let Some(inner) = raw.strip_prefix("${#").and_then(|r| r.strip_suffix('}')) {
        return !inner.is_empty() && !inner.contains(['$', '`', '{', '}']);
    }
    let chars: Vec<char> = raw.chars().collect();
    if !raw.starts_with("$((") || !raw.ends_with("))") {
        return false;
    }
    matching(&chars, 1, '(', ')') == Some(chars.len() - 1)
}

/// The index of the `close` matching the `open` at `at`.
fn matching(chars: &[char], at: usize, open: char, close: char) -> Option<usize> {
    let mut level = 0usize;
    for (i, &c) in chars.iter().enumerate().skip(at) {
        if c == open {
            level += 1;
        } else if c == close {
            level = level.checked_sub(1)?;
            if level == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// The names a piece of arithmetic reads and those it gives numbers to.
#[derive(Default)]
struct Scan {
    reads: Vec<String>,
    targets: Vec<String>,
}

/// What a line gives its variables, and the text it evaluates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Evaluation {
    values: Vec<(String, Value)>,
    integers: BTreeSet<String>,
    /// Arithmetic text, and what evaluates it.
    sums: Vec<(String, String)>,
    /// Names whose value is used as a name or a prompt, and where.
    names: Vec<(String, String)>,
    /// Why the line gives values no one can know (`source`, `declare "$x"`).
    unknown: Option<String>,
    /// Text made by an expansion that is evaluated.
    failed: Option<String>,
}

impl Evaluation {
    /// The line gives `name` the value `value`.
    pub fn bind(&mut self, name: &str, value: Value) {
        self.values.push((name.to_string(), value));
    }

    /// Every name the line gives a value.
    pub fn names_bound(&self) -> impl Iterator<Item = &str> {
        self.values.iter().map(|(n, _)| n.as_str())
    }

    /// `name` is declared an integer: every value it is given is evaluated.
    pub fn integer(&mut self, name: &str) {
        self.integers.insert(name.to_string());
    }

    /// `text` is evaluated as arithmetic by `context`.
    pub fn arithmetic(&mut self, text: &str, context: &str) {
        self.sums.push((text.to_string(), context.to_string()));
    }

    /// The word is evaluated as arithmetic (`let WORD`, `[[ WORD -eq 1 ]]`).
    pub fn arithmetic_word(&mut self, word: &Word, context: &str) {
        if word.literal() {
            self.arithmetic(&word.text, context);
        } else {
            let raw: String = word.raw.chars().filter(|c| *c != '"').collect();
            self.arithmetic(&raw, context);
        }
    }

    /// The value of `name` is used as a name or a prompt by `context`.
    pub fn value_used(&mut self, name: &str, context: &str) {
        self.names.push((name.to_string(), context.to_string()));
    }

    /// The line gives values the text does not show (`why`).
    pub fn unknown(&mut self, why: String) {
        self.unknown.get_or_insert(why);
    }

    /// A name given to a builtin (`printf -v NAME`, `unset NAME`,
    /// `[[ -v NAME ]]`): its subscript is evaluated, and a name made by an
    /// expansion is the expansion's value evaluated.
    pub fn name_operand(&mut self, word: &Word, context: &str) {
        if word.literal() {
            self.subscript_of(&word.text);
            return;
        }
        let raw: String = word.raw.chars().filter(|c| *c != '"').collect();
        let name = raw
            .strip_prefix("${")
            .and_then(|r| r.strip_suffix('}'))
            .or_else(|| raw.strip_prefix('$'))
            .filter(|n| is_name(n));
        match name {
            Some(name) => self.value_used(name, context),
            None => {
                self.failed.get_or_insert(format!(
                    "{context} is given `{}`, made by an expansion, which the shell evaluates",
                    word.raw
                ));
            }
        }
    }

    /// `NAME[SUB]…`: the subscript is arithmetic (but `[@]` and `[*]`).
    pub fn subscript_of(&mut self, text: &str) {
        if let Some((_, Some(sub), _)) = split_name(text)
            && sub != "@"
            && sub != "*"
        {
            self.arithmetic(sub, "an array subscript");
        }
    }

    /// The inside of a `${…}`: subscripts, offsets and lengths are
    /// arithmetic; `${!x}` and `${x@P}` use `x`'s value; `${x:=v}` gives
    /// `x` a value.
    pub fn param(&mut self, inner: &str) {
        if let Some(rest) = inner.strip_prefix('#').filter(|r| !r.is_empty()) {
            self.subscript_of(rest);
            return;
        }
        let (indirect, rest) = match inner.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, inner),
        };
        let Some((name, sub, after)) = split_name(rest) else {
            return;
        };
        let keys = sub.is_some_and(|s| s == "@" || s == "*");
        self.subscript_of(rest);
        if indirect {
            if !(keys || after == "*" || after == "@") {
                self.value_used(name, "an indirect expansion (`${!…}`)");
            }
        } else if after.starts_with("@P") {
            self.value_used(name, "a prompt expansion (`${…@P}`)");
        } else if let Some(op) = after.strip_prefix(':') {
            match op.chars().next() {
                Some('-' | '+' | '?') => {}
                Some('=') => self.bind(name, Value::of_text(&op[1..])),
                _ => {
                    for part in split_colon(op) {
                        self.arithmetic(part, "a substring's offset or length");
                    }
                }
            }
        } else if let Some(value) = after.strip_prefix('=') {
            self.bind(name, Value::of_text(value));
        }
    }

    /// Why text the line evaluates is code it does not show; `None` when
    /// every name that reaches evaluation holds only numbers.
    pub fn problem(&self) -> Option<String> {
        if let Some(failed) = &self.failed {
            return Some(failed.clone());
        }
        let mut sums = self.sums.clone();
        for (name, value) in self
            .values
            .iter()
            .filter(|(n, _)| self.integers.contains(n))
        {
            match value {
                Value::Number => {}
                Value::Text(text) => sums.push((
                    text.clone(),
                    format!("the value of `{name}`, declared an integer"),
                )),
                Value::Generated => {
                    return Some(format!(
                        "`{name}` is declared an integer, so the shell evaluates the value it is given, and that value is made when the line runs"
                    ));
                }
            }
        }
        let mut numbers: BTreeSet<&str> = self
            .values
            .iter()
            .filter(|(_, v)| *v == Value::Number)
            .map(|(n, _)| n.as_str())
            .collect();
        let mut reads: Vec<(String, String)> = self.names.clone();
        let mut targets = Vec::new();
        for (text, context) in &sums {
            let scan = match scan(text) {
                Ok(scan) => scan,
                Err(why) => return Some(format!("{why} in {context}, which the shell evaluates")),
            };
            targets.extend(scan.targets);
            reads.extend(scan.reads.into_iter().map(|r| (r, context.clone())));
        }
        numbers.extend(targets.iter().map(String::as_str));
        reads
            .iter()
            .find(|(name, _)| !self.holds_numbers(name, &numbers))
            .map(|(name, context)| self.why_not(name, context))
    }

    /// Every value the line gives `name` is a number, and it gives one.
    fn holds_numbers(&self, name: &str, numbers: &BTreeSet<&str>) -> bool {
        self.unknown.is_none()
            && !RUNTIME.contains(&name)
            && numbers.contains(name)
            && self
                .values
                .iter()
                .all(|(n, v)| n != name || *v == Value::Number)
    }

    fn why_not(&self, name: &str, context: &str) -> String {
        let known = match &self.unknown {
            Some(why) => format!(" ({why})"),
            None => String::new(),
        };
        format!(
            "the value of `{name}` reaches {context}, where the shell evaluates it as code, and the line does not show that it is a number{known}"
        )
    }
}

/// Whether the raw text of a word holds an expansion that evaluates text:
/// arithmetic, a subscript, an offset or length, `${!x}`, `${x@P}`.
pub fn evaluates(raw: &str) -> bool {
    let c: Vec<char> = raw.chars().collect();
    let mut i = 0;
    let mut double = false;
    while let Some(&ch) = c.get(i) {
        match ch {
            '\\' => i += 2,
            '\'' if !double => {
                i += 1;
                while c.get(i).is_some_and(|x| *x != '\'') {
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                double = !double;
                i += 1;
            }
            '$' => match c.get(i + 1) {
                Some('[') => return true,
                Some('(') if c.get(i + 2) == Some(&'(') => return true,
                Some('{') => {
                    let Some(close) = matching(&c, i + 1, '{', '}') else {
                        return true;
                    };
                    let mut ev = Evaluation::default();
                    ev.param(&c[i + 2..close].iter().collect::<String>());
                    if !ev.sums.is_empty() || !ev.names.is_empty() {
                        return true;
                    }
                    // What is nested inside is looked at too.
                    i += 2;
                }
                _ => i += 1,
            },
            _ => i += 1,
        }
    }
    false
}

fn is_name(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `NAME`, `NAME[SUB]` and what follows: the name (a variable, a digit
/// or a special parameter), the subscript, the rest.
fn split_name(text: &str) -> Option<(&str, Option<&str>, &str)> {
    let end = if text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(text.len())
    } else if text.starts_with(|c: char| c.is_ascii_digit()) {
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len())
    } else if text.starts_with(['@', '*', '#', '?', '$', '!', '-']) {
        1
    } else {
        return None;
    };
    let (name, rest) = text.split_at(end);
    if !rest.starts_with('[') {
        return Some((name, None, rest));
    }
    let chars: Vec<char> = rest.chars().collect();
    let close = matching(&chars, 0, '[', ']')?;
    let sub_end: usize = chars[..close].iter().map(|c| c.len_utf8()).sum();
    Some((name, Some(&rest[1..sub_end]), &rest[sub_end + 1..]))
}

/// `OFFSET:LENGTH` split at its colon outside brackets and parentheses.
fn split_colon(text: &str) -> Vec<&str> {
    let mut level = 0i32;
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' | '{' => level += 1,
            ')' | ']' | '}' => level -= 1,
            ':' if level == 0 => return vec![&text[..i], &text[i + 1..]],
            _ => {}
        }
    }
    vec![text]
}

/// The names arithmetic `text` reads and gives numbers to; `Err` when
/// it evaluates what an expansion makes (`$(…)`, `$1`, `${x:-…}`).
fn scan(text: &str) -> Result<Scan, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Scan::default();
    scan_into(&chars, &mut out, 0)?;
    Ok(out)
}

fn scan_into(c: &[char], out: &mut Scan, depth: usize) -> Result<(), String> {
    if depth > MAX_NESTING {
        return Err("arithmetic nested too deeply".into());
    }
    let mut i = 0;
    while let Some(&ch) = c.get(i) {
        match ch {
            '\\' => i += 2,
            '`' => return Err("a command's output (`` `…` ``) is evaluated".into()),
            '$' => i = dollar(c, i, out, depth)?,
            '0'..='9' => {
                while c
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '#' | '@'))
                {
                    i += 1;
                }
            }
            _ if ch.is_ascii_alphabetic() || ch == '_' => i = name(c, i, out, depth)?,
            _ => i += 1,
        }
    }
    Ok(())
}

/// A name in arithmetic at `start` (and its subscript): read, given a
/// number, or both; the index after it.
fn name(c: &[char], start: usize, out: &mut Scan, depth: usize) -> Result<usize, String> {
    let mut i = start;
    while c
        .get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
    {
        i += 1;
    }
    let name: String = c[start..i].iter().collect();
    let skip = |mut j: usize| {
        while c.get(j).is_some_and(|c| c.is_whitespace()) {
            j += 1;
        }
        j
    };
    let mut j = skip(i);
    if c.get(j) == Some(&'[') {
        let close = matching(c, j, '[', ']').ok_or("a `]` is missing")?;
        let sub = &c[j + 1..close];
        if sub != ['@'] && sub != ['*'] {
            scan_into(sub, out, depth + 1)?;
        }
        i = close + 1;
        j = skip(i);
    }
    let at = |k: usize| c.get(j + k).copied().unwrap_or(' ');
    let assign = at(0) == '=' && at(1) != '=';
    let compound = (matches!(at(0), '+' | '-' | '*' | '/' | '%' | '&' | '^' | '|') && at(1) == '=')
        || (matches!(at(0), '<' | '>') && at(1) == at(0) && at(2) == '=');
    let step_after = matches!(at(0), '+' | '-') && at(1) == at(0);
    let before: Vec<char> = c[..start]
        .iter()
        .rev()
        .filter(|c| !c.is_whitespace())
        .take(2)
        .copied()
        .collect();
    let step_before = matches!(before.as_slice(), ['+', '+'] | ['-', '-']);
    if assign {
        out.targets.push(name);
    } else {
        if compound || step_after || step_before {
            out.targets.push(name.clone());
        }
        out.reads.push(name);
    }
    Ok(i)
}

/// A `$` in arithmetic at `at`: a name read, a number, or an expansion
/// whose text is evaluated (`Err`); the index after it.
fn dollar(c: &[char], at: usize, out: &mut Scan, depth: usize) -> Result<usize, String> {
    let next = c.get(at + 1).copied();
    match next {
        // Nested arithmetic (`$((…))`, `$[…]`): read on as part of this.
        Some('(') if c.get(at + 2) == Some(&'(') => Ok(at + 1),
        Some('[') => Ok(at + 1),
        Some('(') => Err("a command's output (`$(…)`) is evaluated".into()),
        Some('{') => {
            let close = matching(c, at + 1, '{', '}').ok_or("a `}` is missing")?;
            let inner: String = c[at + 2..close].iter().collect();
            if is_name(&inner) {
                out.reads.push(inner);
            } else if let Some(rest) = inner.strip_prefix('#').filter(|r| !r.is_empty()) {
                if let Some((_, Some(sub), "")) = split_name(rest)
                    && sub != "@"
                    && sub != "*"
                {
                    let sub: Vec<char> = sub.chars().collect();
                    scan_into(&sub, out, depth + 1)?;
                }
            } else if inner != "#" {
                return Err(format!("`${{{inner}}}` is expanded and its text evaluated"));
            }
            Ok(close + 1)
        }
        Some(n) if n.is_ascii_alphabetic() || n == '_' => {
            let mut i = at + 1;
            while c
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
            {
                i += 1;
            }
            out.reads.push(c[at + 1..i].iter().collect());
            Ok(i)
        }
        Some('#' | '?' | '$' | '!') => Ok(at + 2),
        Some(n) if n.is_ascii_digit() || matches!(n, '@' | '*' | '-') => Err(format!(
            "a parameter (`${n}`) is expanded and its text evaluated"
        )),
        _ => Ok(at + 1),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn reads(text: &str) -> (Vec<String>, Vec<String>) {
        let scan = scan(text).unwrap();
        (scan.reads, scan.targets)
    }

    #[test]
    fn arithmetic_reads_names_and_gives_numbers() {
        assert_eq!(reads("i = 0"), (vec![], vec!["i".into()]));
        assert_eq!(reads("i < n"), (vec!["i".into(), "n".into()], vec![]));
        assert_eq!(reads("i++"), (vec!["i".into()], vec!["i".into()]));
        assert_eq!(reads("++ i"), (vec!["i".into()], vec!["i".into()]));
        assert_eq!(reads("x += 2"), (vec!["x".into()], vec!["x".into()]));
        assert_eq!(
            reads("x == 2 || y <= 3"),
            (vec!["x".into(), "y".into()], vec![])
        );
        assert_eq!(
            reads("a[i] = 0x1f + 2#101"),
            (vec!["i".into()], vec!["a".into()])
        );
        assert_eq!(
            reads("$x + ${y} + $# + ${#z[@]}"),
            (vec!["x".into(), "y".into()], vec![])
        );
        for bad in ["$(a)", "`a`", "$1", "${x:-1}", "a[$(b)]"] {
            assert!(scan(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn values_are_numbers_only_when_written_or_made_as_numbers() {
        let word = |raw: &str| {
            let mut lexer = super::super::lexer::Lexer::new(raw);
            match lexer.tokens().unwrap().remove(0) {
                super::super::lexer::Tok::Word(w) => w,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(Value::of(&word("12")), Value::Number);
        assert_eq!(Value::of(&word("-3")), Value::Number);
        assert_eq!(Value::of(&word("$((i + 1))")), Value::Number);
        assert_eq!(Value::of(&word("\"$((i))\"")), Value::Number);
        assert_eq!(Value::of(&word("$((1))$x")), Value::Generated);
        assert_eq!(Value::of(&word("x")), Value::Text("x".into()));
        assert_eq!(Value::of(&word("''")), Value::Text(String::new()));
        assert_eq!(Value::of(&word("$x")), Value::Generated);
    }

    #[test]
    fn a_name_is_followed_only_when_it_holds_numbers() {
        let mut ev = Evaluation::default();
        ev.bind("n", Value::Number);
        ev.arithmetic("i = 0; i < n; i++", "a loop");
        assert_eq!(ev.problem(), None);
        ev.bind("x", Value::Text("a[$(rm)]".into()));
        ev.param("a[x]");
        assert!(
            ev.problem()
                .unwrap()
                .contains("`x` reaches an array subscript")
        );
        let mut ev = Evaluation::default();
        ev.param("!x");
        assert!(ev.problem().is_some());
        let mut ev = Evaluation::default();
        ev.param("!x[@]");
        ev.param("#list[@]");
        ev.param("x:-default");
        assert_eq!(ev.problem(), None);
        let mut ev = Evaluation::default();
        ev.integer("y");
        ev.bind("y", Value::Text("a[$(rm)]".into()));
        assert!(ev.problem().is_some());
    }
}
