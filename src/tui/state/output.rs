//! A tool's output as the trace keeps it: bounded in memory (head and a
//! sliding tail). Invariant: no I/O here; once the output outgrows memory,
//! `push` hands back the bytes to append to a spill file, which the app
//! loop writes (an `Effect`), so the complete output is never lost.

use std::path::PathBuf;

/// Bytes of one tool's output kept in memory; beyond it the whole output goes to a file.
pub const OUTPUT_MEMORY_CAP: usize = 256 * 1024;

/// Where the complete output of a large tool call goes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Spill {
    /// Everything is in memory.
    #[default]
    None,
    /// Asked for; `path` once the file exists.
    Active { path: Option<PathBuf> },
    /// The file could not be made or written: only head and tail remain.
    Failed,
}

#[derive(Debug, Default)]
pub struct OutputLog {
    head: String,
    /// The latest output: at most `2 * TAIL` bytes, trimmed to `TAIL` when it
    /// outgrows that (so trimming costs O(1) per byte pushed).
    tail: String,
    total: usize,
    pub spill: Spill,
}

impl OutputLog {
    const HEAD: usize = OUTPUT_MEMORY_CAP / 4;
    /// The tail window after a trim; it grows to twice this before the next,
    /// so head and tail together stay within `OUTPUT_MEMORY_CAP`.
    const TAIL: usize = (OUTPUT_MEMORY_CAP - Self::HEAD) / 2;

    /// Adds `chunk`; returns the bytes to append to the spill file, if the
    /// output is (now) spilling: on the first overflow, all of it so far.
    pub fn push(&mut self, chunk: &str) -> Option<String> {
        self.total += chunk.len();
        match self.spill {
            Spill::None if self.total > OUTPUT_MEMORY_CAP => {
                // Until now memory held all of it (nothing was dropped yet).
                let all = format!("{}{}{chunk}", self.head, self.tail);
                self.spill = Spill::Active { path: None };
                self.keep(chunk);
                Some(all)
            }
            Spill::Active { .. } => {
                self.keep(chunk);
                Some(chunk.to_string())
            }
            Spill::None | Spill::Failed => {
                self.keep(chunk);
                None
            }
        }
    }

    fn keep(&mut self, chunk: &str) {
        let mut rest = chunk;
        if self.head.len() < Self::HEAD {
            let room = Self::HEAD - self.head.len();
            let cut = rest.floor_char_boundary(room);
            self.head.push_str(&rest[..cut]);
            rest = &rest[cut..];
        }
        if rest.len() >= Self::TAIL {
            // A chunk bigger than the window replaces it: copy only its end.
            self.tail.clear();
            rest = &rest[rest.ceil_char_boundary(rest.len() - Self::TAIL)..];
        }
        self.tail.push_str(rest);
        if self.tail.len() > 2 * Self::TAIL {
            let cut = self.tail.ceil_char_boundary(self.tail.len() - Self::TAIL);
            self.tail.drain(..cut);
        }
    }

    /// Adds `line` on a line of its own after what is there.
    pub fn push_line(&mut self, line: &str) -> Option<String> {
        let mut text = String::with_capacity(line.len() + 1);
        if !self.is_empty() && !self.ends_with_newline() {
            text.push('\n');
        }
        text.push_str(line);
        self.push(&text)
    }

    fn ends_with_newline(&self) -> bool {
        if self.tail.is_empty() {
            self.head.ends_with('\n')
        } else {
            self.tail.ends_with('\n')
        }
    }

    pub fn total_bytes(&self) -> usize {
        self.total
    }
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }
    /// Where the complete output lives when it outgrew memory.
    pub fn spill_path(&self) -> Option<&PathBuf> {
        match &self.spill {
            Spill::Active { path } => path.as_ref(),
            _ => None,
        }
    }
    /// Bytes not held in memory.
    pub fn dropped_bytes(&self) -> usize {
        self.total.saturating_sub(self.head.len() + self.tail.len())
    }
    /// The text held in memory, with a marker where bytes were left out.
    pub fn text(&self) -> String {
        let tail = &self.tail;
        let dropped = self.dropped_bytes();
        if dropped == 0 {
            format!("{}{tail}", self.head)
        } else {
            let where_ = match self.spill_path() {
                Some(p) => format!("; full output in {}", p.display()),
                None => String::new(),
            };
            format!(
                "{}\n[… {dropped} bytes not shown{where_} …]\n{tail}",
                self.head
            )
        }
    }
    /// The last `n` non-blank lines held in memory.
    /// The last `n` lines the command itself printed: without the lines
    /// written for the model (`(no output)`, `[exit code: N]`; the cell's
    /// own line says the exit code).
    pub fn command_tail(&self, n: usize) -> Vec<String> {
        let framing = |l: &str| {
            let l = l.trim();
            l == "(no output)" || (l.starts_with("[exit code: ") && l.ends_with(']'))
        };
        let mut lines: Vec<String> = self
            .last_lines(n + 2)
            .into_iter()
            .filter(|l| !framing(l))
            .collect();
        let cut = lines.len().saturating_sub(n);
        lines.split_off(cut)
    }

    pub fn last_lines(&self, n: usize) -> Vec<String> {
        let text = if self.tail.trim().is_empty() {
            &self.head
        } else {
            &self.tail
        };
        let mut lines: Vec<String> = text
            .rsplit('\n')
            .filter(|l| !l.trim().is_empty())
            .take(n)
            .map(str::to_string)
            .collect();
        lines.reverse();
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_log_is_bounded_and_asks_to_spill_everything() {
        let mut log = OutputLog::default();
        let line = "x".repeat(99) + "\n";
        let mut spilled = 0;
        for _ in 0..20_000 {
            spilled += log.push(&line).map_or(0, |s| s.len());
        }
        assert_eq!(log.total_bytes(), 2_000_000);
        assert_eq!(spilled, 2_000_000, "every byte goes to the spill file");
        assert!(log.text().len() < OUTPUT_MEMORY_CAP + 200);
        assert!(log.text().contains("bytes not shown"));
        assert_eq!(log.last_lines(2), vec!["x".repeat(99), "x".repeat(99)]);
        log.spill = Spill::Failed;
        assert_eq!(log.push("more"), None, "a failed spill is not retried");
    }

    #[test]
    fn small_output_stays_whole() {
        let mut log = OutputLog::default();
        assert_eq!(log.push("héllo\nwörld\n"), None);
        assert_eq!(log.text(), "héllo\nwörld\n");
        assert_eq!(log.last_lines(5), vec!["héllo", "wörld"]);
        assert!(log.spill_path().is_none());
    }
}
