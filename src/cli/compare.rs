//! `lunmark compare A B [C...]`: stored results side by side, the first as baseline.

use anyhow::{bail, Result};
use clap::Args;

use super::exit;
use crate::report::{compare, curve_compare};
use crate::results::model::RunResult;
use crate::results::store::{self, Store};

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Result ids (unique prefixes work); the first is the baseline.
    #[arg(required = true, num_args = 2..)]
    pub ids: Vec<String>,
    /// Output: table, md, csv or json.
    #[arg(long, default_value = "table")]
    pub format: String,
    /// Compare even when the workloads differ (run time and ramp may differ without it: a note says so).
    #[arg(long)]
    pub force: bool,
    /// Compare the run each repeated point reports (its --pick) instead of the
    /// repeats' means; significance still tests the repeats' means.
    #[arg(long)]
    pub pick: bool,
}

/// The results named by `ids`, each once: a result given twice (by its id
/// or by two prefixes of it) would be compared with itself, showing no
/// difference that could be read as "no change".
pub fn load_distinct(store: &Store, ids: &[String]) -> Result<Vec<RunResult>> {
    let results = ids.iter().map(|id| store.load(id)).collect::<Result<Vec<_>>>()?;
    for (i, r) in results.iter().enumerate() {
        if let Some(j) = results[..i].iter().position(|e| e.id == r.id) {
            bail!(
                "'{}' and '{}' are the same result ({}): compared with itself it shows no difference; give each result once",
                ids[j],
                ids[i],
                r.id
            );
        }
    }
    Ok(results)
}

pub fn execute(args: CompareArgs, store_flag: Option<&std::path::Path>) -> Result<i32> {
    let store = Store::open_read_only(&store::default_path(store_flag))?;
    let results = load_distinct(&store, &args.ids)?;
    for r in &results[1..] {
        // Two curves' paced points differ in rate by design (each paced from its own maximum).
        let diff = curve_compare::differences(&results[0], r);
        if !diff.is_empty() && !args.force {
            bail!(
                "the workloads of {} and {} differ, so their figures are not comparable:\n  {}\nadd --force to compare them anyway",
                results[0].id,
                r.id,
                diff.join("\n  ")
            );
        }
    }
    if args.pick && !results.iter().any(|r| r.points.iter().any(|p| p.repeats.is_some())) {
        bail!(
            "--pick compares the run each repeated point picked instead of the repeats' means, and no point of these results was repeated (--repeat N): drop --pick"
        );
    }
    let refs: Vec<_> = results.iter().collect();
    let basis = if args.pick { compare::Basis::Picked } else { compare::Basis::Means };
    let c = compare::compare(&refs, basis);
    let side = curve_compare::side_by_side(&refs);
    // Nothing in common is not a comparison: exit 0 with only "not compared" lines read as one that passed.
    if c.points.is_empty() && side.is_none() {
        bail!(
            "no point is in every result, so nothing was compared (points are matched by their sweep values or phase):\n  {}",
            c.unmatched.join("\n  ")
        );
    }
    let side_text = side.as_ref().map(curve_compare::render).unwrap_or_default();
    let text = match args.format.as_str() {
        "table" => crate::report::escape::terminal(&format!("{}{}", side_text.trim_start(), compare::render_table(&c))),
        "md" => {
            let block: String = side_text.trim_matches('\n').lines().map(|l| format!("    {l}\n")).collect();
            format!("{}{}", if block.is_empty() { String::new() } else { format!("{block}\n") }, compare::render_markdown(&c))
        }
        "csv" => compare::render_csv(&c),
        "json" => with_side_by_side(&c, side.as_ref()),
        other => bail!("unknown format '{other}': choose table, md, csv or json"),
    };
    print!("{text}");
    Ok(exit::OK)
}

/// The comparison as JSON, with the curves or searches side by side under `side_by_side` where the results have them.
fn with_side_by_side(c: &compare::Comparison, side: Option<&curve_compare::SideBySide>) -> String {
    let Some(side) = side else { return compare::render_json(c) };
    let mut v = serde_json::to_value(c).expect("a comparison serialises");
    v["side_by_side"] = serde_json::to_value(side).expect("a side-by-side table serialises");
    serde_json::to_string_pretty(&v).expect("a value serialises") + "\n"
}
