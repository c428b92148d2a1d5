//! Markdown tables: columns aligned, cells wrapped inside their column,
//! a rule under the header. Invariant: no line is wider than the pane; a
//! pane too narrow for one column each shows the rows as plain lines.

use pulldown_cmark::Alignment;
use unicode_width::UnicodeWidthStr;

use super::pieces::{push_piece, trim_end, wrap};
use super::{Piece, PrefixKind, Renderer};

const SEPARATOR: &str = " │ ";
const CROSS: &str = "─┼─";

/// A table being read: its rows of cells (each cell its styled text).
#[derive(Default)]
pub(super) struct Table {
    rows: Vec<Vec<Vec<Piece>>>,
    /// Rows that are the header (drawn above the rule).
    header: usize,
    /// Each column's alignment (`:--`, `--:`, `:-:`), from the delimiter row.
    alignments: Vec<Alignment>,
}

impl Table {
    pub(super) fn aligned(alignments: Vec<Alignment>) -> Self {
        Table {
            alignments,
            ..Table::default()
        }
    }

    pub(super) fn start_row(&mut self) {
        self.rows.push(Vec::new());
    }

    pub(super) fn end_head(&mut self) {
        self.header = self.rows.len();
    }

    pub(super) fn end_cell(&mut self, cell: Vec<Piece>) {
        if self.rows.is_empty() {
            self.rows.push(Vec::new());
        }
        if let Some(row) = self.rows.last_mut() {
            row.push(cell);
        }
    }
}

/// Column widths for `natural` widths in `avail` columns (separators
/// excluded): the widest column gives way first. `None` when even one
/// column each does not fit.
fn widths(natural: &[usize], avail: usize) -> Option<Vec<usize>> {
    if natural.len() > avail {
        return None;
    }
    let mut widths: Vec<usize> = natural.iter().map(|w| (*w).max(1)).collect();
    let mut total: usize = widths.iter().sum();
    while total > avail {
        let (i, _) = widths.iter().enumerate().max_by_key(|(_, w)| **w)?;
        widths[i] -= 1;
        total -= 1;
    }
    Some(widths)
}

fn width_of(cell: &[Piece]) -> usize {
    cell.iter().map(|(t, _)| t.width()).sum()
}

impl Renderer<'_> {
    /// Draws the table that just ended.
    pub(super) fn table(&mut self, table: Table) {
        let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        if columns == 0 {
            return;
        }
        let (_, used) = self.prefix(PrefixKind::Content, None);
        let seps = SEPARATOR.width() * (columns - 1);
        let avail = (self.width - used).saturating_sub(seps);
        let natural: Vec<usize> = (0..columns)
            .map(|c| {
                table
                    .rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(|cell| width_of(cell))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        self.begin_leaf();
        let Some(widths) = widths(&natural, avail) else {
            // Too narrow for columns: each row as one wrapped line.
            for row in table.rows {
                let mut pieces = Vec::new();
                for (i, cell) in row.into_iter().enumerate() {
                    if i > 0 {
                        push_piece(&mut pieces, " | ", self.palette.dim());
                    }
                    pieces.extend(cell);
                }
                self.inline = pieces;
                self.flush();
            }
            self.pending_blank = true;
            return;
        };
        let dim = self.palette.dim();
        for (r, row) in table.rows.iter().enumerate() {
            let cells: Vec<Vec<Vec<Piece>>> = (0..columns)
                .map(|c| match row.get(c) {
                    Some(cell) if !cell.is_empty() => wrap(cell, widths[c]),
                    _ => Vec::new(),
                })
                .collect();
            let height = cells.iter().map(Vec::len).max().unwrap_or(0).max(1);
            for line in 0..height {
                let mut content: Vec<Piece> = Vec::new();
                for (c, cell) in cells.iter().enumerate() {
                    if c > 0 {
                        content.push((SEPARATOR.to_string(), dim));
                    }
                    let part = cell.get(line).cloned().unwrap_or_default();
                    let pad = widths[c].saturating_sub(width_of(&part));
                    let before = match table.alignments.get(c) {
                        Some(Alignment::Right) => pad,
                        Some(Alignment::Center) => pad / 2,
                        _ => 0,
                    };
                    let space = |n: usize| (" ".repeat(n), self.palette.text());
                    if before > 0 {
                        content.push(space(before));
                    }
                    content.extend(part);
                    if pad > before && c + 1 < columns {
                        content.push(space(pad - before));
                    }
                }
                trim_end(&mut content);
                let (prefix, _) = self.prefix(PrefixKind::Content, None);
                self.push_line(prefix, content, PrefixKind::Content);
            }
            if r + 1 == table.header && r + 1 < table.rows.len() {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                let (prefix, _) = self.prefix(PrefixKind::Content, None);
                self.push_line(prefix, vec![(rule.join(CROSS), dim)], PrefixKind::Content);
            }
        }
        self.pending_blank = true;
    }
}

#[cfg(test)]
mod tests {
    use super::widths;

    #[test]
    fn the_widest_column_gives_way_first() {
        assert_eq!(widths(&[3, 10, 4], 20), Some(vec![3, 10, 4]));
        assert_eq!(widths(&[3, 10, 4], 12), Some(vec![3, 5, 4]));
        assert_eq!(widths(&[0, 2], 5), Some(vec![1, 2]));
        assert_eq!(widths(&[5, 5, 5], 2), None);
    }
}
