//! Cells of the terminal tables: how many decimals a figure gets, and its
//! alignment. The summary and the worker tables share them.

use comfy_table::{Cell, CellAlignment};

/// A figure with as many decimals as its size deserves (the summary's and
/// the worker tables' rule).
pub fn num(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A right-aligned cell.
pub fn right(text: String) -> Cell {
    Cell::new(text).set_alignment(CellAlignment::Right)
}
