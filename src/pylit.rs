//! A parser for Python literals (the form some models write a list in):
//! lists, tuples, dicts, strings, numbers, True/False/None. Invariant: it
//! never evaluates anything and never panics, whatever the input; nesting
//! is bounded so deep input is an error, not a stack overflow.

use serde_json::{Map, Number, Value};

/// Deepest nesting of lists/dicts the parser accepts.
pub const MAX_LITERAL_DEPTH: usize = 32;

/// Why a text is no Python literal; every message names the character
/// position (or says the input ended early).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LiteralError {
    #[error("unexpected {found:?} at position {at}, expected {wanted}")]
    Unexpected {
        found: char,
        at: usize,
        wanted: String,
    },
    #[error("input ends early, expected {0}")]
    EndsEarly(String),
    #[error("nesting deeper than {max} levels at position {0}", max = MAX_LITERAL_DEPTH)]
    TooDeep(usize),
    #[error("unusable dict key at position {0}")]
    DictKey(usize),
    #[error("unterminated string starting at position {0}")]
    Unterminated(usize),
    #[error("invalid code point in escape at position {0}")]
    CodePoint(usize),
    #[error("\\N{{…}} escapes are not supported (position {0})")]
    NamedEscape(usize),
    #[error("truncated escape at position {0}")]
    TruncatedEscape(usize),
    #[error("invalid number {text:?} at position {at}")]
    Number { text: String, at: usize },
    #[error(
        "unknown name {word:?} at position {at} (only literals are read: strings, numbers, True, False, None, lists, dicts)"
    )]
    UnknownName { word: String, at: usize },
}

/// Parses a Python literal (lists, tuples, dicts, strings with escapes and
/// prefixes, numbers, True/False/None and their JSON spellings, trailing
/// commas, `#` comments) into JSON. Nothing is evaluated; nesting deeper than
/// [`MAX_LITERAL_DEPTH`] is refused. Errors name the character position.
pub fn parse_python_literal(text: &str) -> Result<Value, LiteralError> {
    let mut p = PyParser {
        chars: text.chars().collect(),
        pos: 0,
        depth: 0,
    };
    let v = p.value()?;
    p.skip_ws();
    match p.peek() {
        None => Ok(v),
        Some(c) => Err(p.unexpected(c, "end of input")),
    }
}

struct PyParser {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
}

impl PyParser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }
    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }
    fn unexpected(&self, c: char, wanted: &str) -> LiteralError {
        LiteralError::Unexpected {
            found: c,
            at: self.pos,
            wanted: wanted.to_string(),
        }
    }
    fn eof(&self, wanted: &str) -> LiteralError {
        LiteralError::EndsEarly(wanted.to_string())
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.pos += 1;
            } else if c == '#' {
                while let Some(c) = self.peek() {
                    if c == '\n' {
                        break;
                    }
                    self.pos += 1;
                }
            } else if c == '\\' && self.peek_at(1) == Some('\n') {
                self.pos += 2;
            } else {
                break;
            }
        }
    }

    fn value(&mut self) -> Result<Value, LiteralError> {
        self.skip_ws();
        let Some(c) = self.peek() else {
            return Err(self.eof("a value"));
        };
        match c {
            '[' => self.sequence(']'),
            '(' => self.sequence(')'),
            '{' => self.dict(),
            '\'' | '"' => self.strings(),
            '0'..='9' | '-' | '+' | '.' => self.number(),
            c if c.is_alphabetic() || c == '_' => {
                if self.string_prefix_len().is_some() {
                    return self.strings();
                }
                self.name()
            }
            other => Err(self.unexpected(other, "a value")),
        }
    }

    fn enter(&mut self) -> Result<(), LiteralError> {
        self.depth += 1;
        if self.depth > MAX_LITERAL_DEPTH {
            return Err(LiteralError::TooDeep(self.pos));
        }
        Ok(())
    }

    /// A list `[…]` or tuple `(…)`; `(x)` without a comma is just `x`.
    fn sequence(&mut self, close: char) -> Result<Value, LiteralError> {
        self.pos += 1;
        self.enter()?;
        let mut items = Vec::new();
        let mut saw_comma = false;
        loop {
            self.skip_ws();
            match self.peek() {
                None => return Err(self.eof(&format!("a value or {close:?}"))),
                Some(c) if c == close => {
                    self.pos += 1;
                    break;
                }
                Some(_) => {}
            }
            items.push(self.value()?);
            self.skip_ws();
            match self.bump() {
                Some(',') => saw_comma = true,
                Some(c) if c == close => break,
                Some(c) => {
                    self.pos -= 1;
                    return Err(self.unexpected(c, &format!("',' or {close:?}")));
                }
                None => return Err(self.eof(&format!("',' or {close:?}"))),
            }
        }
        self.depth -= 1;
        if close == ')' && !saw_comma && items.len() == 1 {
            return Ok(items.pop().unwrap_or(Value::Null));
        }
        Ok(Value::Array(items))
    }

    fn dict(&mut self) -> Result<Value, LiteralError> {
        self.pos += 1;
        self.enter()?;
        let mut map = Map::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None => return Err(self.eof("a key or '}'")),
                Some('}') => {
                    self.pos += 1;
                    break;
                }
                Some(_) => {}
            }
            let key_pos = self.pos;
            let key = match self.value()? {
                Value::String(s) => s,
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => if b { "True" } else { "False" }.to_string(),
                Value::Null => "None".to_string(),
                _ => return Err(LiteralError::DictKey(key_pos)),
            };
            self.skip_ws();
            match self.bump() {
                Some(':') => {}
                Some(c) => {
                    self.pos -= 1;
                    return Err(self.unexpected(c, "':'"));
                }
                None => return Err(self.eof("':'")),
            }
            let value = self.value()?;
            map.insert(key, value);
            self.skip_ws();
            match self.bump() {
                Some(',') => {}
                Some('}') => break,
                Some(c) => {
                    self.pos -= 1;
                    return Err(self.unexpected(c, "',' or '}'"));
                }
                None => return Err(self.eof("',' or '}'")),
            }
        }
        self.depth -= 1;
        Ok(Value::Object(map))
    }

    /// Length of a string prefix (`r`, `u`, `b`, `rb`, `br`, any case) that is
    /// directly followed by a quote, if there is one here.
    fn string_prefix_len(&self) -> Option<usize> {
        let mut n = 0;
        while let Some(c) = self.peek_at(n) {
            match c.to_ascii_lowercase() {
                'r' | 'u' | 'b' if n < 2 => n += 1,
                '\'' | '"' if n > 0 => return Some(n),
                _ => return None,
            }
        }
        None
    }

    /// One string literal or several adjacent ones (`'a' 'b'` is `'ab'`).
    fn strings(&mut self) -> Result<Value, LiteralError> {
        let mut out = self.string()?;
        loop {
            let save = self.pos;
            self.skip_ws();
            let next_is_string = match self.peek() {
                Some('\'' | '"') => true,
                Some(c) if c.is_alphabetic() => self.string_prefix_len().is_some(),
                _ => false,
            };
            if !next_is_string {
                self.pos = save;
                break;
            }
            out.push_str(&self.string()?);
        }
        Ok(Value::String(out))
    }

    fn string(&mut self) -> Result<String, LiteralError> {
        let mut raw = false;
        if let Some(n) = self.string_prefix_len() {
            raw = (0..n).any(|k| matches!(self.peek_at(k), Some('r' | 'R')));
            self.pos += n;
        }
        let start = self.pos;
        let Some(quote) = self.bump() else {
            return Err(self.eof("a string"));
        };
        let triple = self.peek() == Some(quote) && self.peek_at(1) == Some(quote);
        if triple {
            self.pos += 2;
        }
        let mut out = String::new();
        loop {
            let Some(c) = self.bump() else {
                return Err(LiteralError::Unterminated(start));
            };
            if c == quote {
                if !triple {
                    return Ok(out);
                }
                if self.peek() == Some(quote) && self.peek_at(1) == Some(quote) {
                    self.pos += 2;
                    return Ok(out);
                }
                out.push(c);
            } else if c == '\n' && !triple {
                return Err(LiteralError::Unterminated(start));
            } else if c == '\\' {
                if raw {
                    out.push('\\');
                    if let Some(next) = self.bump() {
                        out.push(next);
                    }
                } else {
                    self.escape(&mut out)?;
                }
            } else {
                out.push(c);
            }
        }
    }

    /// Reads the escape after a backslash (non-raw strings).
    fn escape(&mut self, out: &mut String) -> Result<(), LiteralError> {
        let at = self.pos.saturating_sub(1);
        let Some(c) = self.bump() else {
            return Err(self.eof("an escape"));
        };
        match c {
            '\n' => {}
            '\\' | '\'' | '"' => out.push(c),
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '0'..='7' => {
                let mut code = c.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match self.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            code = code * 8 + d;
                            self.pos += 1;
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
            }
            'x' | 'u' | 'U' => {
                let len = match c {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut code = self.hex(len, at)?;
                if (0xD800..0xDC00).contains(&code)
                    && self.peek() == Some('\\')
                    && self.peek_at(1) == Some('u')
                {
                    let save = self.pos;
                    self.pos += 2;
                    match self.hex(4, at) {
                        Ok(low) if (0xDC00..0xE000).contains(&low) => {
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                        }
                        _ => self.pos = save,
                    }
                }
                match char::from_u32(code) {
                    Some(ch) => out.push(ch),
                    None => return Err(LiteralError::CodePoint(at)),
                }
            }
            'N' => {
                return Err(LiteralError::NamedEscape(at));
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
        Ok(())
    }

    fn hex(&mut self, len: usize, at: usize) -> Result<u32, LiteralError> {
        let mut code: u32 = 0;
        for _ in 0..len {
            match self.peek().and_then(|d| d.to_digit(16)) {
                Some(d) => {
                    code = code.saturating_mul(16).saturating_add(d);
                    self.pos += 1;
                }
                None => return Err(LiteralError::TruncatedEscape(at)),
            }
        }
        Ok(code)
    }

    fn number(&mut self) -> Result<Value, LiteralError> {
        let start = self.pos;
        let mut text = String::new();
        if let Some(sign @ ('-' | '+')) = self.peek() {
            text.push(sign);
            self.pos += 1;
            self.skip_ws();
        }
        while let Some(c) = self.peek() {
            let exp_sign = (c == '+' || c == '-')
                && matches!(text.chars().last(), Some('e' | 'E'))
                && !text.to_ascii_lowercase().starts_with("0x")
                && !text.to_ascii_lowercase().starts_with("-0x")
                && !text.to_ascii_lowercase().starts_with("+0x");
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' || exp_sign {
                text.push(c);
                self.pos += 1;
            } else {
                break;
            }
        }
        let bad = || LiteralError::Number {
            text: text.clone(),
            at: start,
        };
        let clean: String = text.chars().filter(|&c| c != '_').collect();
        let (negative, body) = match clean.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, clean.strip_prefix('+').unwrap_or(&clean)),
        };
        let lower = body.to_ascii_lowercase();
        let radix = [("0x", 16), ("0o", 8), ("0b", 2)]
            .iter()
            .find_map(|(p, r)| lower.strip_prefix(p).map(|digits| (digits.to_string(), *r)));
        if let Some((digits, radix)) = radix {
            let n = i64::from_str_radix(&digits, radix).map_err(|_| bad())?;
            return Ok(Value::Number(Number::from(if negative { -n } else { n })));
        }
        if body.is_empty()
            || !body
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit() || c == '.')
        {
            return Err(bad());
        }
        if body.chars().all(|c| c.is_ascii_digit()) {
            if let Ok(n) = clean.parse::<i64>() {
                return Ok(Value::Number(Number::from(n)));
            }
            if let Ok(n) = body.parse::<u64>()
                && !negative
            {
                return Ok(Value::Number(Number::from(n)));
            }
        }
        let f: f64 = body.parse().map_err(|_| bad())?;
        let f = if negative { -f } else { f };
        Number::from_f64(f).map(Value::Number).ok_or_else(bad)
    }

    fn name(&mut self) -> Result<Value, LiteralError> {
        let start = self.pos;
        let mut word = String::new();
        while let Some(c) = self.peek() {
            if c.is_alphanumeric() || c == '_' {
                word.push(c);
                self.pos += 1;
            } else {
                break;
            }
        }
        match word.as_str() {
            "True" | "true" => Ok(Value::Bool(true)),
            "False" | "false" => Ok(Value::Bool(false)),
            "None" | "null" => Ok(Value::Null),
            _ => Err(LiteralError::UnknownName { word, at: start }),
        }
    }
}
