//! The hockey-stick chart (issue 28): latency against achieved IOPS, each
//! line with its own x values (two curves compared do not reach the same
//! IOPS), latency on a logarithmic axis (the saturated point's latency is
//! often 100x the paced ones', and on a linear axis it flattens them into
//! the floor), each latency bound a flat line and each knee a vertical line
//! at its IOPS, named. Pure: data in, SVG text out.

use plotters::prelude::*;

use crate::report::page::charts::{
    axis, color, compact, draw, drawable, err, header, height, Mark, HEIGHT, LABEL_FONT, LOG_FLOOR, MARGIN, TITLE_H, Y_AREA,
};

/// One line: its legend label and its (achieved IOPS, latency µs) points, left to right.
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// A flat line across the chart at `value` (a latency bound, µs), or a
/// vertical one at `value` (a knee, IOPS); its legend label.
pub struct Rule {
    pub label: String,
    pub value: f64,
}

/// The y axis' label: says that it is logarithmic.
pub const Y_LABEL: &str = "latency (µs, log scale)";

/// The chart: `lines`, then the `bounds` (flat) and the `knees` (vertical), each in its own colour and legend entry.
pub fn chart(title: &str, lines: &[Line], bounds: &[Rule], knees: &[Rule]) -> String {
    let labels: Vec<String> = lines.iter().map(|l| l.label.clone()).chain(bounds.iter().chain(knees).map(|r| r.label.clone())).collect();
    draw((crate::report::page::charts::WIDTH, height(&labels, HEIGHT - TITLE_H)), |root| {
        let plot = header(root, title, &labels, Mark::Line)?;
        plot_on(&plot, lines, bounds, knees)
    })
}

/// The latency axis' ends: a decade under the smallest latency (so it has a
/// labelled tick beneath it) to a quarter above the largest, bounds included.
fn y_range(lines: &[Line], bounds: &[Rule]) -> (f64, f64) {
    let values = || lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)).chain(bounds.iter().map(|b| b.value));
    let positive = || values().filter_map(drawable).filter(|v| *v > 0.0);
    let lo = positive().fold(f64::INFINITY, f64::min);
    let hi = positive().fold(0.0, f64::max);
    let (lo, hi) = if hi > 0.0 { (lo.max(LOG_FLOOR), hi.max(LOG_FLOOR)) } else { (1.0, 10.0) };
    let decade = 10f64.powf(lo.log10().floor());
    let (y_lo, y_hi) = axis((lo / 1.25).min(decade), (hi * 1.25).max(lo * 1.5));
    (y_lo.max(LOG_FLOOR), y_hi)
}

fn plot_on(area: &crate::report::page::charts::Area, lines: &[Line], bounds: &[Rule], knees: &[Rule]) -> Result<(), String> {
    let xs = || lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)).chain(knees.iter().map(|k| k.value)).filter_map(drawable);
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
    for (k, knee) in knees.iter().enumerate() {
        let Some(x) = drawable(knee.value) else { continue };
        let c = color(lines.len() + bounds.len() + k);
        chart.draw_series(std::iter::once(PathElement::new(vec![(x, y_lo), (x, y_hi)], c.stroke_width(2)))).map_err(err)?;
        // Each knee's name a line lower than the one before, so two knees close together stay readable.
        let y = y_hi / 1.15f64.powi(k as i32 + 1);
        chart.draw_series(std::iter::once(Text::new(format!("knee {}", compact(&knee.value)), (x, y), label.clone()))).map_err(err)?;
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

    /// Bounds and knees are drawn and named: each a legend entry, each knee labelled at its IOPS.
    #[test]
    fn bounds_and_knees_are_drawn_and_named() {
        let line = Line { label: "A p99".into(), points: vec![(100.0, 1_000.0), (900.0, 4_000.0), (1_000.0, 40_000.0)] };
        let bound = Rule { label: "bound lat_p99<5ms".into(), value: 5_000.0 };
        let knee = Rule { label: "knee of A".into(), value: 900.0 };
        let svg = chart("t", &[line], &[bound], &[knee]);
        for text in ["A p99", "bound lat_p99&lt;5ms", "knee of A", "knee 900"] {
            assert!(svg.contains(text), "{text} missing: {svg}");
        }
    }
}
