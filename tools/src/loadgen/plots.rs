//! `--report FILE.html` or `FILE.svg`: the run as plots, drawn with the
//! `plotters` crate's SVG backend.
//!
//! Four charts: throughput per interval against the target; corrected and
//! service latency p50/p99/p99.9 per interval; the latency spectrum
//! (latency by percentile after warm-up, HdrHistogram's percentile plot:
//! x is `1 / (1 - p)` on a log axis, labelled as percentiles); and a heat
//! map of operations per second per region over time. The HTML page embeds
//! the four SVGs with the summary and region tables; it is well-formed
//! XHTML, so any XML parser reads it. The SVG file stacks the four charts.

use std::fmt;
use std::io::{self, Write};
use std::path::Path;

use plotters::coord::Shift;
use plotters::coord::combinators::LogCoord;
use plotters::coord::ranged1d::AsRangedCoord;
use plotters::prelude::*;

mod comparison;
pub use comparison::{
    ComparisonCharts, RUN_CHART_HEIGHT, RUN_CHART_WIDTH, comparison_charts, comparison_html,
    write_comparison_report,
};

use super::report::{RegionCounters, RegionTimeline, RunSummary, micros, named_target};

/// Size of one chart, pixels.
pub const CHART_WIDTH: u32 = 960;
/// Height of one chart, pixels.
pub const CHART_HEIGHT: u32 = 380;
/// Time columns the heat map draws at most; more timeline columns are
/// summed in adjacent groups (the drawing stays small however long the run).
pub const HEATMAP_MAX_COLUMNS: usize = 240;
/// Region rows the heat map draws at most; more regions are summed in
/// adjacent groups (the row label gives the range of regions).
pub const HEATMAP_MAX_ROWS: usize = 64;
/// Steps of the heat map's colour scale.
pub const HEATMAP_LEGEND_STEPS: usize = 20;
/// Percentiles the spectrum reaches at most (`1 / (1 - p)` up to 10^7,
/// p99.99999).
const SPECTRUM_MAX_X: f64 = 1e7;

/// The report could not be drawn or written.
#[derive(Debug)]
pub struct PlotError(pub String);

impl fmt::Display for PlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PlotError {}

impl From<io::Error> for PlotError {
    fn from(e: io::Error) -> Self {
        PlotError(e.to_string())
    }
}

fn drawing<E: fmt::Debug>(e: E) -> PlotError {
    PlotError(format!("drawing the report: {e:?}"))
}

/// A chart drawn over the ranges `X` and `Y`.
type ChartOver<'a, DB, X, Y> = ChartContext<
    'a,
    DB,
    Cartesian2d<<X as AsRangedCoord>::CoordDescType, <Y as AsRangedCoord>::CoordDescType>,
>;

/// A chart on `area` with the report's margin and label areas, captioned
/// `caption` in a `caption_size` font, over the ranges `x` and `y` (linear,
/// or logarithmic with `.log_scale()`).
fn chart_on<'a, DB: DrawingBackend, X: AsRangedCoord, Y: AsRangedCoord>(
    area: &'a DrawingArea<DB, Shift>,
    caption: &str,
    caption_size: u32,
    x: X,
    y: Y,
) -> Result<ChartOver<'a, DB, X, Y>, PlotError> {
    ChartBuilder::on(area)
        .caption(caption, ("sans-serif", caption_size))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d(x, y)
        .map_err(drawing)
}

/// The axes of a latency spectrum (HdrHistogram's percentile plot): x is
/// `1 / (1 - p)` up to `x_to`, labelled as percentiles, y latency in us from
/// `y_from` to `y_to`, both logarithmic.
type SpectrumAxes = Cartesian2d<LogCoord<f64>, LogCoord<f64>>;

/// A chart with a spectrum's axes and mesh.
fn spectrum_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    caption: &str,
    caption_size: u32,
    x_to: f64,
    (y_from, y_to): (f64, f64),
) -> Result<ChartContext<'a, DB, SpectrumAxes>, PlotError> {
    let mut chart = chart_on(
        area,
        caption,
        caption_size,
        (1f64..x_to).log_scale(),
        (y_from..y_to).log_scale(),
    )?;
    chart
        .configure_mesh()
        .x_desc("percentile (log scale of 1 / (1 - p))")
        .y_desc("latency (us, log scale)")
        .x_label_formatter(&|x| percentile_label(*x))
        .y_label_formatter(&|v| micros(*v))
        .draw()
        .map_err(drawing)?;
    Ok(chart)
}

/// The report's file type, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// An HTML page: the summary, the region table and the four charts.
    Html,
    /// One SVG image with the four charts stacked.
    Svg,
}

impl ReportFormat {
    /// `.html`/`.htm` or `.svg` (any case); anything else is an error that
    /// says what is accepted.
    pub fn of_path(path: &Path) -> Result<ReportFormat, PlotError> {
        let extension = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match extension.as_deref() {
            Some("html" | "htm") => Ok(ReportFormat::Html),
            Some("svg") => Ok(ReportFormat::Svg),
            _ => Err(PlotError(format!(
                "--report {}: the name must end in .html or .svg",
                path.display()
            ))),
        }
    }
}

/// The four charts, each a standalone SVG document.
#[derive(Debug, Clone)]
pub struct Charts {
    /// Achieved and target ops/s per interval.
    pub throughput: String,
    /// Corrected and service p50/p99/p99.9 per interval.
    pub latency: String,
    /// Latency by percentile after warm-up.
    pub spectrum: String,
    /// Operations per second per region over time.
    pub regions: String,
}

/// Draws one chart into an SVG string.
fn svg_of(
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), PlotError>,
) -> Result<String, PlotError> {
    svg_sized((CHART_WIDTH, CHART_HEIGHT), draw)
}

/// Draws one chart of `size` pixels into an SVG string.
fn svg_sized(
    size: (u32, u32),
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), PlotError>,
) -> Result<String, PlotError> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        draw(&root)?;
        root.present().map_err(drawing)?;
    }
    Ok(out)
}

/// Draws the four charts of `summary`.
pub fn charts(summary: &RunSummary) -> Result<Charts, PlotError> {
    Ok(Charts {
        throughput: svg_of(|a| draw_throughput(a, summary))?,
        latency: svg_of(|a| draw_latency(a, summary))?,
        spectrum: svg_of(|a| draw_spectrum(a, summary))?,
        regions: svg_of(|a| draw_regions(a, summary))?,
    })
}

/// Writes the report of `summary` in `format`; `command` (the command line
/// that ran) heads the HTML page.
pub fn write_report<W: Write>(
    summary: &RunSummary,
    format: ReportFormat,
    command: &str,
    out: &mut W,
) -> Result<(), PlotError> {
    match format {
        ReportFormat::Html => {
            let charts = charts(summary)?;
            out.write_all(html(summary, &charts, command).as_bytes())?;
        }
        ReportFormat::Svg => {
            let mut text = String::new();
            {
                let root = SVGBackend::with_string(&mut text, (CHART_WIDTH, 4 * CHART_HEIGHT))
                    .into_drawing_area();
                let parts = root.split_evenly((4, 1));
                if let [a, b, c, d] = parts.as_slice() {
                    draw_throughput(a, summary)?;
                    draw_latency(b, summary)?;
                    draw_spectrum(c, summary)?;
                    draw_regions(d, summary)?;
                }
                root.present().map_err(drawing)?;
            }
            out.write_all(text.as_bytes())?;
        }
    }
    Ok(())
}

/// Seconds the intervals span (at least a millisecond, so axes have width).
fn run_end_s(summary: &RunSummary) -> f64 {
    summary.intervals.last().map_or(0.0, |i| i.t_s).max(0.001)
}

/// Shades `[from, to]` on the time axis of a chart whose y range is
/// `y_from..y_to`.
fn band(from: f64, to: f64, y_from: f64, y_to: f64, colour: RGBAColor) -> Rectangle<(f64, f64)> {
    Rectangle::new([(from, y_from), (to, y_to)], colour.filled())
}

const WARMUP_SHADE: RGBColor = RGBColor(160, 160, 160);
const STALL_SHADE: RGBColor = RGBColor(230, 60, 60);
const CORRECTED: [RGBColor; 3] = [
    RGBColor(253, 141, 60),
    RGBColor(227, 26, 28),
    RGBColor(128, 0, 38),
];
const SERVICE: [RGBColor; 3] = [
    RGBColor(107, 174, 214),
    RGBColor(33, 113, 181),
    RGBColor(8, 48, 107),
];

fn draw_throughput<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    summary: &RunSummary,
) -> Result<(), PlotError> {
    area.fill(&WHITE).map_err(drawing)?;
    let end_s = run_end_s(summary);
    let highest = summary
        .intervals
        .iter()
        .map(|i| i.rate.max(i.target_rate.unwrap_or(0.0)))
        .fold(0.0, f64::max);
    let y_max = (highest * 1.15).max(1.0);
    let mut chart = chart_on(
        area,
        "Throughput per interval",
        20,
        0f64..end_s,
        0f64..y_max,
    )?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("operations per second")
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()
        .map_err(drawing)?;
    shade_phases(&mut chart, summary, 0.0, y_max)?;
    if !summary.closed_loop {
        // A step line: each interval's target over its whole length.
        chart
            .draw_series(LineSeries::new(
                summary.intervals.iter().flat_map(|i| {
                    let target = i.target_rate.unwrap_or(0.0);
                    [(i.t_s - i.length_s, target), (i.t_s, target)]
                }),
                BLACK.stroke_width(1),
            ))
            .map_err(drawing)?
            .label("target ops/s")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
    }
    chart
        .draw_series(LineSeries::new(
            summary.intervals.iter().map(|i| (i.t_s, i.rate)),
            SERVICE[1].stroke_width(2),
        ))
        .map_err(drawing)?
        .label("achieved ops/s")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], SERVICE[1].stroke_width(2)));
    legend(&mut chart)
}

/// Grey bands over the warm-up, red ones over intervals flagged as stalls;
/// each with one legend entry.
fn shade_phases<DB: DrawingBackend, Y: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>,
    summary: &RunSummary,
    y_from: f64,
    y_to: f64,
) -> Result<(), PlotError> {
    let warmup: Vec<_> = summary.intervals.iter().filter(|i| i.warmup).collect();
    if let (Some(first), Some(last)) = (warmup.first(), warmup.last()) {
        chart
            .draw_series([band(
                first.t_s - first.length_s,
                last.t_s,
                y_from,
                y_to,
                WARMUP_SHADE.mix(0.15),
            )])
            .map_err(drawing)?
            .label("warm-up")
            .legend(|(x, y)| {
                Rectangle::new(
                    [(x, y - 5), (x + 20, y + 5)],
                    WARMUP_SHADE.mix(0.3).filled(),
                )
            });
    }
    let stalls: Vec<_> = summary.intervals.iter().filter(|i| i.stall).collect();
    if !stalls.is_empty() {
        chart
            .draw_series(stalls.iter().map(|i| {
                band(
                    i.t_s - i.length_s,
                    i.t_s,
                    y_from,
                    y_to,
                    STALL_SHADE.mix(0.2),
                )
            }))
            .map_err(drawing)?
            .label("stall")
            .legend(|(x, y)| {
                Rectangle::new([(x, y - 5), (x + 20, y + 5)], STALL_SHADE.mix(0.4).filled())
            });
    }
    Ok(())
}

fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
) -> Result<(), PlotError> {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(drawing)
}

/// A log axis's range for values in `lo..=hi` (positive), widened to whole
/// decades.
fn decades(lo: f64, hi: f64) -> (f64, f64) {
    let lo = if lo > 0.0 && lo.is_finite() { lo } else { 1.0 };
    let hi = if hi > lo { hi } else { lo * 10.0 };
    (
        10f64.powf(lo.log10().floor()),
        10f64.powf(hi.log10().ceil()),
    )
}

/// A log axis's range over the positive `values`, in whole decades (one
/// decade when there are none).
fn log_axis(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    decades(lo, hi)
}

/// The end of a spectrum's x axis and its latency axis, for curves through
/// `points`: x to the whole decade past the furthest percentile (at least
/// 90%), y over whole decades.
fn spectrum_axes<'p>(points: impl Iterator<Item = &'p (f64, f64)> + Clone) -> (f64, (f64, f64)) {
    let x_hi = points.clone().map(|p| p.0).fold(10.0, f64::max);
    let (_, x_to) = decades(1.0, x_hi);
    (x_to, log_axis(points.map(|p| p.1)))
}

fn draw_latency<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    summary: &RunSummary,
) -> Result<(), PlotError> {
    area.fill(&WHITE).map_err(drawing)?;
    let end_s = run_end_s(summary);
    let values = summary.intervals.iter().flat_map(|i| {
        [
            i.corrected.p50_us,
            i.corrected.p99_us,
            i.corrected.p999_us,
            i.service.p50_us,
            i.service.p99_us,
            i.service.p999_us,
        ]
    });
    let (y_from, y_to) = log_axis(values);
    let mut chart = chart_on(
        area,
        "Latency per interval: corrected and service p50 / p99 / p99.9",
        20,
        0f64..end_s,
        (y_from..y_to).log_scale(),
    )?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("latency (us, log scale)")
        .y_label_formatter(&|v| micros(*v))
        .draw()
        .map_err(drawing)?;
    shade_phases(&mut chart, summary, y_from, y_to)?;
    type Pick = fn(&super::report::IntervalRecord) -> f64;
    let series: [(&str, Pick, RGBColor); 6] = [
        ("corrected p50", |i| i.corrected.p50_us, CORRECTED[0]),
        ("corrected p99", |i| i.corrected.p99_us, CORRECTED[1]),
        ("corrected p99.9", |i| i.corrected.p999_us, CORRECTED[2]),
        ("service p50", |i| i.service.p50_us, SERVICE[0]),
        ("service p99", |i| i.service.p99_us, SERVICE[1]),
        ("service p99.9", |i| i.service.p999_us, SERVICE[2]),
    ];
    for (name, pick, colour) in series {
        chart
            .draw_series(LineSeries::new(
                summary
                    .intervals
                    .iter()
                    .filter(|i| i.ops > 0)
                    .map(|i| (i.t_s, pick(i).max(y_from))),
                colour.stroke_width(2),
            ))
            .map_err(drawing)?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
    }
    legend(&mut chart)
}

/// `1 / (1 - p)` for the spectrum's x axis, as the percentile it stands for.
fn percentile_label(x: f64) -> String {
    let p = 100.0 * (1.0 - 1.0 / x.max(1.0));
    if p < 1e-9 {
        "0%".to_string()
    } else {
        // As many decimals as the number of nines needs: 90%, 99%, 99.9%.
        let decimals = (x.log10().round() as i32 - 2).max(0) as usize;
        format!("{p:.decimals$}%")
    }
}

/// Points of a histogram's percentile plot: `(1 / (1 - p), latency us)`.
fn spectrum_points(h: &hdrhistogram::Histogram<u64>) -> Vec<(f64, f64)> {
    if h.is_empty() {
        return Vec::new();
    }
    let mut points: Vec<(f64, f64)> = h
        .iter_quantiles(5)
        .filter_map(|v| {
            let q = v.quantile_iterated_to();
            (q < 1.0).then(|| (1.0 / (1.0 - q), v.value_iterated_to() as f64 / 1000.0))
        })
        .filter(|(x, _)| *x <= SPECTRUM_MAX_X)
        .collect();
    // The maximum at the last percentile one operation in the run resolves.
    let last_x = (h.len() as f64).clamp(1.0, SPECTRUM_MAX_X);
    points.push((last_x, h.max() as f64 / 1000.0));
    points
}

fn draw_spectrum<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    summary: &RunSummary,
) -> Result<(), PlotError> {
    area.fill(&WHITE).map_err(drawing)?;
    let corrected = spectrum_points(&summary.corrected_histogram);
    let service = spectrum_points(&summary.service_histogram);
    let (x_to, (y_from, y_to)) = spectrum_axes(corrected.iter().chain(&service));
    let mut chart = spectrum_chart(
        area,
        "Latency by percentile after warm-up (the spectrum)",
        20,
        x_to,
        (y_from, y_to),
    )?;
    for (name, points, colour) in [
        ("corrected", corrected, CORRECTED[1]),
        ("service", service, SERVICE[1]),
    ] {
        chart
            .draw_series(LineSeries::new(
                points.into_iter().map(|(x, y)| (x, y.max(y_from))),
                colour.stroke_width(2),
            ))
            .map_err(drawing)?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
    }
    legend(&mut chart)
}

/// The heat map's cells: rows of regions (grouped when there are more than
/// [`HEATMAP_MAX_ROWS`]) by columns of time (grouped past
/// [`HEATMAP_MAX_COLUMNS`]), each in operations per second.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatMap {
    /// `(first region, last region)` of each row, bottom row first.
    pub rows: Vec<(usize, usize)>,
    /// `(start s, end s)` of each column.
    pub columns: Vec<(f64, f64)>,
    /// `ops_per_s[column][row]`.
    pub ops_per_s: Vec<Vec<f64>>,
}

impl HeatMap {
    /// The cells of a region timeline.
    pub fn of(timeline: &RegionTimeline) -> HeatMap {
        let regions = timeline.regions();
        let per_row = regions.div_ceil(HEATMAP_MAX_ROWS).max(1);
        let rows: Vec<(usize, usize)> = (0..regions)
            .step_by(per_row)
            .map(|first| (first, (first + per_row).min(regions) - 1))
            .collect();
        let per_column = timeline.columns.len().div_ceil(HEATMAP_MAX_COLUMNS).max(1);
        let mut columns = Vec::new();
        let mut ops_per_s = Vec::new();
        for group in timeline.columns.chunks(per_column) {
            let (Some(first), Some(last)) = (group.first(), group.last()) else {
                continue;
            };
            let seconds = (last.end_s - first.start_s).max(1e-9);
            let cells = rows
                .iter()
                .map(|(a, b)| {
                    let ops: u64 = group
                        .iter()
                        .flat_map(|c| c.ops.get(*a..=*b).unwrap_or_default())
                        .sum();
                    ops as f64 / seconds
                })
                .collect();
            columns.push((first.start_s, last.end_s));
            ops_per_s.push(cells);
        }
        HeatMap {
            rows,
            columns,
            ops_per_s,
        }
    }

    /// The hottest cell, ops/s.
    pub fn max(&self) -> f64 {
        self.ops_per_s.iter().flatten().copied().fold(0.0, f64::max)
    }
}

/// White (no load) through yellow and orange to dark red (the hottest cell).
fn heat_colours() -> DerivedColorMap<RGBColor> {
    DerivedColorMap::new(&[
        RGBColor(255, 255, 255),
        RGBColor(255, 237, 160),
        RGBColor(254, 178, 76),
        RGBColor(240, 59, 32),
        RGBColor(128, 0, 38),
    ])
}

/// What the report says in place of the heat map for a target without
/// regions.
fn no_regions(summary: &RunSummary) -> String {
    format!(
        "{} has no regions: operations are not broken down by key range.",
        summary.target
    )
}

fn draw_regions<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    summary: &RunSummary,
) -> Result<(), PlotError> {
    area.fill(&WHITE).map_err(drawing)?;
    if summary.regions.is_empty() {
        area.draw(&Text::new(
            no_regions(summary),
            (24, 40),
            ("sans-serif", 20).into_font(),
        ))
        .map_err(drawing)?;
        return Ok(());
    }
    let map = HeatMap::of(&summary.region_timeline);
    let hottest = map.max();
    let (main, scale) = area.split_horizontally(CHART_WIDTH - 110);
    let end_s = run_end_s(summary);
    let rows = map.rows.len().max(1) as f64;
    let per_row = map.rows.first().map_or(1, |(a, b)| b - a + 1);
    // Row r spans r - 0.5 .. r + 0.5, so that a label at r sits in the
    // middle of its row.
    let mut chart = chart_on(
        &main,
        "Load per region over time (operations per second)",
        20,
        0f64..end_s,
        -0.5f64..rows - 0.5,
    )?;
    let row_label = |y: &f64| -> String {
        if (y - y.round()).abs() > 0.01 || *y < 0.0 {
            return String::new();
        }
        match map.rows.get(y.round() as usize) {
            Some((a, b)) if a == b => format!("#{a}"),
            Some((a, b)) => format!("#{a}-{b}"),
            None => String::new(),
        }
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("time (s)")
        .y_desc(if per_row > 1 {
            format!("region ({per_row} per row)")
        } else {
            "region".to_string()
        })
        .y_labels(map.rows.len().clamp(1, 16) + 1)
        .y_label_formatter(&row_label)
        .draw()
        .map_err(drawing)?;
    let colours = heat_colours();
    chart
        .draw_series(
            map.columns
                .iter()
                .zip(&map.ops_per_s)
                .flat_map(|((from, to), cells)| {
                    let colours = &colours;
                    cells.iter().enumerate().map(move |(row, v)| {
                        let colour = colours.get_color_normalized(*v, 0.0, hottest.max(1e-9));
                        Rectangle::new(
                            [(*from, row as f64 - 0.5), (*to, row as f64 + 0.5)],
                            colour.filled(),
                        )
                    })
                }),
        )
        .map_err(drawing)?;
    // The colour scale: 0 at the bottom, the hottest cell at the top.
    let mut legend = ChartBuilder::on(&scale)
        .caption("ops/s", ("sans-serif", 14))
        .margin_top(24)
        .margin_bottom(52)
        .margin_right(10)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..1f64, 0f64..hottest.max(1.0))
        .map_err(drawing)?;
    legend
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(5)
        .y_label_style(("sans-serif", 12))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()
        .map_err(drawing)?;
    let top = hottest.max(1.0);
    legend
        .draw_series((0..HEATMAP_LEGEND_STEPS).map(|step| {
            let from = top * step as f64 / HEATMAP_LEGEND_STEPS as f64;
            let to = top * (step + 1) as f64 / HEATMAP_LEGEND_STEPS as f64;
            let colour = colours.get_color_normalized((from + to) / 2.0, 0.0, top);
            Rectangle::new([(0.0, from), (1.0, to)], colour.filled())
        }))
        .map_err(drawing)?;
    Ok(())
}

/// Escapes text for HTML (and XML).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// An SVG document without its XML declaration, to sit inside HTML.
fn inline_svg(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(at) => &svg[at..],
        None => svg,
    }
}

/// The start of a report page titled `title` (XHTML, so that an XML parser
/// reads it), through its heading: the tables' style and `style`'s rules.
fn page_head(title: &str, style: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n\
         <meta charset=\"utf-8\"/>\n<title>{title}</title>\n<style>\n\
         body {{ font-family: sans-serif; margin: 1.5em; }}\n\
         table {{ border-collapse: collapse; margin: 0.5em 0 1em; }}\n\
         th, td {{ border: 1px solid #bbb; padding: 2px 8px; text-align: right; }}\n\
         th {{ background: #eee; }}\n\
         {style}</style>\n</head>\n<body>\n<h1>{title}</h1>\n"
    )
}

/// The HTML page: command, summary table, charts and region table.
pub fn html(summary: &RunSummary, charts: &Charts, command: &str) -> String {
    let mut page = page_head(
        "strata-loadgen report",
        "td.key { text-align: left; font-family: monospace; }\n.stall { color: #b00; }\n",
    );
    page.push_str(&format!("<p><code>{}</code></p>\n", escape(command)));
    if let Some(target) = named_target(&summary.target) {
        page.push_str(&format!("<p>Target: {}</p>\n", escape(target)));
    }
    let mode = if summary.closed_loop {
        "closed loop (--rate max): latency is service time; corrected equals service"
    } else {
        "open loop: corrected latency is from each operation's intended start"
    };
    page.push_str(&format!("<h2>Summary</h2>\n<p>{}</p>\n", escape(mode)));
    page.push_str(
        "<table>\n<tr><th>phase</th><th>secs</th><th>target</th><th>achieved</th>\
         <th>errors</th><th>dropped</th><th>c.p50</th><th>c.p99</th><th>c.p99.9</th>\
         <th>c.max</th><th>s.p50</th><th>s.p99</th><th>s.p99.9</th><th>slo</th></tr>\n",
    );
    for p in &summary.phases {
        page.push_str(&format!(
            "<tr><td>{}</td><td>{:.1}</td><td>{}</td><td>{:.0}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            if p.warmup { "warm-up" } else { "measured" },
            p.duration_s,
            p.target_rate.map_or("max".to_string(), |r| format!("{r:.0}")),
            p.achieved_rate,
            p.errors,
            p.dropped,
            micros(p.corrected.p50_us),
            micros(p.corrected.p99_us),
            micros(p.corrected.p999_us),
            micros(p.corrected.max_us),
            micros(p.service.p50_us),
            micros(p.service.p99_us),
            micros(p.service.p999_us),
            match p.met_slo {
                Some(true) => "met",
                Some(false) => "missed",
                None => "-",
            }
        ));
    }
    page.push_str("</table>\n");
    page.push_str(&format!(
        "<p>{} operations in {:.1} s = {:.0} ops/s; {} errors, {} dropped.</p>\n",
        summary.ops, summary.duration_s, summary.achieved_rate, summary.errors, summary.dropped
    ));
    if let Some(r) = summary.highest_rate_meeting_slo {
        page.push_str(&format!(
            "<p>Highest rate meeting the SLO: {r:.0} ops/s.</p>\n"
        ));
    }
    let stalls: Vec<String> = summary
        .intervals
        .iter()
        .filter(|i| i.stall)
        .map(|i| format!("{:.1} s", i.t_s))
        .collect();
    if !stalls.is_empty() {
        page.push_str(&format!(
            "<p class=\"stall\">Stalls in the intervals ending at: {}.</p>\n",
            escape(&stalls.join(", "))
        ));
    }
    if let Some(e) = &summary.first_error {
        page.push_str(&format!("<p>First error: {}</p>\n", escape(e)));
    }
    for (title, svg) in [
        ("Throughput", &charts.throughput),
        ("Latency over time", &charts.latency),
        ("Latency spectrum", &charts.spectrum),
    ] {
        page.push_str(&format!("<h2>{title}</h2>\n<div>\n"));
        page.push_str(inline_svg(svg));
        page.push_str("\n</div>\n");
    }
    if summary.regions.is_empty() {
        page.push_str(&format!(
            "<h2>Load per region</h2>\n<p>{}</p>\n</body>\n</html>\n",
            escape(&no_regions(summary))
        ));
        return page;
    }
    page.push_str("<h2>Load per region</h2>\n<div>\n");
    page.push_str(inline_svg(&charts.regions));
    page.push_str("\n</div>\n");
    page.push_str(&format!(
        "<h2>Regions</h2>\n<p>max/mean imbalance {:.2}; {} split(s) during the run; \
         heat map columns of {} interval(s).</p>\n",
        summary.max_mean_imbalance, summary.splits, summary.region_timeline.intervals_per_column
    ));
    page.push_str(
        "<table>\n<tr><th>#</th><th>start</th><th>end</th><th>ops</th><th>share</th>\
         <th>rows read</th><th>rows written</th><th>flushes</th><th>compactions</th>\
         <th>stall ms</th></tr>\n",
    );
    for r in &summary.regions {
        let [rows_read, rows_written, flushes, compactions, stall_ms] =
            RegionCounters::cells(r.counters);
        page.push_str(&format!(
            "<tr><td>{}</td><td class=\"key\">{}</td><td class=\"key\">{}</td><td>{}</td>\
             <td>{:.1}%</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            r.region,
            escape(&r.start_key),
            escape(&r.end_key),
            r.ops,
            r.share * 100.0,
            rows_read,
            rows_written,
            flushes,
            compactions,
            stall_ms
        ));
    }
    page.push_str("</table>\n</body>\n</html>\n");
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spectrum_axis_reads_as_percentiles() {
        assert_eq!(percentile_label(1.0), "0%");
        assert_eq!(percentile_label(2.0), "50%");
        assert_eq!(percentile_label(10.0), "90%");
        assert_eq!(percentile_label(100.0), "99%");
        assert_eq!(percentile_label(1000.0), "99.9%");
        assert_eq!(percentile_label(100_000.0), "99.999%");
    }

    #[test]
    fn the_report_format_comes_from_the_file_name() {
        assert_eq!(
            ReportFormat::of_path(Path::new("a/run.html")).unwrap(),
            ReportFormat::Html
        );
        assert_eq!(
            ReportFormat::of_path(Path::new("RUN.HTM")).unwrap(),
            ReportFormat::Html
        );
        assert_eq!(
            ReportFormat::of_path(Path::new("run.svg")).unwrap(),
            ReportFormat::Svg
        );
        for bad in ["run.png", "run", "html"] {
            let e = ReportFormat::of_path(Path::new(bad)).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("--report {bad}: the name must end in .html or .svg")
            );
        }
    }

    #[test]
    fn log_axes_cover_whole_decades() {
        assert_eq!(decades(3.0, 420.0), (1.0, 1000.0));
        assert_eq!(decades(0.2, 0.8), (0.1, 1.0));
        // No data: one decade, not an empty or inverted range.
        assert_eq!(decades(f64::INFINITY, 0.0), (1.0, 10.0));
    }

    #[test]
    fn many_regions_and_columns_are_summed_in_groups() {
        // 130 regions (3 per row: 44 rows) over 500 one-second columns (3
        // per drawn column: 167 columns); region r gets r ops a second.
        let mut t = RegionTimeline::new(130, 1 << 20);
        let ops: Vec<u64> = (0..130).collect();
        for i in 0..500 {
            t.push(i as f64, i as f64 + 1.0, &ops);
        }
        let map = HeatMap::of(&t);
        assert_eq!(map.rows.len(), 44);
        assert_eq!(map.rows[0], (0, 2));
        assert_eq!(map.rows[43], (129, 129));
        assert_eq!(map.columns.len(), 167);
        assert_eq!(map.columns[0], (0.0, 3.0));
        assert_eq!(map.columns[166], (498.0, 500.0));
        // Ops per second of a group of rows is the sum of its regions'.
        assert!((map.ops_per_s[0][0] - 3.0).abs() < 1e-9);
        assert!((map.ops_per_s[166][43] - 129.0).abs() < 1e-9);
        assert!((map.max() - (126.0 + 127.0 + 128.0)).abs() < 1e-9);
    }
}
