//! Charts as SVG text, drawn with plotters' SVG backend: grouped bars (one bar
//! per result in each category, the papers' figures) and lines. Pure: data in,
//! SVG out. Every chart has a title, axis labels with units and a legend.

use plotters::prelude::*;

/// One series: a result's label and its values.
pub struct Series {
    pub label: String,
    pub values: Vec<Option<f64>>,
}

/// Drawing errors become text: a chart that cannot be drawn is left blank
/// rather than failing the report.
fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Axis numbers people read at a glance: 3.5M, 120k, 42, 0.25.
fn compact(v: &f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 10.0 || *v == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

const WIDTH: u32 = 900;
const HEIGHT: u32 = 380;

fn color(i: usize) -> RGBColor {
    const COLORS: [RGBColor; 8] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
    ];
    COLORS[i % COLORS.len()]
}

/// The largest magnitude an axis spans. Beyond it (1e308, whose headroom is
/// infinite) plotters' tick generation never ends; no measured figure comes
/// near it, and values past it are drawn at the edge.
const AXIS_LIMIT: f64 = 1e15;
/// The narrowest axis, relative to the magnitude of its ends: in a narrower one
/// (a zero-width range, or 1e15 to 1e15 + 1) a tick step no longer moves a
/// float, and tick generation would loop.
const MIN_RELATIVE_WIDTH: f64 = 1e-6;
/// The narrowest axis in absolute terms (denormals).
const MIN_WIDTH: f64 = 1e-6;

/// A value as drawn: finite and inside the axis limit (None for NaN).
fn drawable(v: f64) -> Option<f64> {
    if v.is_nan() {
        None
    } else {
        Some(v.clamp(-AXIS_LIMIT, AXIS_LIMIT))
    }
}

/// Axis bounds plotters can always put ticks on: finite, ordered, inside the
/// limit and wide enough. Used for every axis of every chart.
fn axis(lo: f64, hi: f64) -> (f64, f64) {
    let (lo, hi) = match (drawable(lo), drawable(hi)) {
        (Some(a), Some(b)) if a <= b => (a, b),
        (Some(a), Some(b)) => (b, a),
        _ => (0.0, 1.0),
    };
    let width = (lo.abs().max(hi.abs()) * MIN_RELATIVE_WIDTH).max(MIN_WIDTH);
    if hi - lo >= width {
        return (lo, hi);
    }
    // Too narrow to draw (one x value, all values equal): a window a tenth of
    // the value wide on each side, so ticks read as numbers near it; a range
    // that starts at 0 keeps starting there.
    if lo == 0.0 {
        return (0.0, 1.0);
    }
    let mid = lo / 2.0 + hi / 2.0;
    let half = (mid.abs() / 10.0).max(width);
    (mid - half, mid + half)
}

fn top(series: &[Series]) -> f64 {
    let m = series.iter().flat_map(|s| s.values.iter().flatten()).filter_map(|v| drawable(*v)).fold(0.0, f64::max);
    let top = if m > 0.0 { m * 1.12 } else { 1.0 };
    axis(0.0, top).1
}

/// Grouped bars: `categories` along x, one bar per series in each.
pub fn grouped_bars(title: &str, x_label: &str, y_label: &str, categories: &[String], series: &[Series]) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let _ = draw_bars(&root, title, x_label, y_label, categories, series);
        let _ = root.present();
    }
    svg
}

fn draw_bars(
    root: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    categories: &[String],
    series: &[Series],
) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let n = categories.len().max(1);
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..top(series))
        .map_err(err)?;
    let cats = categories.to_vec();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < cats.len() {
                cats[i as usize].clone()
            } else {
                String::new()
            }
        })
        .x_desc(x_label)
        .y_desc(y_label)
        .y_label_formatter(&compact)
        .draw()
        .map_err(err)?;
    let k = series.len().max(1) as f64;
    let width = 0.8 / k;
    for (si, s) in series.iter().enumerate() {
        let c = color(si);
        let bars = s.values.iter().enumerate().filter_map(|(ci, v)| {
            let v = drawable((*v)?)?.max(0.0);
            let x0 = ci as f64 - 0.4 + si as f64 * width;
            Some(Rectangle::new([(x0, 0.0), (x0 + width * 0.92, v)], c.filled()))
        });
        chart
            .draw_series(bars)
            .map_err(err)?
            .label(s.label.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    Ok(())
}

/// Lines over numeric x values (one line per series; `x[i]` pairs with each series' `values[i]`).
pub fn lines(title: &str, x_label: &str, y_label: &str, x: &[f64], series: &[Series]) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let _ = draw_lines(&root, title, x_label, y_label, x, series);
        let _ = root.present();
    }
    svg
}

fn draw_lines(
    root: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    x: &[f64],
    series: &[Series],
) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let xs: Vec<f64> = x.iter().filter_map(|v| drawable(*v)).collect();
    let x_min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let x_max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (x_min, x_max) = if xs.is_empty() { (0.0, 1.0) } else { axis(x_min, x_max) };
    let y_max = top(series);
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(x_min..x_max, 0f64..y_max)
        .map_err(err)?;
    chart.configure_mesh().x_desc(x_label).y_desc(y_label).y_label_formatter(&compact).x_label_formatter(&compact).draw().map_err(err)?;
    for (si, s) in series.iter().enumerate() {
        let c = color(si);
        let pts: Vec<(f64, f64)> =
            x.iter().zip(&s.values).filter_map(|(x, v)| Some((drawable(*x)?, drawable((*v)?)?.clamp(0.0, y_max)))).collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
            .map_err(err)?
            .label(s.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], c.stroke_width(2)));
        chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, c.filled()))).map_err(err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(values: &[f64]) -> Vec<Series> {
        vec![Series { label: "r".into(), values: values.iter().map(|v| Some(*v)).collect() }]
    }

    /// Extreme values draw within a bound: 1e308 (whose 1.12x headroom is
    /// infinite), NaN and infinities, zero-width and huge x ranges.
    #[test]
    fn axes_are_finite_ordered_and_wide_enough() {
        assert_eq!(axis(0.0, 10.0), (0.0, 10.0));
        assert_eq!(axis(10.0, 0.0), (0.0, 10.0));
        assert_eq!(axis(0.0, 0.0), (0.0, 1.0));
        assert_eq!(axis(32.0, 32.0), (28.8, 35.2));
        assert_eq!(axis(f64::NAN, 1.0), (0.0, 1.0));
        assert_eq!(axis(0.0, f64::INFINITY), (0.0, AXIS_LIMIT));
        let (lo, hi) = axis(1e15, 1e15 + 1.0);
        assert!(hi - lo >= 1e15 * MIN_RELATIVE_WIDTH && lo.is_finite() && hi <= 1.2e15, "{lo} {hi}");
        assert_eq!(top(&series(&[1e308])), AXIS_LIMIT);
    }

    #[test]
    fn extreme_values_draw_in_bounded_time() {
        let cats: Vec<String> = (0..3).map(|i| i.to_string()).collect();
        let start = std::time::Instant::now();
        let cases: Vec<Vec<f64>> = vec![
            vec![1e308, 1.0, 0.0],
            vec![f64::MAX, f64::MAX, f64::MAX],
            vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY],
            vec![-1e308, 5.0, 1e-308],
            vec![1e15, 1e15 + 1.0, 1e15],
            vec![5e-324, 5e-324, 5e-324],
        ];
        for values in &cases {
            let svg = grouped_bars("t", "x", "y", &cats, &series(values));
            assert!(svg.contains("<svg"), "{values:?}");
            for x in [
                vec![0.0, 1.0, 2.0],
                vec![-1e308, 0.0, 1e308],
                vec![7.0, 7.0, 7.0],
                vec![f64::NAN, 1.0, f64::INFINITY],
                vec![1e15, 1e15 + 0.5, 1e15 + 1.0],
            ] {
                let svg = lines("t", "x", "y", &x, &series(values));
                assert!(svg.contains("<svg"), "{x:?} {values:?}");
            }
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(20), "took {:?}", start.elapsed());
    }
}
