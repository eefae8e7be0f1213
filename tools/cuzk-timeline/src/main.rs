//! `cuzk-timeline IN.json OUT_PREFIX`: draws the per-partition timeline of a benchmark run
//! (`cuzk-gpu bench-shaped --timeline IN.json`) as one SVG per run, OUT_PREFIX-N.svg: a row per
//! job and partition, time across, one colour per pipeline stage — waiting for a witness slot
//! or for memory, synthesis,
//! the backend's preparation, waiting for the prover, proving, finishing — so the GPU's idle
//! gaps show at a glance.

use plotters::prelude::*;
use serde_json::Value;

const STAGES: [(&str, RGBColor); 7] = [
    ("gate_wait", RGBColor(235, 235, 235)),
    ("memory_wait", RGBColor(190, 190, 190)),
    ("synthesis", RGBColor(66, 133, 244)),
    ("prepare", RGBColor(155, 89, 182)),
    ("prove_queue", RGBColor(251, 188, 5)),
    ("prove", RGBColor(219, 68, 55)),
    ("finish", RGBColor(15, 157, 88)),
];

/// (row, stage index, start, end) of every span of a run, rows numbered job by job.
fn bars(run: &Value) -> Result<(Vec<(usize, usize, f64, f64)>, usize), String> {
    let jobs = run["jobs"].as_array().ok_or("a run without \"jobs\"")?;
    let (mut out, mut base) = (Vec::new(), 0usize);
    for job in jobs {
        let at = job["submitted_s"].as_f64().ok_or("a job without \"submitted_s\"")?;
        let spans = job["timings"]["spans"].as_array().ok_or("a job without \"timings\".\"spans\"")?;
        let mut rows = 0;
        for s in spans {
            let (Some(p), Some(stage), Some(t0), Some(t1)) = (s[0].as_u64(), s[1].as_str(), s[2].as_f64(), s[3].as_f64()) else {
                return Err(format!("a malformed span: {s}"));
            };
            let k = STAGES.iter().position(|(n, _)| *n == stage).ok_or_else(|| format!("unknown stage {stage}"))?;
            out.push((base + p as usize, k, at + t0, at + t1));
            rows = rows.max(p as usize + 1);
        }
        base += rows;
    }
    Ok((out, base))
}

fn draw(run: &Value, path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let (bars, rows) = bars(run)?;
    // A fifth more than the last span: room for the legend in the upper right, where the first
    // partitions have long finished.
    let end = bars.iter().map(|b| b.3).fold(0.0, f64::max).max(1e-3) * 1.2;
    let root = SVGBackend::new(path, (1200, 120 + 22 * rows as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let title = run["name"].as_str().unwrap_or("run");
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(90)
        .build_cartesian_2d(0.0..end, rows as f64..0.0)?;
    chart
        .configure_mesh()
        .x_desc("seconds since the first submit")
        .y_desc("job / partition")
        .y_labels(rows.min(40))
        .y_label_formatter(&|y| format!("{}", *y as usize))
        .draw()?;
    for (k, (name, color)) in STAGES.iter().enumerate() {
        chart
            .draw_series(bars.iter().filter(|b| b.1 == k).map(|&(row, _, t0, t1)| {
                Rectangle::new([(t0, row as f64 + 0.1), (t1, row as f64 + 0.9)], color.filled())
            }))?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// Every run of `v` drawn to `{prefix}-{i}.svg`; the paths written.
fn draw_all(v: &Value, prefix: &str) -> Result<Vec<String>, String> {
    let runs = v["runs"].as_array().ok_or("no \"runs\" array")?;
    let mut paths = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let path = format!("{prefix}-{i}.svg");
        draw(run, &path).map_err(|e| format!("{path}: {e}"))?;
        paths.push(path);
    }
    Ok(paths)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(input), Some(prefix)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: cuzk-timeline IN.json OUT_PREFIX");
        std::process::exit(2);
    };
    let v: Value = match std::fs::read(input).map_err(|e| e.to_string()).and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string())) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("cuzk-timeline: {input}: {e}");
            std::process::exit(1);
        }
    };
    match draw_all(&v, prefix) {
        Ok(paths) => paths.iter().for_each(|p| println!("{p}")),
        Err(e) => {
            eprintln!("cuzk-timeline: {e}");
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two jobs of two partitions, as `timings_json` writes them.
    fn sample() -> Value {
        let job = |at: f64| {
            serde_json::json!({"submitted_s": at, "timings": {"spans": [
                [0, "synthesis", 0.0, 1.0], [1, "memory_wait", 0.0, 0.5], [1, "synthesis", 0.5, 1.6],
                [0, "prove_queue", 1.0, 1.1], [0, "prove", 1.1, 1.8], [0, "finish", 1.8, 1.9],
                [1, "prove_queue", 1.6, 1.8], [1, "prove", 1.8, 2.5], [1, "finish", 2.5, 2.6]]}})
        };
        serde_json::json!({"runs": [{"name": "sample", "jobs": [job(0.0), job(0.3)]}]})
    }

    #[test]
    fn draws_one_bar_per_span() {
        let dir = std::env::temp_dir().join(format!("cuzk-timeline-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let prefix = dir.join("t").to_string_lossy().into_owned();
        let paths = draw_all(&sample(), &prefix).unwrap();
        assert_eq!(paths.len(), 1);
        let svg = std::fs::read_to_string(&paths[0]).unwrap();
        // 18 spans, 7 legend swatches, the background and the legend box (at least).
        assert!(svg.matches("<rect").count() >= 18 + 7, "{svg}");
        assert!(svg.contains("sample") && svg.contains("prove_queue"), "title and legend");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn malformed_input_is_an_error() {
        let bad = serde_json::json!({"runs": [{"name": "x", "jobs": [{"submitted_s": 0.0, "timings": {"spans": [[0, "nap", 0.0, 1.0]]}}]}]});
        let e = draw_all(&bad, "/nonexistent/x").unwrap_err();
        assert!(e.contains("unknown stage nap"), "{e}");
        assert!(draw_all(&serde_json::json!({}), "/tmp/x").is_err());
    }
}
