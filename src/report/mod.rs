//! Exporters and renderers: a result (or a view of what a command computed:
//! a dry run's plan, a cache curve, a lab's rows, a verify check, a listing)
//! in, bytes out. They never do I/O; the caller decides where the bytes go.
//! Grouped by audience: `export/` (programs), `page/` (the report a user
//! pastes into a document), `terminal/` (what a command prints); the pieces
//! all three share (rows of figures, a point's view, escaping, numbers,
//! compare and Welch's test) sit here.

pub mod export;
pub mod page;
pub mod terminal;

pub mod cells;
pub mod compare;
pub mod curve_compare;
pub mod curve_text;
pub mod escape;
pub mod human;
pub mod latency_basis;
pub mod point_view;
pub mod rounds_line;
pub mod rows;
pub mod search_text;
pub mod shown;
pub mod tuning_text;
pub mod welch;
pub mod workload_text;

/// A recorded result from tests/golden/, for the exporters' unit tests.
#[cfg(test)]
pub(crate) fn golden_result(name: &str) -> crate::results::model::RunResult {
    let path = format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Compares `got` with the file `name` in tests/golden/ (LUNMARK_BLESS=1
/// rewrites it first, after a deliberate change): the renderers' snapshot tests.
#[cfg(test)]
pub(crate) fn check_golden(name: &str, got: &str) {
    let path = format!("{}/tests/golden/{name}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("LUNMARK_BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{path} missing: run with LUNMARK_BLESS=1"));
    assert_eq!(got, want, "{name} changed; rerun with LUNMARK_BLESS=1 if that was meant");
}

/// Snapshot tests of the exporters: two recorded results in, text out, compared
/// with files in tests/golden/ (LUNMARK_BLESS=1 rewrites them after a deliberate change).
#[cfg(test)]
mod snapshots {
    use crate::results::model::RunResult;

    fn fixture(name: &str) -> RunResult {
        super::golden_result(name)
    }

    use super::check_golden as check;

    #[test]
    fn exporters_match_their_snapshots() {
        let (a, b) = (fixture("result-a.json"), fixture("result-b.json"));
        check("export-a.txt", &super::terminal::table::render(&a));
        check("export-a.csv", &super::rows::csv(&[&a, &b]));
        check("export-a.md", &super::rows::markdown(&[&a, &b]));
        check("export-a.fio.json", &super::export::fio_json::render(&a));
        let c = super::compare::compare(&[&a, &b], super::compare::Basis::Means);
        check("compare.md", &super::compare::render_markdown(&c));
        check("compare.csv", &super::compare::render_csv(&c));
        check("compare.json", &super::compare::render_json(&c));
        let charts = super::page::figures::charts(&[&a, &b]);
        check("chart-iops.svg", &charts.iter().find(|c| c.id == "iops").unwrap().svg);
        // JSON export is the model itself: it round-trips exactly.
        let back: RunResult = serde_json::from_str(&super::export::json::render(&a)).unwrap();
        assert_eq!(back, a);
    }
}
