//! A shell command line read into tokens the way a shell would split it,
//! without running or expanding anything: words with quotes removed (and
//! what in them a shell would expand), control operators, redirections with
//! their targets, here-document bodies. The text of every command
//! substitution (`$(…)`, backticks, `<(…)`, inside `${…}`, `$((…))` and
//! unquoted here-documents) is kept to be read as commands too, and so is
//! the text the shell evaluates (arithmetic, the inside of `${…}`), to be
//! checked by [`super::evaluate`]. Invariant: what cannot be read (an open
//! quote, a missing `)`) is an error.

mod word;

use thiserror::Error;

/// What cannot be read as a shell line (an open quote, a missing `)`), or
/// what it runs cannot be followed: why, in words.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct Unparsed(pub String);

/// One word, quotes removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Word {
    /// The text without quotes (`$'…'` decoded); a substitution is shown as
    /// `$(…)`, `` `…` ``, `<(…)`, a parameter as written (`$X`, `${X}`).
    pub text: String,
    /// The word as written.
    pub raw: String,
    /// A parameter, command, arithmetic or process substitution is in it:
    /// the shell's word is not `text`.
    pub expanded: bool,
    /// An unquoted glob (`*`, `?`, `[…]`).
    pub glob: bool,
    /// An unquoted brace expansion (`{a,b}`, `{1..3}`).
    pub brace: bool,
    /// Some of it is quoted or escaped.
    pub quoted: bool,
    /// Characters of `text` before the first expansion or brace.
    pub lead: usize,
}

impl Word {
    /// A word with nothing to expand.
    pub fn plain(text: &str) -> Self {
        Self {
            text: text.to_string(),
            raw: text.to_string(),
            lead: text.chars().count(),
            ..Self::default()
        }
    }

    /// Not expanded in any way: the shell's word is `text`.
    pub fn literal(&self) -> bool {
        !self.expanded && !self.glob && !self.brace
    }

    /// The text before the first expansion.
    pub fn leading(&self) -> String {
        self.text.chars().take(self.lead).collect()
    }

    fn mark(&mut self) {
        if self.literal() {
            self.lead = self.text.chars().count();
        }
    }
}

/// What a redirection does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedirectKind {
    /// To or from a file (`>`, `>>`, `<`, `&>`, `<>`, `>|`).
    File,
    /// A copy of a descriptor (`2>&1`, `<&0`, `>&-`).
    Dup,
    /// `<<< word`.
    HereString,
    /// `<<EOF … EOF`: the target's text is the body.
    HereDoc,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    pub kind: RedirectKind,
    /// It is the command's standard input.
    pub stdin: bool,
    pub target: Word,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    Word(Word),
    /// `;`, `&` or a newline.
    Sep,
    /// `&&` or `||`.
    AndOr,
    /// `|` or `|&`.
    Pipe,
    Open,
    Close,
    /// `;;`, `;&`, `;;&`.
    CaseEnd,
    Redirect(Redirect),
}

/// A here-document waiting for its body (read after the next newline).
struct Pending {
    token: usize,
    delimiter: String,
    strip_tabs: bool,
    quoted: bool,
}

pub struct Lexer {
    chars: Vec<char>,
    pos: usize,
    /// The text of command substitutions, read as commands afterwards.
    pub nested: Vec<String>,
    /// The text of arithmetic (`((…))`, `$((…))`, `$[…]`), which the shell
    /// evaluates.
    pub arith_texts: Vec<String>,
    /// The inside of each `${…}` (subscripts, offsets, `!`, `@P` evaluate).
    pub params: Vec<String>,
    pending: Vec<Pending>,
    /// How deep in `${…}` and `$((…))` this lexer reads.
    depth: usize,
}

/// Nesting of `${…}` and `$((…))` read before giving up.
const MAX_NESTING: usize = 16;

fn breaks_word(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
    )
}

impl Lexer {
    pub fn new(text: &str) -> Self {
        Self {
            chars: text.chars().collect(),
            pos: 0,
            nested: Vec::new(),
            arith_texts: Vec::new(),
            params: Vec::new(),
            pending: Vec::new(),
            depth: 0,
        }
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        let found = self.peek(0) == Some(c);
        if found {
            self.pos += 1;
        }
        found
    }

    /// Every token of the line.
    pub fn tokens(&mut self) -> Result<Vec<Tok>, Unparsed> {
        let mut out = Vec::new();
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' => self.pos += 1,
                '\\' if self.peek(1) == Some('\n') => self.pos += 2,
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '\n' => {
                    self.pos += 1;
                    self.here_bodies(&mut out)?;
                    out.push(Tok::Sep);
                }
                ';' => {
                    self.pos += 1;
                    if self.eat(';') {
                        self.eat('&');
                        out.push(Tok::CaseEnd);
                    } else if self.eat('&') {
                        out.push(Tok::CaseEnd);
                    } else {
                        out.push(Tok::Sep);
                    }
                }
                '&' if self.peek(1) == Some('>') => {
                    self.pos += 2;
                    self.eat('>');
                    let target = self.target()?;
                    out.push(redirect(RedirectKind::File, false, target));
                }
                '&' => {
                    self.pos += 1;
                    out.push(if self.eat('&') { Tok::AndOr } else { Tok::Sep });
                }
                '|' => {
                    self.pos += 1;
                    if self.eat('|') {
                        out.push(Tok::AndOr);
                    } else {
                        self.eat('&');
                        out.push(Tok::Pipe);
                    }
                }
                '(' if self.peek(1) == Some('(') && self.arithmetic()? => {}
                '(' => {
                    self.pos += 1;
                    out.push(Tok::Open);
                }
                ')' => {
                    self.pos += 1;
                    out.push(Tok::Close);
                }
                '<' | '>' if self.peek(1) == Some('(') => {
                    let word = self.word()?;
                    out.push(Tok::Word(word));
                }
                '<' | '>' => self.redirection(None, &mut out)?,
                _ => {
                    let word = self.word()?;
                    // `2>file`: a descriptor number glued to a redirection.
                    if matches!(self.peek(0), Some('<' | '>'))
                        && self.peek(1) != Some('(')
                        && !word.text.is_empty()
                        && word.raw.chars().all(|c| c.is_ascii_digit())
                    {
                        self.redirection(word.text.parse().ok(), &mut out)?;
                    } else {
                        out.push(Tok::Word(word));
                    }
                }
            }
        }
        self.here_bodies(&mut out)?;
        Ok(out)
    }

    /// A redirection at `<` or `>` (for descriptor `fd` when given).
    fn redirection(&mut self, fd: Option<u32>, out: &mut Vec<Tok>) -> Result<(), Unparsed> {
        let input = self.peek(0) == Some('<');
        self.pos += 1;
        let stdin = input && fd.is_none_or(|fd| fd == 0);
        if input && self.eat('<') {
            if self.eat('<') {
                let target = self.target()?;
                out.push(redirect(RedirectKind::HereString, stdin, target));
                return Ok(());
            }
            let strip_tabs = self.eat('-');
            let delimiter = self.target()?;
            self.pending.push(Pending {
                token: out.len(),
                delimiter: delimiter.text,
                strip_tabs,
                quoted: delimiter.quoted,
            });
            out.push(redirect(RedirectKind::HereDoc, stdin, Word::default()));
            return Ok(());
        }
        if self.eat('&') {
            let target = self.target()?;
            let dup = target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit());
            let kind = if dup {
                RedirectKind::Dup
            } else {
                RedirectKind::File
            };
            out.push(redirect(kind, stdin, target));
            return Ok(());
        }
        // `>>`, `>|`, `<>`.
        let _ = self.eat('>') || self.eat('|');
        let target = self.target()?;
        out.push(redirect(RedirectKind::File, stdin, target));
        Ok(())
    }

    /// The word after a redirection operator.
    fn target(&mut self) -> Result<Word, Unparsed> {
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.pos += 1;
        }
        match self.peek(0) {
            Some(c) if !breaks_word(c) => self.word(),
            Some('<' | '>') if self.peek(1) == Some('(') => self.word(),
            _ => Err(Unparsed("a redirection has no target".into())),
        }
    }

    /// After a newline: the bodies of the here-documents opened on the line.
    fn here_bodies(&mut self, out: &mut [Tok]) -> Result<(), Unparsed> {
        for pending in std::mem::take(&mut self.pending) {
            let mut body = String::new();
            while self.pos < self.chars.len() {
                let end = self.chars[self.pos..]
                    .iter()
                    .position(|&c| c == '\n')
                    .map_or(self.chars.len(), |n| self.pos + n);
                let line: String = self.chars[self.pos..end].iter().collect();
                self.pos = (end + 1).min(self.chars.len());
                let line = if pending.strip_tabs {
                    line.trim_start_matches('\t').to_string()
                } else {
                    line
                };
                if line == pending.delimiter {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            let expanded = !pending.quoted && self.scan(&body)?;
            if let Some(Tok::Redirect(r)) = out.get_mut(pending.token) {
                r.target = Word {
                    text: body,
                    expanded,
                    quoted: pending.quoted,
                    ..Word::default()
                };
            }
        }
        Ok(())
    }

    /// `((…))` at the position: arithmetic (its substitutions kept), or two
    /// subshells when the parentheses do not close as `))`.
    fn arithmetic(&mut self) -> Result<bool, Unparsed> {
        let start = self.pos;
        self.pos += 2;
        let inner = self.until_close('(', ')');
        match inner {
            Ok(inner) if self.eat(')') => {
                self.scan(&inner)?;
                self.arith_texts.push(inner);
                Ok(true)
            }
            _ => {
                self.pos = start;
                Ok(false)
            }
        }
    }

    /// Keeps the substitutions in `text` (a here-document body, an
    /// arithmetic expression, a parameter's word); whether it has any
    /// expansion.
    fn scan(&mut self, text: &str) -> Result<bool, Unparsed> {
        if self.depth >= MAX_NESTING {
            return Err(Unparsed("expansions nested too deeply".into()));
        }
        let mut inner = Lexer::new(text);
        inner.depth = self.depth + 1;
        let mut expanded = false;
        let mut scratch = Word::default();
        while let Some(c) = inner.peek(0) {
            match c {
                '\\' => inner.pos += 2,
                '$' | '`' => {
                    expanded |= inner.dollar(&mut scratch)?;
                }
                _ => inner.pos += 1,
            }
        }
        self.nested.append(&mut inner.nested);
        self.arith_texts.append(&mut inner.arith_texts);
        self.params.append(&mut inner.params);
        Ok(expanded)
    }
}

fn redirect(kind: RedirectKind, stdin: bool, target: Word) -> Tok {
    Tok::Redirect(Redirect {
        kind,
        stdin,
        target,
    })
}
