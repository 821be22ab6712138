//! Charts as SVG text, drawn with plotters' SVG backend: grouped bars (one bar
//! per result in each category, the papers' figures), lines, latency
//! percentiles on a "nines" axis and stacked per-second panels. Pure: data in,
//! SVG out. Every chart has a title, axis labels with units and a legend; the
//! legend sits in its own strip above the plot, so it never covers data.

use plotters::prelude::*;

/// One chart of the report: its anchor, caption and SVG text (what
/// `figures`, `rounds` and `ranks` produce and the HTML page embeds).
pub struct Chart {
    pub id: String,
    pub caption: String,
    pub svg: String,
}

/// One series: a result's label and its values.
pub struct Series {
    pub label: String,
    pub values: Vec<Option<f64>>,
}

/// What a series' values carry besides themselves, one entry per value: the
/// repeats' standard deviation (drawn as an error bar, ± one stdev) and
/// whether the value is missing for a reason (drawn as "missing" where its
/// bar would be, not left blank as if the point did not exist).
#[derive(Clone, Debug, Default)]
pub struct Marks {
    pub stdev: Vec<Option<f64>>,
    pub missing: Vec<bool>,
}

impl Marks {
    fn stdev_at(&self, i: usize) -> Option<f64> {
        self.stdev.get(i).copied().flatten().filter(|s| s.is_finite() && *s > 0.0)
    }
}

/// The largest value with its error bar, for the axis.
fn top_with(series: &[Series], marks: &[Marks]) -> f64 {
    let raised: Vec<Series> = series
        .iter()
        .enumerate()
        .map(|(si, s)| Series {
            label: String::new(),
            values: s
                .values
                .iter()
                .enumerate()
                .map(|(i, v)| v.map(|v| v + marks.get(si).and_then(|m| m.stdev_at(i)).unwrap_or(0.0)))
                .collect(),
        })
        .collect();
    top(&raised)
}

/// Drawing errors become text: a chart that cannot be drawn is left blank
/// rather than failing the report.
pub(super) fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Axis numbers people read at a glance: 3.5M, 120k, 42, 0.25.
pub fn compact(v: &f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 10.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

pub(super) const WIDTH: u32 = 900;
pub(super) const HEIGHT: u32 = 380;

pub(super) fn color(i: usize) -> RGBColor {
    const COLORS: [RGBColor; 10] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
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
pub(super) fn drawable(v: f64) -> Option<f64> {
    if v.is_nan() {
        None
    } else {
        Some(v.clamp(-AXIS_LIMIT, AXIS_LIMIT))
    }
}

/// Axis bounds plotters can always put ticks on: finite, ordered, inside the
/// limit and wide enough. Used for every axis of every chart.
pub(super) fn axis(lo: f64, hi: f64) -> (f64, f64) {
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

pub(super) type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// Height of the title line at the top of every chart.
pub(super) const TITLE_H: u32 = 30;
/// Height of one line of the legend strip.
const LEGEND_ROW_H: u32 = 20;
/// Font size of legend entries and axis tick labels, and of the title, as
/// plotters takes them (its SVG backend writes about 0.8 of the size given:
/// 16 gives 13 px text).
pub(super) const LABEL_FONT: u32 = 16;
const TITLE_FONT: u32 = 22;
/// Width of the y label area, and the margin around the plot.
pub(super) const Y_AREA: u32 = 76;
pub(super) const MARGIN: u32 = 12;

/// Width a text takes in sans-serif at `size` px, estimated on the wide side
/// (the SVG backend cannot measure text; a viewer's font decides).
pub fn text_width(text: &str, size: u32) -> u32 {
    (text.chars().count() as f64 * size as f64 * 0.62).ceil() as u32
}

/// Whether `labels`, one per category, fit side by side under a bar chart
/// without touching (each gets the plot width divided by their number).
pub fn labels_fit(labels: &[String]) -> bool {
    let plot = WIDTH - Y_AREA - 2 * MARGIN;
    let each = plot / labels.len().max(1) as u32;
    labels.iter().all(|l| text_width(l, LABEL_FONT) + 8 <= each)
}

/// How a legend entry is marked: a filled box (bars) or a line (lines).
#[derive(Clone, Copy)]
pub(super) enum Mark {
    Box,
    Line,
}

/// Legend entries laid out left to right, wrapping: (row, x) of each.
fn legend_layout(labels: &[String]) -> (Vec<(u32, u32)>, u32) {
    let mut at = Vec::new();
    let (mut row, mut x) = (0u32, MARGIN);
    for l in labels {
        let w = 22 + text_width(l, LABEL_FONT) + 18;
        if x > MARGIN && x + w > WIDTH - MARGIN {
            row += 1;
            x = MARGIN;
        }
        at.push((row, x));
        x += w;
    }
    let rows = if labels.is_empty() { 0 } else { row + 1 };
    (at, rows)
}

/// Draws the title and the legend in a strip at the top; returns the area
/// below it, for the plot.
pub(super) fn header<'a>(root: &Area<'a>, title: &str, labels: &[String], mark: Mark) -> Result<Area<'a>, String> {
    root.fill(&WHITE).map_err(err)?;
    let (at, rows) = legend_layout(labels);
    let strip = TITLE_H + rows * LEGEND_ROW_H + 4;
    let (top, rest) = root.split_vertically(strip);
    let title_style = ("sans-serif", TITLE_FONT).into_font().color(&BLACK);
    let tx = (WIDTH as i32 - text_width(title, TITLE_FONT) as i32) / 2;
    top.draw(&Text::new(title.to_string(), (tx.max(MARGIN as i32), 8), title_style)).map_err(err)?;
    for (i, (l, (row, x))) in labels.iter().zip(at).enumerate() {
        let c = color(i);
        let y = (TITLE_H + row * LEGEND_ROW_H + LEGEND_ROW_H / 2) as i32;
        let x = x as i32;
        match mark {
            Mark::Box => top.draw(&Rectangle::new([(x, y - 6), (x + 14, y + 6)], c.filled())).map_err(err)?,
            Mark::Line => {
                top.draw(&PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2))).map_err(err)?;
                top.draw(&Circle::new((x + 8, y), 3, c.filled())).map_err(err)?;
            }
        }
        let style = ("sans-serif", LABEL_FONT).into_font().color(&BLACK);
        top.draw(&Text::new(l.clone(), (x + 22, y - LABEL_FONT as i32 / 2 - 1), style)).map_err(err)?;
    }
    Ok(rest)
}

/// The height of a chart with this many legend entries: the plot keeps its
/// height, the legend strip grows.
pub(super) fn height(labels: &[String], plot: u32) -> u32 {
    TITLE_H + legend_layout(labels).1 * LEGEND_ROW_H + 4 + plot
}

pub(super) fn labels_of(series: &[Series]) -> Vec<String> {
    series.iter().map(|s| s.label.clone()).collect()
}

pub(super) fn draw(size: (u32, u32), f: impl FnOnce(&Area) -> Result<(), String>) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        let _ = f(&root);
        let _ = root.present();
    }
    svg
}

/// Grouped bars: `categories` along x, one bar per series in each. Pass
/// labels that fit (`labels_fit`); longer ones would be drawn over each other.
pub fn grouped_bars(title: &str, x_label: &str, y_label: &str, categories: &[String], series: &[Series]) -> String {
    grouped_bars_marked(title, x_label, y_label, categories, series, &[])
}

/// Grouped bars with error bars and "missing" marks (`marks`, one per series; may be empty).
pub fn grouped_bars_marked(title: &str, x_label: &str, y_label: &str, categories: &[String], series: &[Series], marks: &[Marks]) -> String {
    let labels = labels_of(series);
    draw((WIDTH, height(&labels, HEIGHT - TITLE_H)), |root| {
        let plot = header(root, title, &labels, Mark::Box)?;
        draw_bars(&plot, x_label, y_label, categories, series, marks)
    })
}

fn draw_bars(area: &Area, x_label: &str, y_label: &str, categories: &[String], series: &[Series], marks: &[Marks]) -> Result<(), String> {
    let n = categories.len().max(1);
    let y_top = top_with(series, marks);
    let mut chart = ChartBuilder::on(area)
        .margin(MARGIN)
        .x_label_area_size(44)
        .y_label_area_size(Y_AREA)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..y_top)
        .map_err(err)?;
    let cats = categories.to_vec();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_style(("sans-serif", LABEL_FONT))
        .y_label_style(("sans-serif", LABEL_FONT))
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < cats.len() {
                cats[i as usize].clone()
            } else {
                String::new()
            }
        })
        .axis_desc_style(("sans-serif", LABEL_FONT))
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
        chart.draw_series(bars).map_err(err)?;
        let Some(m) = marks.get(si) else { continue };
        for (ci, v) in s.values.iter().enumerate() {
            let mid = ci as f64 - 0.4 + si as f64 * width + width * 0.46;
            match (v.and_then(drawable), m.stdev_at(ci)) {
                (Some(v), Some(sd)) => error_bar(&mut chart, mid, v, sd, (width * 0.2).min(0.08), y_top)?,
                (None, _) if m.missing.get(ci).copied().unwrap_or(false) => {
                    let style = ("sans-serif", 12).into_font().transform(FontTransform::Rotate270).color(&RGBColor(120, 120, 120));
                    chart.plotting_area().draw(&Text::new("missing", (mid - width * 0.15, y_top * 0.02), style)).map_err(err)?;
                }
                _ => {}
            }
        }
    }
    Ok(())
}

type BarChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>>;

/// The ink of error bars: near black, apart from the axes' black.
pub const ERROR_BAR: RGBColor = RGBColor(40, 40, 40);

/// An error bar of ± `sd` around `v` at `x`, with caps `cap` wide either side.
fn error_bar(chart: &mut BarChart, x: f64, v: f64, sd: f64, cap: f64, y_top: f64) -> Result<(), String> {
    let (lo, hi) = ((v - sd).max(0.0), (v + sd).min(y_top));
    let ink = ERROR_BAR.stroke_width(1);
    let lines = [vec![(x, lo), (x, hi)], vec![(x - cap, lo), (x + cap, lo)], vec![(x - cap, hi), (x + cap, hi)]];
    chart.draw_series(lines.into_iter().map(|l| PathElement::new(l, ink))).map_err(err)?;
    Ok(())
}

/// Lines over numeric x values (one line per series; `x[i]` pairs with each
/// series' `values[i]`), a marker on every point.
pub fn lines(title: &str, x_label: &str, y_label: &str, x: &[f64], series: &[Series]) -> String {
    let labels = labels_of(series);
    draw((WIDTH, height(&labels, HEIGHT - TITLE_H)), |root| {
        let plot = header(root, title, &labels, Mark::Line)?;
        draw_lines(&plot, x_label, y_label, x, series)
    })
}

/// Two panels one above the other sharing the x axis (per-second IOPS over
/// per-second p99 latency), one line per series in each, one legend.
pub fn stacked_lines(title: &str, x_label: &str, panels: [(&str, &[Series]); 2], x: &[f64]) -> String {
    let labels = labels_of(panels[0].1);
    draw((WIDTH, height(&labels, 2 * (HEIGHT - TITLE_H) - 60)), |root| {
        let plot = header(root, title, &labels, Mark::Line)?;
        let (upper, lower) = plot.split_vertically(plot.dim_in_pixel().1 / 2);
        for (area, (y_label, series)) in [upper, lower].iter().zip(panels) {
            let chart = lines_chart(area, x_label, y_label, x, series, false, &[])?;
            value_labels(root, &chart, x, x)?;
        }
        Ok(())
    })
}

/// Lines over settings such as queue depths (1, 4, 16, 64) or seconds: the
/// only x labels are the values themselves (thinned so neighbours never
/// touch; every value keeps its marker). With `log`, the x axis is
/// logarithmic (base 2) when the values are positive and span 4x or more, so
/// doublings are evenly spaced.
pub fn lines_at_values(title: &str, x_label: &str, y_label: &str, x: &[f64], series: &[Series], log: bool) -> String {
    lines_at_values_marked(title, x_label, y_label, x, series, log, &[])
}

/// `lines_at_values` with error bars (± the repeats' stdev, `marks` one per series; may be empty).
pub fn lines_at_values_marked(
    title: &str,
    x_label: &str,
    y_label: &str,
    x: &[f64],
    series: &[Series],
    log: bool,
    marks: &[Marks],
) -> String {
    let labels = labels_of(series);
    let pos = positions(x, log);
    draw((WIDTH, height(&labels, HEIGHT - TITLE_H)), |root| {
        let plot = header(root, title, &labels, Mark::Line)?;
        let chart = lines_chart(&plot, x_label, y_label, &pos, series, false, marks)?;
        value_labels(root, &chart, &pos, x)
    })
}

/// Where values sit on the x axis: as they are, or as log2 (see `lines_at_values`).
fn positions(x: &[f64], log: bool) -> Vec<f64> {
    let positive = x.iter().all(|v| v.is_finite() && *v > 0.0);
    let (lo, hi) = x.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
    let log = log && positive && !x.is_empty() && hi / lo >= 4.0;
    x.iter().map(|v| if log { v.log2() } else { *v }).collect()
}

/// The x labels of a chart drawn with `x_ticks` off: each value under its
/// position, skipping any that would touch the one before.
fn value_labels(root: &Area, chart: &LineChart, pos: &[f64], x: &[f64]) -> Result<(), String> {
    let style = ("sans-serif", LABEL_FONT).into_font().color(&BLACK);
    let y0 = chart.y_range().start;
    let mut right_edge = i32::MIN;
    for (p, v) in pos.iter().zip(x) {
        let Some(p) = drawable(*p) else { continue };
        let (px, py) = chart.backend_coord(&(p, y0));
        let text = compact(v);
        let w = text_width(&text, LABEL_FONT) as i32;
        if px - w / 2 > right_edge + 6 {
            root.draw(&Text::new(text, (px - w / 2, py + 6), style.clone())).map_err(err)?;
            right_edge = px + w / 2;
        }
    }
    Ok(())
}

fn draw_lines(area: &Area, x_label: &str, y_label: &str, x: &[f64], series: &[Series]) -> Result<(), String> {
    lines_chart(area, x_label, y_label, x, series, true, &[]).map(|_| ())
}

type LineChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>>;

/// A line chart on `area`; with `x_ticks` false the x axis has no labels of
/// its own (the caller puts them where the values are).
fn lines_chart<'a, 'b>(
    area: &'a Area<'b>,
    x_label: &str,
    y_label: &str,
    x: &[f64],
    series: &[Series],
    x_ticks: bool,
    marks: &[Marks],
) -> Result<LineChart<'a, 'b>, String> {
    let xs: Vec<f64> = x.iter().filter_map(|v| drawable(*v)).collect();
    let x_min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let x_max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (x_min, x_max) = if xs.is_empty() { (0.0, 1.0) } else { axis(x_min, x_max) };
    let y_max = top_with(series, marks);
    let mut chart = ChartBuilder::on(area)
        .margin(MARGIN)
        .x_label_area_size(44)
        .y_label_area_size(Y_AREA)
        .build_cartesian_2d(x_min..x_max, 0f64..y_max)
        .map_err(err)?;
    // At most one tick label per 90 px, so compact numbers never touch.
    chart
        .configure_mesh()
        .x_labels(if x_ticks { ((WIDTH - Y_AREA) / 90) as usize } else { 0 })
        .x_label_style(("sans-serif", LABEL_FONT))
        .y_label_style(("sans-serif", LABEL_FONT))
        .axis_desc_style(("sans-serif", LABEL_FONT))
        .x_desc(x_label)
        .y_desc(y_label)
        .y_label_formatter(&compact)
        .x_label_formatter(&compact)
        .draw()
        .map_err(err)?;
    for (si, s) in series.iter().enumerate() {
        let c = color(si);
        let pts: Vec<(f64, f64)> =
            x.iter().zip(&s.values).filter_map(|(x, v)| Some((drawable(*x)?, drawable((*v)?)?.clamp(0.0, y_max)))).collect();
        chart.draw_series(LineSeries::new(pts.clone(), c.stroke_width(2))).map_err(err)?;
        chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, c.filled()))).map_err(err)?;
        let Some(m) = marks.get(si) else { continue };
        let cap = (x_max - x_min) * 0.006;
        for (i, (x, v)) in x.iter().zip(&s.values).enumerate() {
            if let (Some(x), Some(v), Some(sd)) = (drawable(*x), v.and_then(drawable), m.stdev_at(i)) {
                error_bar(&mut chart, x, v, sd, cap, y_max)?;
            }
        }
    }
    Ok(chart)
}

/// The percentiles of the "nines" axis and their positions on it: a
/// percentile p sits at -log10(1 - p/100), so 90, 99, 99.9 and 99.99 are one
/// step apart and the tail gets the room it needs.
pub const NINES: [(f64, &str); 5] = [(50.0, "50"), (90.0, "90"), (99.0, "99"), (99.9, "99.9"), (99.99, "99.99")];

fn nines_x(p: f64) -> f64 {
    -(1.0 - p / 100.0).log10()
}

/// Latency against percentile on the nines axis, latency on a logarithmic
/// axis: one line per series, whose `values` are the latencies at `NINES`.
pub fn percentile_lines(title: &str, y_label: &str, series: &[Series]) -> String {
    let labels = labels_of(series);
    draw((WIDTH, height(&labels, HEIGHT - TITLE_H)), |root| {
        let plot = header(root, title, &labels, Mark::Line)?;
        draw_percentiles(root, &plot, y_label, series)
    })
}

/// The narrowest latency the log axis shows, µs (a bound keeps log10 finite).
pub(super) const LOG_FLOOR: f64 = 1e-3;

fn draw_percentiles(root: &Area, area: &Area, y_label: &str, series: &[Series]) -> Result<(), String> {
    let positive = || series.iter().flat_map(|s| s.values.iter().flatten()).filter_map(|v| drawable(*v)).filter(|v| *v > 0.0);
    let lo = positive().fold(f64::INFINITY, f64::min);
    let hi = positive().fold(0.0, f64::max);
    let (lo, hi) = if hi > 0.0 { (lo.max(LOG_FLOOR), hi.max(LOG_FLOOR)) } else { (1.0, 10.0) };
    // The axis starts at or below the power of ten under the smallest value,
    // so that value has a labelled tick beneath it (a p50 of 15 µs reads
    // against 10); at least 1.5x between the ends.
    let decade = 10f64.powf(lo.log10().floor());
    let (y_lo, y_hi) = axis((lo / 1.25).min(decade), (hi * 1.25).max(lo * 1.5));
    let y_lo = y_lo.max(LOG_FLOOR);
    let x_max = nines_x(NINES[NINES.len() - 1].0) + 0.15;
    let mut chart = ChartBuilder::on(area)
        .margin(MARGIN)
        .margin_right(MARGIN + 16)
        .x_label_area_size(44)
        .y_label_area_size(Y_AREA)
        .build_cartesian_2d(0f64..x_max, (y_lo..y_hi).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_label_style(("sans-serif", LABEL_FONT))
        .axis_desc_style(("sans-serif", LABEL_FONT))
        .x_desc("percentile (nines axis: 90, 99, 99.9, 99.99 one step apart)")
        .y_desc(y_label)
        .y_label_formatter(&compact)
        .draw()
        .map_err(err)?;
    // The percentile gridlines and their labels, at their nines positions.
    let grid = RGBColor(220, 220, 220);
    let label = ("sans-serif", LABEL_FONT).into_font().color(&BLACK);
    let (_, root_top) = root.get_base_pixel();
    for (p, name) in NINES {
        let x = nines_x(p);
        chart.draw_series(std::iter::once(PathElement::new(vec![(x, y_lo), (x, y_hi)], grid.stroke_width(1)))).map_err(err)?;
        let (px, py) = chart.backend_coord(&(x, y_lo));
        let text = format!("p{name}");
        let w = text_width(&text, LABEL_FONT) as i32;
        root.draw(&Text::new(text, (px - w / 2, py - root_top + 6), label.clone())).map_err(err)?;
    }
    for (si, s) in series.iter().enumerate() {
        let c = color(si);
        let pts: Vec<(f64, f64)> =
            NINES.iter().zip(&s.values).filter_map(|((p, _), v)| Some((nines_x(*p), drawable((*v)?)?.clamp(y_lo, y_hi)))).collect();
        chart.draw_series(LineSeries::new(pts.clone(), c.stroke_width(2))).map_err(err)?;
        chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, c.filled()))).map_err(err)?;
    }
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
                let svg = lines_at_values("t", "x", "y", &x, &series(values), true);
                assert!(svg.contains("<svg"), "{x:?} {values:?}");
                let s = series(values);
                let svg = stacked_lines("t", "x", [("a", &s), ("b", &s)], &x);
                assert!(svg.contains("<svg"), "{x:?} {values:?}");
            }
        }
        for values in [vec![1e308, 1.0, 0.0, -5.0, 2.0], vec![f64::NAN; 5], vec![0.0; 5], vec![5e-324; 5], vec![7.0; 5]] {
            let svg = percentile_lines("t", "y", &series(&values));
            assert!(svg.contains("<svg"), "{values:?}");
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(20), "took {:?}", start.elapsed());
    }

    /// (y of every data marker, y of every legend text) in a chart's SVG.
    fn marker_and_legend_ys(svg: &str, legend: &[String]) -> (Vec<f64>, Vec<f64>) {
        let attr = |tag: &str, name: &str| -> Option<f64> { tag.split(&format!(" {name}=\"")).nth(1)?.split('"').next()?.parse().ok() };
        let circles: Vec<f64> = svg.split("<circle").skip(1).filter_map(|c| attr(c, "cy")).collect();
        let texts: Vec<f64> = svg
            .split("<text")
            .skip(1)
            .filter(|t| legend.iter().any(|l| t.contains(&format!("\n{l}\n"))))
            .filter_map(|t| attr(t, "y"))
            .collect();
        (circles, texts)
    }

    /// The legend sits in its own strip above the plot: with many long labels
    /// it wraps onto more lines and the chart grows, and no data marker is
    /// drawn at the height of a legend entry.
    #[test]
    fn legends_never_cover_data() {
        let labels: Vec<String> = (0..12).map(|i| format!("a long result label number {i} · bs=64k")).collect();
        let many: Vec<Series> =
            labels.iter().enumerate().map(|(i, l)| Series { label: l.clone(), values: vec![Some(1e6 * (i + 1) as f64); 3] }).collect();
        let svg = lines_at_values("t", "x", "y", &[1.0, 4.0, 16.0], &many, true);
        let (circles, texts) = marker_and_legend_ys(&svg, &labels);
        assert_eq!(texts.len(), 12, "every legend entry drawn");
        let legend_bottom = texts.iter().copied().fold(0.0, f64::max) + LABEL_FONT as f64;
        let data: Vec<f64> = circles.iter().copied().filter(|y| *y > legend_bottom).collect();
        // 12 x 3 data markers below the legend; only the legend's own markers in it.
        assert_eq!(data.len(), 36, "markers under the legend: {circles:?} (legend ends at {legend_bottom})");
        assert!(height(&labels, 100) > height(&labels[..2], 100), "the legend strip grows with its entries");
    }

    /// The latency axis reaches the power of ten below the smallest value, so
    /// a p50 of 15 µs reads against a tick at 10.
    #[test]
    fn the_log_axis_reaches_the_decade_below_the_smallest_value() {
        let svg = percentile_lines("t", "y", &series(&[15.0, 18.0, 30.0, 900.0, 40000.0]));
        let labels: Vec<&str> = svg.split("<text").skip(1).filter_map(|t| t.split('>').nth(1)?.split('<').next()).map(str::trim).collect();
        assert!(labels.contains(&"10"), "no tick at 10 µs under a p50 of 15: {labels:?}");
    }

    /// Category labels too long to sit side by side are reported as not
    /// fitting (the report then numbers its categories).
    #[test]
    fn labels_that_would_overlap_do_not_fit() {
        let short: Vec<String> = ["4k", "8k", "16k", "64k"].map(String::from).to_vec();
        assert!(labels_fit(&short));
        let long: Vec<String> = (0..12).map(|i| format!("bs=64k qd={i} read=70 random=100")).collect();
        assert!(!labels_fit(&long));
    }
}
