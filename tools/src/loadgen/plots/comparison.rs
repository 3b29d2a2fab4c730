//! `--report` of a comparison (several engines, or `--repeat`): the engines side by side.
//!
//! Three charts over the steps, one line per engine: corrected latency at the compared
//! percentile by target rate, with the SLO's bound; achieved by target rate; and the
//! latency spectra of every engine at the step every engine held. Then each run's
//! throughput and latency over time, one column per engine and a row per run. The HTML page
//! embeds them with the comparison's tables; the SVG file stacks them.

use std::io::Write;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    CHART_HEIGHT, CHART_WIDTH, PlotError, ReportFormat, chart_on, draw_latency, draw_throughput,
    drawing, escape, inline_svg, legend, log_axis, page_head, spectrum_axes, spectrum_chart,
    spectrum_points, svg_sized,
};
use crate::loadgen::compare::{Comparison, EngineRun};
use crate::loadgen::report::micros;

/// Width of each run's charts in the side-by-side grid, pixels.
pub const RUN_CHART_WIDTH: u32 = 640;
/// Height of each run's charts in the side-by-side grid, pixels.
pub const RUN_CHART_HEIGHT: u32 = 300;

/// Engine colours in comparison order (the first six of Tableau 10).
const ENGINE_COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(214, 39, 40),
    RGBColor(140, 86, 75),
];

fn engine_colour(index: usize) -> RGBColor {
    ENGINE_COLOURS[index % ENGINE_COLOURS.len()]
}

/// The charts of a comparison, each a standalone SVG document.
#[derive(Debug, Clone)]
pub struct ComparisonCharts {
    /// Corrected latency at the compared percentile by target rate (`None` closed loop).
    pub step_latency: Option<String>,
    /// Achieved by target rate (`None` closed loop).
    pub step_throughput: Option<String>,
    /// Every engine's latency by percentile at the compared step.
    pub spectra: String,
    /// Per run (in `runs` order): its throughput and its latency over time.
    pub runs: Vec<(String, String)>,
}

/// Draws the charts of `comparison` and its `runs`.
pub fn comparison_charts(
    comparison: &Comparison,
    runs: &[EngineRun],
) -> Result<ComparisonCharts, PlotError> {
    let size = (CHART_WIDTH, CHART_HEIGHT);
    let small = (RUN_CHART_WIDTH, RUN_CHART_HEIGHT);
    let by_step = !comparison.closed_loop;
    Ok(ComparisonCharts {
        step_latency: by_step
            .then(|| svg_sized(size, |a| draw_step_latency(a, comparison)))
            .transpose()?,
        step_throughput: by_step
            .then(|| svg_sized(size, |a| draw_step_throughput(a, comparison)))
            .transpose()?,
        spectra: svg_sized(size, |a| draw_spectra(a, comparison))?,
        runs: runs
            .iter()
            .map(|run| {
                Ok((
                    svg_sized(small, |a| draw_throughput(a, &run.summary))?,
                    svg_sized(small, |a| draw_latency(a, &run.summary))?,
                ))
            })
            .collect::<Result<_, PlotError>>()?,
    })
}

/// Writes the report of a comparison in `format`; `command` heads the HTML page.
pub fn write_comparison_report<W: Write>(
    comparison: &Comparison,
    runs: &[EngineRun],
    format: ReportFormat,
    command: &str,
    out: &mut W,
) -> Result<(), PlotError> {
    match format {
        ReportFormat::Html => {
            let charts = comparison_charts(comparison, runs)?;
            out.write_all(comparison_html(comparison, runs, &charts, command).as_bytes())?;
        }
        ReportFormat::Svg => out.write_all(comparison_svg(comparison, runs)?.as_bytes())?,
    }
    Ok(())
}

/// The target rates of the steps, and the end of an axis of target rates: 5% past the
/// highest (at least 1, so the axis has width).
fn step_rates(comparison: &Comparison) -> (Vec<f64>, f64) {
    let steps = comparison.engines.first().map_or(0, |e| e.steps.len());
    let rates: Vec<f64> = (0..steps)
        .map(|step| comparison.step_rate(step).unwrap_or(0.0))
        .collect();
    let highest = rates.iter().copied().fold(1.0, f64::max);
    (rates, highest * 1.05)
}

/// One line per engine through `points`, a filled circle where `mark` holds and a hollow
/// one elsewhere, with a legend entry.
fn engine_lines<DB: DrawingBackend, X: Ranged<ValueType = f64>, Y: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    comparison: &Comparison,
    point: impl Fn(&crate::loadgen::compare::EngineStep) -> f64,
    mark: impl Fn(&crate::loadgen::compare::EngineSummary, &crate::loadgen::compare::EngineStep) -> bool,
    floor: f64,
) -> Result<(), PlotError> {
    let (rates, _) = step_rates(comparison);
    for (index, engine) in comparison.engines.iter().enumerate() {
        let colour = engine_colour(index);
        let points: Vec<(f64, f64, bool)> = engine
            .steps
            .iter()
            .zip(&rates)
            .map(|(step, rate)| (*rate, point(step).max(floor), mark(engine, step)))
            .collect();
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|(x, y, _)| (*x, *y)),
                colour.stroke_width(2),
            ))
            .map_err(drawing)?
            .label(engine.engine.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
        chart
            .draw_series(points.iter().map(|(x, y, filled)| {
                let style = if *filled {
                    colour.filled()
                } else {
                    colour.stroke_width(1)
                };
                Circle::new((*x, *y), 4, style)
            }))
            .map_err(drawing)?;
    }
    Ok(())
}

fn draw_step_latency<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    comparison: &Comparison,
) -> Result<(), PlotError> {
    area.fill(&WHITE).map_err(drawing)?;
    let (_, x_to) = step_rates(comparison);
    let (y_from, y_to) = log_axis(
        comparison
            .engines
            .iter()
            .flat_map(|e| e.steps.iter().map(|s| s.corrected_at_percentile_us))
            .chain(comparison.slo_bound_us),
    );
    let caption = match &comparison.slo {
        Some(slo) => format!(
            "Corrected {} by target rate (filled: met {slo} in every run)",
            comparison.percentile_name()
        ),
        None => format!("Corrected {} by target rate", comparison.percentile_name()),
    };
    let mut chart = chart_on(area, &caption, 20, 0f64..x_to, (y_from..y_to).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("target ops/s")
        .y_desc("latency (us, log scale)")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| micros(*v))
        .draw()
        .map_err(drawing)?;
    if let (Some(bound), Some(slo)) = (comparison.slo_bound_us, &comparison.slo) {
        chart
            .draw_series(DashedLineSeries::new(
                [(0.0, bound), (x_to, bound)],
                6,
                4,
                BLACK.stroke_width(1),
            ))
            .map_err(drawing)?
            .label(format!("SLO {slo}"))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
    }
    engine_lines(
        &mut chart,
        comparison,
        |s| s.corrected_at_percentile_us,
        |e, s| s.met_slo_runs == Some(e.runs),
        y_from,
    )?;
    legend(&mut chart)
}

fn draw_step_throughput<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    comparison: &Comparison,
) -> Result<(), PlotError> {
    area.fill(&WHITE).map_err(drawing)?;
    let (_, x_to) = step_rates(comparison);
    let achieved = comparison
        .engines
        .iter()
        .flat_map(|e| e.steps.iter().map(|s| s.achieved_rate))
        .fold(x_to, f64::max);
    let y_to = achieved * 1.1;
    let mut chart = chart_on(
        area,
        "Achieved by target rate (filled: held its rate in every run)",
        20,
        0f64..x_to,
        0f64..y_to,
    )?;
    chart
        .configure_mesh()
        .x_desc("target ops/s")
        .y_desc("achieved ops/s")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()
        .map_err(drawing)?;
    chart
        .draw_series(DashedLineSeries::new(
            [(0.0, 0.0), (x_to, x_to)],
            6,
            4,
            BLACK.stroke_width(1),
        ))
        .map_err(drawing)?
        .label("target")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
    engine_lines(
        &mut chart,
        comparison,
        |s| s.achieved_rate,
        |e, s| s.held_runs == e.runs,
        0.0,
    )?;
    legend(&mut chart)
}

/// An engine's curves in the spectra chart: its position (for its colour), its name, and
/// its corrected and service percentile plots.
type EngineSpectrum<'a> = (usize, &'a str, Vec<(f64, f64)>, Vec<(f64, f64)>);

fn draw_spectra<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    comparison: &Comparison,
) -> Result<(), PlotError> {
    area.fill(&WHITE).map_err(drawing)?;
    let step = comparison.spectrum_step;
    let curves: Vec<EngineSpectrum<'_>> = comparison
        .engines
        .iter()
        .enumerate()
        .filter_map(|(index, e)| {
            let s = e.steps.get(step)?;
            Some((
                index,
                e.engine.as_str(),
                spectrum_points(&s.corrected_histogram),
                spectrum_points(&s.service_histogram),
            ))
        })
        .collect();
    let (x_to, (y_from, y_to)) = spectrum_axes(
        curves
            .iter()
            .flat_map(|(_, _, c, s)| c.iter().chain(s.iter())),
    );
    let caption = format!(
        "Latency by percentile at {} (solid corrected, dashed service)",
        comparison.spectrum_label()
    );
    let mut chart = spectrum_chart(area, &caption, 18, x_to, (y_from, y_to))?;
    for (index, name, corrected, service) in curves {
        let colour = engine_colour(index);
        chart
            .draw_series(LineSeries::new(
                corrected.into_iter().map(|(x, y)| (x, y.max(y_from))),
                colour.stroke_width(2),
            ))
            .map_err(drawing)?
            .label(name.to_owned())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
        chart
            .draw_series(DashedLineSeries::new(
                service.into_iter().map(|(x, y)| (x, y.max(y_from))),
                5,
                4,
                colour.stroke_width(1),
            ))
            .map_err(drawing)?;
    }
    legend(&mut chart)
}

/// The engines in comparison order and the runs, one row per repetition.
fn run_grid<'a>(comparison: &Comparison, runs: &'a [EngineRun]) -> Vec<Vec<Option<&'a EngineRun>>> {
    (1..=comparison.repeat)
        .map(|number| {
            comparison
                .engines
                .iter()
                .map(|e| {
                    runs.iter()
                        .find(|r| r.engine == e.engine && r.run == number)
                })
                .collect()
        })
        .collect()
}

fn comparison_svg(comparison: &Comparison, runs: &[EngineRun]) -> Result<String, PlotError> {
    let columns = comparison.engines.len().max(1);
    let grid = run_grid(comparison, runs);
    let top_charts: u32 = if comparison.closed_loop { 1 } else { 3 };
    let width = CHART_WIDTH.max(columns as u32 * RUN_CHART_WIDTH);
    let top_height = top_charts * CHART_HEIGHT;
    let height = top_height + grid.len() as u32 * 2 * RUN_CHART_HEIGHT;
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        let (top, bottom) = root.split_vertically(top_height);
        let top = top.split_evenly((top_charts as usize, 1));
        let mut top = top.iter();
        if !comparison.closed_loop {
            if let Some(area) = top.next() {
                draw_step_latency(area, comparison)?;
            }
            if let Some(area) = top.next() {
                draw_step_throughput(area, comparison)?;
            }
        }
        if let Some(area) = top.next() {
            draw_spectra(area, comparison)?;
        }
        if !grid.is_empty() {
            let cells = bottom.split_evenly((grid.len() * 2, columns));
            for (row, runs) in grid.iter().enumerate() {
                for (column, run) in runs.iter().enumerate() {
                    let Some(run) = run else { continue };
                    let title = format!("{}, run {}", run.engine, run.run);
                    if let Some(cell) = cells.get(2 * row * columns + column) {
                        let area = cell.titled(&title, ("sans-serif", 16)).map_err(drawing)?;
                        draw_throughput(&area, &run.summary)?;
                    }
                    if let Some(cell) = cells.get((2 * row + 1) * columns + column) {
                        draw_latency(cell, &run.summary)?;
                    }
                }
            }
        }
        root.present().map_err(drawing)?;
    }
    Ok(text)
}

/// The HTML page of a comparison: command, the comparison's tables, the step charts, the
/// spectra, and every run's charts side by side.
pub fn comparison_html(
    comparison: &Comparison,
    runs: &[EngineRun],
    charts: &ComparisonCharts,
    command: &str,
) -> String {
    let mut page = page_head(
        "strata-loadgen comparison",
        "td.engine { text-align: left; }\ntd.run { vertical-align: top; }\n",
    );
    page.push_str(&format!("<p><code>{}</code></p>\n", escape(command)));
    let engines: Vec<&str> = comparison
        .engines
        .iter()
        .map(|e| e.engine.as_str())
        .collect();
    page.push_str(&format!(
        "<p>Engines: {}; {} run(s) each{}{}.</p>\n",
        escape(&engines.join(", ")),
        comparison.repeat,
        if comparison.repeat > 1 {
            ", interleaved; latencies over every run's operations"
        } else {
            ""
        },
        comparison
            .slo
            .as_deref()
            .map(|s| format!("; SLO {}", escape(s)))
            .unwrap_or_default()
    ));
    if comparison.slo.is_some() && !comparison.closed_loop {
        page.push_str(
            "<h2>Highest rate meeting the SLO</h2>\n<table>\n<tr><th>engine</th>\
             <th>ops/s</th><th>each run</th></tr>\n",
        );
        for e in &comparison.engines {
            let rate = |r: Option<f64>| r.map_or("none".to_owned(), |r| format!("{r:.0}"));
            let each: Vec<String> = e
                .highest_rate_meeting_slo_each_run
                .iter()
                .map(|r| rate(*r))
                .collect();
            page.push_str(&format!(
                "<tr><td class=\"engine\">{}</td><td>{}</td><td>{}</td></tr>\n",
                escape(&e.engine),
                rate(e.highest_rate_meeting_slo),
                escape(&each.join(", "))
            ));
        }
        page.push_str("</table>\n");
    }
    if !comparison.closed_loop {
        page.push_str(&format!(
            "<h2>Steps</h2>\n<p>Corrected {} and achieved ops/s; * met the SLO in every run, \
             ! did not hold its rate in every run.</p>\n<table>\n<tr><th>target</th>",
            comparison.percentile_name()
        ));
        for name in &engines {
            page.push_str(&format!("<th>{}</th>", escape(name)));
        }
        page.push_str("</tr>\n");
        let steps = comparison.engines.first().map_or(0, |e| e.steps.len());
        for step in 0..steps {
            page.push_str(&format!(
                "<tr><td>{:.0}</td>",
                comparison.step_rate(step).unwrap_or(0.0)
            ));
            for e in &comparison.engines {
                let cell = e.steps.get(step).map_or("-".to_owned(), |s| {
                    format!(
                        "{} {} ({:.0})",
                        micros(s.corrected_at_percentile_us),
                        e.mark(s),
                        s.achieved_rate
                    )
                });
                page.push_str(&format!("<td>{}</td>", escape(&cell)));
            }
            page.push_str("</tr>\n");
        }
        page.push_str("</table>\n");
    }
    page.push_str(&format!(
        "<h2>At {}</h2>\n<table>\n<tr><th>engine</th><th>achieved</th><th>errors</th>\
         <th>dropped</th><th>c.p50</th><th>c.p99</th><th>c.p99.9</th><th>c.max</th>\
         <th>s.p50</th><th>s.p99</th><th>s.p99.9</th></tr>\n",
        escape(&comparison.spectrum_label())
    ));
    for e in &comparison.engines {
        let Some(s) = e.steps.get(comparison.spectrum_step) else {
            continue;
        };
        page.push_str(&format!(
            "<tr><td class=\"engine\">{}</td>",
            escape(&e.engine)
        ));
        for cell in s.cells() {
            page.push_str(&format!("<td>{cell}</td>"));
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</table>\n");
    for (title, svg) in [
        ("Latency by target rate", charts.step_latency.as_ref()),
        ("Throughput by target rate", charts.step_throughput.as_ref()),
        ("Latency spectra", Some(&charts.spectra)),
    ] {
        let Some(svg) = svg else { continue };
        page.push_str(&format!("<h2>{title}</h2>\n<div>\n"));
        page.push_str(inline_svg(svg));
        page.push_str("\n</div>\n");
    }
    page.push_str(
        "<h2>Each run over time</h2>\n<p>Throughput, then corrected and service latency per \
         interval.</p>\n<table>\n<tr><th>run</th>",
    );
    for name in &engines {
        page.push_str(&format!("<th>{}</th>", escape(name)));
    }
    page.push_str("</tr>\n");
    for (row, cells) in run_grid(comparison, runs).iter().enumerate() {
        page.push_str(&format!("<tr><td class=\"run\">{}</td>", row + 1));
        for run in cells {
            page.push_str("<td class=\"run\">");
            let svgs = run
                .and_then(|run| runs.iter().position(|r| std::ptr::eq(r, run)))
                .and_then(|index| charts.runs.get(index));
            if let Some((throughput, latency)) = svgs {
                page.push_str(inline_svg(throughput));
                page.push_str("<br/>");
                page.push_str(inline_svg(latency));
            }
            page.push_str("</td>");
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</table>\n</body>\n</html>\n");
    page
}
