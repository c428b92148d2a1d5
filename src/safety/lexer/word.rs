//! The words of a line: quotes removed, `$'…'` decoded, and what a shell
//! would expand in them (parameters, substitutions, globs, braces) marked;
//! the text of substitutions kept for reading as commands.

use super::{Lexer, Unparsed, Word, breaks_word};

impl Lexer {
    /// One word, quotes removed; substitutions inside it are kept for later.
    pub(super) fn word(&mut self) -> Result<Word, Unparsed> {
        let start = self.pos;
        let mut w = Word::default();
        let mut braces = 0usize;
        let mut brace_list = false;
        let mut bracket = false;
        while let Some(c) = self.peek(0) {
            if breaks_word(c) {
                if matches!(c, '<' | '>') && self.peek(1) == Some('(') && w.text.is_empty() {
                    // Process substitution: a command of its own.
                    self.pos += 2;
                    let inner = self.until_close('(', ')')?;
                    self.nested.push(inner);
                    w.mark();
                    w.expanded = true;
                    w.text.push_str(if c == '<' { "<(…)" } else { ">(…)" });
                    continue;
                }
                break;
            }
            match c {
                '\\' => {
                    w.quoted = true;
                    if let Some(next) = self.peek(1) {
                        if next != '\n' {
                            w.text.push(next);
                        }
                        self.pos += 2;
                    } else {
                        self.pos += 1;
                    }
                }
                '\'' => {
                    self.pos += 1;
                    w.quoted = true;
                    loop {
                        match self.peek(0) {
                            None => return Err(Unparsed("a single quote is not closed".into())),
                            Some('\'') => {
                                self.pos += 1;
                                break;
                            }
                            Some(ch) => {
                                w.text.push(ch);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '"' => {
                    self.pos += 1;
                    self.double_quoted(&mut w)?;
                }
                '$' if self.peek(1) == Some('\'') => {
                    self.pos += 2;
                    w.quoted = true;
                    self.ansi_c(&mut w)?;
                }
                '$' if self.peek(1) == Some('"') => {
                    self.pos += 2;
                    self.double_quoted(&mut w)?;
                }
                '$' | '`' => {
                    self.dollar(&mut w)?;
                }
                '*' | '?' => {
                    w.mark();
                    w.glob = true;
                    w.text.push(c);
                    self.pos += 1;
                }
                '[' => {
                    bracket = true;
                    w.text.push(c);
                    self.pos += 1;
                }
                ']' if bracket => {
                    w.mark();
                    w.glob = true;
                    w.text.push(c);
                    self.pos += 1;
                }
                '{' => {
                    braces += 1;
                    w.text.push(c);
                    self.pos += 1;
                }
                ',' if braces > 0 => {
                    brace_list = true;
                    w.text.push(c);
                    self.pos += 1;
                }
                '.' if braces > 0 && self.peek(1) == Some('.') => {
                    brace_list = true;
                    w.text.push_str("..");
                    self.pos += 2;
                }
                '}' if braces > 0 => {
                    braces -= 1;
                    if brace_list {
                        // The lead ends at the first `{`.
                        if w.literal() {
                            w.lead = w.text.find('{').map_or(0, |i| w.text[..i].chars().count());
                        }
                        w.brace = true;
                    }
                    w.text.push(c);
                    self.pos += 1;
                }
                _ => {
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
        w.mark();
        w.raw = self.chars[start..self.pos].iter().collect();
        Ok(w)
    }

    /// The inside of `"…"` (the opening quote read).
    pub(super) fn double_quoted(&mut self, w: &mut Word) -> Result<(), Unparsed> {
        w.quoted = true;
        loop {
            match self.peek(0) {
                None => return Err(Unparsed("a double quote is not closed".into())),
                Some('"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some('\\') => {
                    match self.peek(1) {
                        Some(ch @ ('"' | '\\' | '$' | '`')) => w.text.push(ch),
                        Some('\n') | None => {}
                        Some(ch) => {
                            w.text.push('\\');
                            w.text.push(ch);
                        }
                    }
                    self.pos += 2;
                }
                Some('$' | '`') => {
                    self.dollar(w)?;
                }
                Some(ch) => {
                    w.text.push(ch);
                    self.pos += 1;
                }
            }
        }
    }

    /// At `$` or a backquote: a substitution, a parameter, or a plain `$`;
    /// whether it expands.
    pub(super) fn dollar(&mut self, w: &mut Word) -> Result<bool, Unparsed> {
        if self.peek(0) == Some('`') {
            w.mark();
            self.backticks(w)?;
            w.expanded = true;
            return Ok(true);
        }
        let next = self.peek(1);
        let text = match next {
            Some('(') if self.peek(2) == Some('(') => {
                self.pos += 3;
                let inner = self.until_close('(', ')')?;
                if !self.eat(')') {
                    return Err(Unparsed("a `))` is missing".into()));
                }
                self.scan(&inner)?;
                self.arith_texts.push(inner);
                "$((…))".to_string()
            }
            // The old form of arithmetic, still evaluated by bash.
            Some('[') => {
                self.pos += 2;
                let inner = self.until_close('[', ']')?;
                self.scan(&inner)?;
                self.arith_texts.push(inner);
                "$[…]".to_string()
            }
            Some('(') => {
                self.pos += 2;
                let inner = self.until_close('(', ')')?;
                self.nested.push(inner);
                "$(…)".to_string()
            }
            Some('{') => {
                self.pos += 2;
                let inner = self.until_close('{', '}')?;
                self.scan(&inner)?;
                self.params.push(inner.clone());
                format!("${{{inner}}}")
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                self.pos += 1;
                let mut name = String::from("$");
                while let Some(c) = self
                    .peek(0)
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    name.push(c);
                    self.pos += 1;
                }
                name
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                self.pos += 2;
                format!("${c}")
            }
            _ => {
                // A lone `$` is itself.
                self.pos += 1;
                w.text.push('$');
                return Ok(false);
            }
        };
        w.mark();
        w.expanded = true;
        w.text.push_str(&text);
        Ok(true)
    }

    /// `$'…'` decoded (the `$'` read).
    pub(super) fn ansi_c(&mut self, w: &mut Word) -> Result<(), Unparsed> {
        loop {
            let Some(c) = self.peek(0) else {
                return Err(Unparsed("a `$'` quote is not closed".into()));
            };
            self.pos += 1;
            match c {
                '\'' => return Ok(()),
                '\\' => {
                    let Some(e) = self.peek(0) else {
                        return Err(Unparsed("a `$'` quote is not closed".into()));
                    };
                    self.pos += 1;
                    let simple = match e {
                        'n' => Some('\n'),
                        't' => Some('\t'),
                        'r' => Some('\r'),
                        'a' => Some('\x07'),
                        'b' => Some('\x08'),
                        'e' | 'E' => Some('\x1b'),
                        'f' => Some('\x0c'),
                        'v' => Some('\x0b'),
                        '\\' | '\'' | '"' | '?' => Some(e),
                        _ => None,
                    };
                    if let Some(ch) = simple {
                        w.text.push(ch);
                        continue;
                    }
                    let (radix, max) = match e {
                        'x' => (16, 2),
                        'u' => (16, 4),
                        'U' => (16, 8),
                        '0'..='7' => {
                            self.pos -= 1;
                            (8, 3)
                        }
                        _ => {
                            w.text.push('\\');
                            w.text.push(e);
                            continue;
                        }
                    };
                    let mut digits = String::new();
                    while digits.len() < max
                        && let Some(d) = self.peek(0).filter(|d| d.is_digit(radix))
                    {
                        digits.push(d);
                        self.pos += 1;
                    }
                    match u32::from_str_radix(&digits, radix)
                        .ok()
                        .and_then(char::from_u32)
                    {
                        Some(ch) => w.text.push(ch),
                        None => return Err(Unparsed("a `$'…'` escape cannot be read".into())),
                    }
                }
                c => w.text.push(c),
            }
        }
    }

    pub(super) fn backticks(&mut self, w: &mut Word) -> Result<(), Unparsed> {
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
        w.text.push_str("`…`");
        Ok(())
    }

    /// The text up to the `close` that matches (nesting and quotes
    /// respected); the position ends after it.
    pub(super) fn until_close(&mut self, open: char, close: char) -> Result<String, Unparsed> {
        let start = self.pos;
        let mut level = 0usize;
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some('"') | None, '\\') => self.pos += 1,
                (Some(_), _) => {}
                (None, '\'' | '"' | '`') => quote = Some(c),
                (None, c) if c == open => level += 1,
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
