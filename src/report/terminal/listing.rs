//! What `results list` prints: a table that fits 100 columns, JSON or CSV.
//! The headline figures (IOPS, MB/s, p99) all come from one point of each
//! result: the one with the highest IOPS, named in the table's "best" column.
//! Pure: listings in, text out.

use comfy_table::{presets::UTF8_BORDERS_ONLY, Cell, CellAlignment, ColumnConstraint, ContentArrangement, Table, Width};
use serde_json::json;

use crate::results::store::Listing;

/// The forms `results list` prints.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Default)]
pub enum ListFormat {
    /// A table that fits 100 columns.
    #[default]
    Table,
    /// An array of objects, one per result.
    Json,
    /// One row per result.
    Csv,
}

/// The table's width: it wraps cells (never cuts them) to stay within it.
pub const TABLE_WIDTH: u16 = 100;

pub fn render(runs: &[Listing], format: ListFormat) -> String {
    match format {
        ListFormat::Table => table(runs),
        ListFormat::Json => {
            let mut text = serde_json::to_string_pretty(&runs.iter().map(object).collect::<Vec<_>>()).expect("JSON values serialise");
            text.push('\n');
            text
        }
        ListFormat::Csv => csv(runs),
    }
}

fn when(l: &Listing) -> String {
    l.started_at.chars().take(16).collect::<String>().replace('T', " ")
}

/// The most characters of a text cell the table shows: longer texts end in
/// an ellipsis (json and csv keep them whole). The table wraps what it
/// shows, and its wrapping of an unbroken word is quadratic in the word.
pub const CELL_CHARS: usize = 200;

fn cut(text: &str) -> String {
    match text.char_indices().nth(CELL_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

fn table(runs: &[Listing]) -> String {
    let right = |t: String| Cell::new(t).set_alignment(CellAlignment::Right);
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY).set_header(vec![
        "id",
        "when (UTC)",
        "status",
        "label",
        "profile",
        "targets",
        "pt/pts",
        "IOPS",
        "MB/s",
        "p99 µs",
    ]);
    for r in runs {
        t.add_row(vec![
            Cell::new(&r.id),
            Cell::new(when(r)),
            Cell::new(&r.status),
            Cell::new(cut(r.label.as_deref().unwrap_or_default())),
            Cell::new(cut(r.profile.as_deref().unwrap_or_default())),
            Cell::new(cut(&r.targets)),
            right(if r.points == 0 { "-/0".into() } else { format!("{}/{}", r.headline_point, r.points) }),
            // A result without points measured nothing: no figure, not zeros.
            right(if r.points == 0 { "-".into() } else { format!("{:.0}", r.iops) }),
            right(if r.points == 0 { "-".into() } else { format!("{:.1}", r.mbps) }),
            right(if r.points == 0 { "-".into() } else { format!("{:.1}", r.p99_us) }),
        ]);
    }
    // Ids and figures are never wrapped; the date keeps its line and a status
    // as long as "completed" its word; the texts around them wrap.
    // A lower boundary counts the padding.
    for (i, c) in t.column_iter_mut().enumerate() {
        // The preset's blank column line parts the columns: no padding inside them but at the borders.
        c.set_padding((u16::from(i == 0), u16::from(i == 9)));
        match i {
            0 | 6..=9 => c.set_constraint(ColumnConstraint::ContentWidth),
            1 => c.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(10))),
            2 => c.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(9))),
            _ => c,
        };
    }
    // As wide as its content when that fits; else its texts wrap to fit.
    let mut text = t.to_string();
    if text.lines().any(|l| l.chars().count() > TABLE_WIDTH as usize) {
        t.set_content_arrangement(ContentArrangement::Dynamic).set_width(TABLE_WIDTH);
        text = t.to_string();
    }
    format!("{text}\nIOPS, MB/s and p99 are those of one point: the one with the highest IOPS (the 'pt' of 'pt/pts').\n")
}

fn object(l: &Listing) -> serde_json::Value {
    json!({
        "id": l.id,
        "started_at": l.started_at,
        "status": l.status,
        "label": l.label,
        "profile": l.profile,
        "targets": l.targets.split(", ").filter(|t| !t.is_empty()).collect::<Vec<_>>(),
        "points": l.points,
        "headline": if l.points == 0 { serde_json::Value::Null } else { json!({
            "point": l.headline_point,
            "params": l.headline_params,
            "iops": l.iops,
            "mbps": l.mbps,
            "p99_us": l.p99_us,
        })},
    })
}

fn csv(runs: &[Listing]) -> String {
    let quote = crate::report::escape::csv_field;
    let mut out = String::from("id,started_at,status,label,profile,targets,points,headline_point,headline_params,iops,mbps,p99_us\n");
    for l in runs {
        let fields = [
            l.id.clone(),
            l.started_at.clone(),
            l.status.clone(),
            l.label.clone().unwrap_or_default(),
            l.profile.clone().unwrap_or_default(),
            l.targets.clone(),
            l.points.to_string(),
            if l.points == 0 { String::new() } else { l.headline_point.to_string() },
            l.headline_params.clone(),
            // The fixed precision of the results CSV (rows.rs), not every digit of the float.
            // Empty, as in headline_point, for a result that measured nothing.
            if l.points == 0 { String::new() } else { crate::report::rows::fmt(l.iops) },
            if l.points == 0 { String::new() } else { crate::report::rows::fmt(l.mbps) },
            if l.points == 0 { String::new() } else { crate::report::rows::fmt(l.p99_us) },
        ];
        out += &fields.iter().map(|f| quote(f)).collect::<Vec<_>>().join(",");
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_fits_100_columns_whatever_the_labels() {
        let long = Listing {
            id: "0123456789ab".into(),
            started_at: "2026-11-23T20:10:30.123Z".into(),
            status: "interrupted".into(),
            label: Some("FC 8G port 1 after the firmware update of the second controller, cache on".into()),
            profile: Some("data-warehouse".into()),
            targets: "nbd://192.168.100.200:10809/a-very-long-export-name, iscsi://10.0.0.1/iqn.2026-11.example:lun/1".into(),
            points: 16,
            headline_point: 12,
            headline_params: "qd=32 bs=4k".into(),
            iops: 1_234_567.0,
            mbps: 5_056.3,
            p99_us: 12_345.6,
        };
        let text = render(&[long.clone(), long], ListFormat::Table);
        let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= TABLE_WIDTH as usize, "{widest} columns:\n{text}");
        // Wrapped, not cut: every character of the long cells is still there,
        // in order, in its column (the header's positions mark the columns).
        let lines: Vec<Vec<char>> = text.lines().map(|l| l.chars().collect()).collect();
        let header: String = lines[1].iter().collect();
        let at = |name: &str| header[..header.find(name).unwrap()].chars().count();
        let column = |from: usize, to: usize| -> String {
            lines.iter().flat_map(|l| l.iter().take(to).skip(from)).filter(|c| !c.is_whitespace()).collect()
        };
        assert!(column(at("label"), at("profil")).contains("FC8Gport1afterthefirmwareupdateofthesecondcontroller,cacheon"), "{text}");
        assert!(column(at("target"), at("pt/pts")).contains("iscsi://10.0.0.1/iqn.2026-11.example:lun/1"), "{text}");
        assert!(text.contains("0123456789ab") && text.contains("12/16") && text.contains("1234567"), "{text}");
    }

    #[test]
    fn the_listing_matches_its_snapshots() {
        let done = Listing {
            id: "a1b2c3d4e5f6".into(),
            started_at: "2026-11-23T20:10:30.123Z".into(),
            status: "completed".into(),
            label: Some("fc port 1, \"cache on\"".into()),
            profile: Some("oltp-db".into()),
            targets: "/dev/sdb, nbd://h/x".into(),
            points: 4,
            headline_point: 3,
            headline_params: "qd=8 bs=4k".into(),
            iops: 81234.5,
            mbps: 332.7,
            p99_us: 412.25,
        };
        let empty = Listing {
            id: "0f0f0f0f0f0f".into(),
            status: "failed".into(),
            label: None,
            profile: None,
            targets: "mem:1g".into(),
            points: 0,
            headline_point: 0,
            headline_params: String::new(),
            iops: 0.0,
            mbps: 0.0,
            p99_us: 0.0,
            ..done.clone()
        };
        let runs = [done, empty];
        crate::report::check_golden("listing.txt", &render(&runs, ListFormat::Table));
        crate::report::check_golden("listing.json", &render(&runs, ListFormat::Json));
        crate::report::check_golden("listing.csv", &render(&runs, ListFormat::Csv));
    }

    #[test]
    fn the_csv_listing_gives_figures_to_a_fixed_precision() {
        let run = Listing {
            id: "a1b2c3d4e5f6".into(),
            started_at: "2026-11-23T20:10:30.123Z".into(),
            status: "completed".into(),
            label: None,
            profile: None,
            targets: "mem:64m".into(),
            points: 1,
            headline_point: 1,
            headline_params: "qd=1 bs=4k".into(),
            iops: 2210873.3823503135,
            mbps: 8635.8, // 8635.8 is 8635.799999999999272... as a float
            p99_us: 3.0,
        };
        let csv = render(&[run], ListFormat::Csv);
        let row = csv.lines().nth(1).unwrap();
        assert!(row.ends_with(",2210873.382,8635.800,3"), "{row}");
    }
}
