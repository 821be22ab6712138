//! The hockey-stick chart (issue 28): latency against achieved IOPS, each
//! line with its own x values (two curves compared do not reach the same
//! IOPS), latency on a logarithmic axis (the saturated point's latency is
//! often 100x the paced ones', and on a linear axis it flattens them into
//! the floor), each latency bound a flat line and each knee a vertical line
//! at its IOPS, named. Pure: data in, SVG text out.

use plotters::prelude::*;

use crate::report::page::charts::{
    axis, color, compact, draw, drawable, err, header, height, text_width, Mark, HEIGHT, LABEL_FONT, LOG_FLOOR, MARGIN, TITLE_H, Y_AREA,
};

/// One line: its legend label and its (achieved IOPS, latency µs) points, left to right.
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// A flat line across the chart at `value` (a latency bound, µs); its legend label.
pub struct Rule {
    pub label: String,
    pub value: f64,
}

/// A knee: a vertical line at `iops`, its legend label, and whose it is
/// (written beside the line as "NAME knee IOPS"; None on a chart of one result).
pub struct Knee {
    pub label: String,
    pub name: Option<String>,
    pub iops: f64,
}

/// The y axis' label: says that it is logarithmic.
pub const Y_LABEL: &str = "latency (µs, log scale)";

/// The chart: `lines`, then the `bounds` (flat) and the `knees` (vertical), each in its own colour and legend entry.
pub fn chart(title: &str, lines: &[Line], bounds: &[Rule], knees: &[Knee]) -> String {
    let labels: Vec<String> =
        lines.iter().map(|l| &l.label).chain(bounds.iter().map(|b| &b.label)).chain(knees.iter().map(|k| &k.label)).cloned().collect();
    draw((crate::report::page::charts::WIDTH, height(&labels, HEIGHT - TITLE_H)), |root| {
        let plot = header(root, title, &labels, Mark::Line)?;
        plot_on(&plot, lines, bounds, knees)
    })
}

/// The latency axis' ends: a decade under the smallest latency (so it has a
/// labelled tick beneath it) to a quarter above the largest, bounds included;
/// plotters labels each power of ten between them.
fn y_range(lines: &[Line], bounds: &[Rule]) -> (f64, f64) {
    let values = || lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)).chain(bounds.iter().map(|b| b.value));
    let positive = || values().filter_map(drawable).filter(|v| *v > 0.0);
    let lo = positive().fold(f64::INFINITY, f64::min);
    let hi = positive().fold(0.0, f64::max);
    let (lo, hi) = if hi > 0.0 { (lo.max(LOG_FLOOR), hi.max(LOG_FLOOR)) } else { (1.0, 10.0) };
    let decade = 10f64.powf(lo.log10().floor());
    let (y_lo, y_hi) = axis((lo / 1.25).min(decade), top(hi).max(lo * 1.5));
    (y_lo.max(LOG_FLOOR), y_hi)
}

/// The axis' top for a largest latency of `hi`: a quarter above it, or the
/// power of ten above it when `hi` is more than half a decade past the one
/// below (a search reaching 50 ms had its last labelled tick at 10 ms). A
/// hair over that power: plotters steps from decade to decade by
/// multiplying, and a tick that rounds past the axis' end is not drawn.
fn top(hi: f64) -> f64 {
    let below = 10f64.powf(hi.log10().floor());
    if hi > below * 10f64.sqrt() {
        (below * 10.0 * 1.02).max(hi * 1.25)
    } else {
        hi * 1.25
    }
}

fn plot_on(area: &crate::report::page::charts::Area, lines: &[Line], bounds: &[Rule], knees: &[Knee]) -> Result<(), String> {
    let xs = || lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)).chain(knees.iter().map(|k| k.iops)).filter_map(drawable);
    let x_max = xs().fold(0.0, f64::max);
    let (x_lo, x_hi) = axis(0.0, if x_max > 0.0 { x_max * 1.08 } else { 1.0 });
    let (y_lo, y_hi) = y_range(lines, bounds);
    let mut chart = ChartBuilder::on(area)
        .margin(MARGIN)
        .margin_right(MARGIN + 16)
        .x_label_area_size(44)
        .y_label_area_size(Y_AREA)
        .build_cartesian_2d(x_lo..x_hi, (y_lo..y_hi).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_labels(8)
        .x_label_style(("sans-serif", LABEL_FONT))
        .y_label_style(("sans-serif", LABEL_FONT))
        .axis_desc_style(("sans-serif", LABEL_FONT))
        .x_desc("achieved IOPS")
        .y_desc(Y_LABEL)
        .x_label_formatter(&compact)
        .y_label_formatter(&compact)
        .draw()
        .map_err(err)?;
    for (i, l) in lines.iter().enumerate() {
        let c = color(i);
        let pts: Vec<(f64, f64)> = l.points.iter().filter_map(|(x, y)| Some((drawable(*x)?, drawable(*y)?.clamp(y_lo, y_hi)))).collect();
        chart.draw_series(LineSeries::new(pts.clone(), c.stroke_width(2))).map_err(err)?;
        chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, c.filled()))).map_err(err)?;
    }
    for (j, b) in bounds.iter().enumerate() {
        let Some(y) = drawable(b.value).map(|v| v.clamp(y_lo, y_hi)) else { continue };
        let c = color(lines.len() + j);
        chart.draw_series(std::iter::once(PathElement::new(vec![(x_lo, y), (x_hi, y)], c.stroke_width(2)))).map_err(err)?;
    }
    let label = ("sans-serif", LABEL_FONT).into_font().color(&BLACK);
    let right_edge = chart.backend_coord(&(x_hi, y_hi)).0;
    for (k, knee) in knees.iter().enumerate() {
        let Some(x) = drawable(knee.iops) else { continue };
        let c = color(lines.len() + bounds.len() + k);
        chart.draw_series(std::iter::once(PathElement::new(vec![(x, y_lo), (x, y_hi)], c.stroke_width(2)))).map_err(err)?;
        let text = match &knee.name {
            Some(name) => format!("{name} knee {}", compact(&knee.iops)),
            None => format!("knee {}", compact(&knee.iops)),
        };
        // Each knee's name a text line below the one before, in pixels (a
        // ratio of the log axis was a few pixels: two knees close together
        // overlapped), and left of its line where it would run off the plot.
        let w = text_width(&text, LABEL_FONT) as i32;
        let dx = if chart.backend_coord(&(x, y_hi)).0 + 4 + w > right_edge { -(w + 4) } else { 4 };
        let dy = 4 + k as i32 * (LABEL_FONT as i32 + 4);
        chart.draw_series(std::iter::once(EmptyElement::at((x, y_hi)) + Text::new(text, (dx, dy), label.clone()))).map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The y of every circle in document order (the legend's first).
    fn circle_ys(svg: &str) -> Vec<f64> {
        svg.split("<circle").skip(1).filter_map(|c| c.split(" cy=\"").nth(1)?.split('"').next()?.parse().ok()).collect()
    }

    /// A saturated point 1,000x the others does not flatten them: on the log
    /// axis 10, 100 and 1,000 µs are a decade apart each, evenly spaced.
    #[test]
    fn one_outlier_does_not_flatten_the_rest() {
        let line = Line { label: "p99".into(), points: vec![(100.0, 10.0), (200.0, 100.0), (300.0, 1_000.0), (400.0, 1_000_000.0)] };
        let svg = chart("t", &[line], &[], &[]);
        let ys = circle_ys(&svg);
        assert_eq!(ys.len(), 5, "the legend's marker and four points: {ys:?}");
        let (a, b, c) = (ys[1] - ys[2], ys[2] - ys[3], ys[3] - ys[4]);
        assert!(a > 30.0 && (a - b).abs() < 2.0, "a decade apart each: {ys:?}");
        assert!((c - 3.0 * a).abs() < 3.0, "1,000 to 1,000,000 is three decades: {ys:?}");
        let texts: Vec<&str> = svg.split("<text").skip(1).filter_map(|t| t.split('>').nth(1)?.split('<').next()).map(str::trim).collect();
        assert!(texts.contains(&Y_LABEL), "the axis says it is logarithmic: {texts:?}");
    }

    /// Every text of the SVG, trimmed.
    fn texts(svg: &str) -> Vec<&str> {
        svg.split("<text").skip(1).filter_map(|t| t.split('>').nth(1)?.split('<').next()).map(str::trim).collect()
    }

    /// The latency axis' ticks (µs) of a line from 900 µs to `top` µs.
    fn latency_ticks(top: f64) -> Vec<String> {
        let line = Line { label: "p99".into(), points: vec![(10.0, 900.0), (20.0, top / 2.0), (30.0, top)] };
        let svg = chart("t", &[line], &[], &[]);
        // The x axis' labels (IOPS, 0 to 32) are under 100, the latency ticks 100 or more; the title and legend are words.
        let tick = |t: &&str| t.ends_with(['k', 'M']) || t.parse::<f64>().is_ok_and(|v| v >= 100.0);
        texts(&svg).into_iter().filter(tick).map(String::from).collect()
    }

    /// A labelled tick at every power of ten of µs up to the top of the data:
    /// latencies reaching 50 ms (whose last tick was 10 ms) get one at 100 ms,
    /// as those reaching 150 ms have, without the axis stretched to 1 s for it.
    #[test]
    fn the_log_axis_has_a_tick_at_every_decade_up_to_the_data() {
        for (top, ticks) in [(50_000.0, ["100", "1000", "10k", "100k"]), (150_000.0, ["100", "1000", "10k", "100k"])] {
            assert_eq!(latency_ticks(top), ticks, "data to {top} µs");
        }
        assert_eq!(latency_ticks(9_000.0), ["100", "1000", "10k"], "9 ms: to 10 ms, a hair above");
        // Within half a decade of 1 ms: a quarter above, not to 10 ms (plotters labels 2000 and 3000 on so short an axis).
        let ticks = latency_ticks(2_500.0);
        assert!(ticks.contains(&"1000".to_string()) && !ticks.contains(&"10k".to_string()), "2.5 ms: {ticks:?}");
    }

    /// Bounds and knees are drawn and named: each a legend entry, each knee labelled at its IOPS.
    #[test]
    fn bounds_and_knees_are_drawn_and_named() {
        let line = Line { label: "A p99".into(), points: vec![(100.0, 1_000.0), (900.0, 4_000.0), (1_000.0, 40_000.0)] };
        let bound = Rule { label: "bound lat_p99<5ms".into(), value: 5_000.0 };
        let knee = Knee { label: "knee of A".into(), name: None, iops: 900.0 };
        let svg = chart("t", &[line], &[bound], &[knee]);
        for text in ["A p99", "bound lat_p99&lt;5ms", "knee of A", "knee 900"] {
            assert!(svg.contains(text), "{text} missing: {svg}");
        }
    }
}
