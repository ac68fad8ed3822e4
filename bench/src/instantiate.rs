//! `instantiate`: compile time of the reference decode-step graph (hazards,
//! lanes, boundaries, fingerprint) at 100k nodes, and how it scales from
//! 10k (time(100k) / time(10k) / 10; 1.0 is linear). The two sizes are
//! timed alternately so machine noise hits both alike; medians are used.
//! Then each adversarial shape (`relaunch_lanes::adversarial`) at 100k
//! nodes: legal graphs on which a per-pair or per-segment analysis is
//! quadratic.

use std::time::Instant;

use relaunch_lanes::reference::{decode_step, DecodeShape};
use relaunch_lanes::{Graph, GraphOptions, Mode};
use relaunch_testsupport::adversarial::{self, Shape};

use crate::report::Report;

const RUNS: usize = 9;
/// Runs per adversarial shape (median).
const ADVERSARIAL_RUNS: usize = 3;

fn options() -> GraphOptions {
    GraphOptions {
        mode: Mode::Latency,
        lanes: 2,
        max_in_flight: 1,
    }
}

fn reference(nodes: usize) -> Result<Graph, String> {
    decode_step(&DecodeShape::scaled(nodes, 2), options())
        .map(|d| d.graph)
        .map_err(|e| e.to_string())
}

/// Milliseconds for one instantiation; checks the fingerprint is stable.
fn time_ms(graph: &Graph, fingerprint: [u8; 32]) -> Result<f64, String> {
    let start = Instant::now();
    let plan = graph.instantiate().map_err(|e| e.to_string())?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    if plan.fingerprint() != fingerprint {
        return Err("fingerprint changed between identical instantiations".into());
    }
    Ok(ms)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub fn run(report: &mut Report) -> Result<(), String> {
    let small = reference(10_000)?;
    let large = reference(100_000)?;
    let small_fp = small
        .instantiate()
        .map_err(|e| e.to_string())?
        .fingerprint();
    let large_plan = large.instantiate().map_err(|e| e.to_string())?;
    let large_fp = large_plan.fingerprint();
    let (mut t_small, mut t_large) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        t_small.push(time_ms(&small, small_fp)?);
        t_large.push(time_ms(&large, large_fp)?);
    }
    let (t10k, t100k) = (median(t_small), median(t_large));
    println!(
        "reference decode graph: {} nodes {t10k:.1} ms, {} nodes {t100k:.1} ms, {} lanes",
        small.node_count(),
        large.node_count(),
        large_plan.lane_count()
    );
    let graph = decode_step(&DecodeShape::default(), options())
        .map(|d| d.graph)
        .map_err(|e| e.to_string())?;
    let plan = graph.instantiate().map_err(|e| e.to_string())?;
    println!(
        "default decode step: {} nodes, {} dependency edges",
        graph.node_count(),
        graph.edge_count()
    );
    for (lane, c) in plan.boundary_counts().iter().enumerate() {
        println!(
            "default decode step lane {lane}: {} dispatches, {} dependencies, {} wait, {} rmw_vmem, {} rmw",
            c.dispatches, c.dependencies, c.wait, c.rmw_vmem, c.rmw
        );
    }
    let (ours, baseline) = crate::decode_ratio::decode_step_dwords()?;
    println!("default decode step IB dwords: {ours} (every dependency fenced: {baseline})");
    report.metric("instantiate_100k_ms", t100k, "ms", Some((2000.0, true)));
    report.metric(
        "instantiate_scaling",
        t100k / t10k / 10.0,
        "ratio",
        Some((1.3, true)),
    );
    for shape in Shape::ALL {
        let graph = adversarial::build(shape, 100_000).map_err(|e| e.to_string())?;
        let plan = graph.instantiate().map_err(|e| e.to_string())?;
        let fp = plan.fingerprint();
        let runs = (0..ADVERSARIAL_RUNS)
            .map(|_| time_ms(&graph, fp))
            .collect::<Result<Vec<_>, _>>()?;
        println!(
            "adversarial {}: {} nodes, {} lanes",
            shape.name(),
            graph.node_count(),
            plan.lane_count()
        );
        report.metric(
            &format!("instantiate_adversarial_{}_100k_ms", shape.name()),
            median(runs),
            "ms",
            Some((2000.0, true)),
        );
    }
    report.metric(
        "decode_step_dwords_ratio",
        ours as f64 / baseline as f64,
        "ratio",
        Some((0.75, true)),
    );
    Ok(())
}
