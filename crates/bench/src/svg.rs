//! A minimal SVG line chart, enough for throughput against pattern count.

use std::fmt::Write;

/// One line of a chart.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// One panel: a title and its lines, sharing the x axis values.
pub struct Panel {
    pub title: String,
    pub series: Vec<Series>,
}

const COLORS: [&str; 8] = [
    "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Panels side by side; x on a log scale labelled with `x_ticks`, y linear from 0.
pub fn line_chart(
    title: &str,
    panels: &[Panel],
    x_ticks: &[(f64, String)],
    x_label: &str,
    y_label: &str,
) -> String {
    let (pw, ph) = (420.0, 300.0);
    let (ml, mr, mt, mb) = (60.0, 20.0, 50.0, 110.0);
    let width = ml + panels.len() as f64 * (pw + mr + 40.0);
    let height = mt + ph + mb;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{}</text>"#,
        width / 2.0,
        esc(title)
    );
    let xmin = x_ticks.first().map(|t| t.0).unwrap_or(1.0).ln();
    let xmax = x_ticks
        .last()
        .map(|t| t.0)
        .unwrap_or(10.0)
        .ln()
        .max(xmin + 1e-9);
    for (k, panel) in panels.iter().enumerate() {
        let x0 = ml + k as f64 * (pw + mr + 40.0);
        let ymax = panel
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .fold(0.0f64, f64::max)
            .max(1e-9)
            * 1.1;
        let px = |x: f64| x0 + (x.ln() - xmin) / (xmax - xmin) * pw;
        let py = |y: f64| mt + ph - y / ymax * ph;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle" font-size="13">{}</text>"#,
            x0 + pw / 2.0,
            mt - 10.0,
            esc(&panel.title)
        );
        let _ = writeln!(
            s,
            r##"<rect x="{x0}" y="{mt}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>"##
        );
        for t in 0..=5 {
            let y = ymax * t as f64 / 5.0;
            let (x1, x2, yy) = (x0, x0 + pw, py(y));
            let _ = writeln!(
                s,
                r##"<line x1="{x1}" x2="{x2}" y1="{yy}" y2="{yy}" stroke="#eee"/><text x="{}" y="{}" text-anchor="end">{y:.2}</text>"##,
                x0 - 5.0,
                yy + 4.0,
            );
        }
        for (x, label) in x_ticks {
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
                px(*x),
                mt + ph + 16.0,
                esc(label)
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            x0 + pw / 2.0,
            mt + ph + 34.0,
            esc(x_label)
        );
        let _ = writeln!(
            s,
            r#"<text transform="translate({},{}) rotate(-90)" text-anchor="middle">{}</text>"#,
            x0 - 42.0,
            mt + ph / 2.0,
            esc(y_label)
        );
        for (j, series) in panel.series.iter().enumerate() {
            let color = COLORS[j % COLORS.len()];
            let pts: Vec<String> = series
                .points
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                .collect();
            let _ = writeln!(
                s,
                r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
                pts.join(" ")
            );
            for &(x, y) in &series.points {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"/>"#,
                    px(x),
                    py(y)
                );
            }
            let ly = mt + ph + 52.0 + 16.0 * (j / 2) as f64;
            let lx = x0 + (j % 2) as f64 * pw / 2.0;
            let _ = writeln!(
                s,
                r#"<line x1="{lx}" x2="{}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
                lx + 18.0,
                lx + 24.0,
                ly + 4.0,
                esc(&series.name)
            );
        }
    }
    s.push_str("</svg>\n");
    s
}
