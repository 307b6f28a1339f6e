//! `nvidia-smi`: the banner (`NVIDIA-SMI 550.54.15  Driver Version: 550.54.15  CUDA
//! Version: 12.4`), the GPU rows of its table (`|   0  NVIDIA H100 80GB HBM3   On  |`),
//! and `nvidia-smi --query-gpu=name,compute_cap[,…] --format=csv` (a header naming the
//! columns, then one row per GPU).

use std::sync::LazyLock;

use regex::Regex;

use super::{Mode, Scanner};
use crate::env::facts::{Fact, Gpu};
use crate::knowledge::version::parse_version;

#[allow(clippy::expect_used)]
static BANNER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"NVIDIA-SMI\s+(\S+)\s+Driver Version:\s+(\S+)\s+CUDA Version:\s+([0-9][0-9.]*)")
        .expect("banner regex")
});
#[allow(clippy::expect_used)]
static ROW: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\|\s+([0-9]+)\s+(\S.*?)\s+(?:On|Off)\s+\|").expect("row regex"));

/// One line outside any mode.
pub fn line(s: &mut Scanner, line: usize, t: &str) -> bool {
    if let Some(c) = BANNER.captures(t) {
        let o = s.origin(line);
        s.facts_mut().driver = Some(Fact {
            value: c[2].to_string(),
            origin: o.clone(),
        });
        s.facts_mut().driver_cuda = Some(Fact {
            value: c[3].to_string(),
            origin: o,
        });
        s.report("nvidia-smi", line);
        return true;
    }
    if let Some(c) = ROW.captures(t) {
        let o = s.origin(line);
        s.facts_mut().add_gpu(Gpu {
            index: c[1].parse().ok(),
            name: c[2].to_string(),
            capability: None,
            origin: o,
        });
        return true;
    }
    // CSV header: `name, compute_cap` (any order, other columns allowed)
    if t.contains(',') && !t.contains(':') {
        let columns: Vec<String> = t
            .split(',')
            .map(|c| {
                let c = c.trim();
                c.split_whitespace().next().unwrap_or(c).to_string()
            })
            .collect();
        let known = [
            "name",
            "compute_cap",
            "driver_version",
            "index",
            "pci.bus_id",
        ];
        if columns.iter().any(|c| c == "name" || c == "compute_cap")
            && columns
                .iter()
                .all(|c| known.contains(&c.as_str()) || c.contains('.'))
        {
            s.report("nvidia-smi --query-gpu", line);
            s.set_mode(Mode::SmiCsv { columns });
            return true;
        }
    }
    false
}

/// A row of the CSV.
pub fn csv_row(s: &mut Scanner, line: usize, columns: &[String], t: &str) -> bool {
    let cells: Vec<&str> = t.split(',').map(str::trim).collect();
    if cells.len() != columns.len() {
        return false;
    }
    let get = |name: &str| {
        columns
            .iter()
            .position(|c| c == name)
            .and_then(|i| cells.get(i).copied())
    };
    let capability = get("compute_cap")
        .filter(|c| parse_version(c).is_some())
        .map(String::from);
    let index = get("index").and_then(|i| i.parse().ok());
    let name = get("name").unwrap_or("GPU").to_string();
    let o = s.origin(line);
    if let Some(d) = get("driver_version").filter(|d| parse_version(d).is_some()) {
        s.facts_mut().driver = Some(Fact {
            value: d.to_string(),
            origin: o.clone(),
        });
    }
    let index = index.or_else(|| {
        // rows come in index order
        Some(
            s.facts()
                .gpus
                .iter()
                .filter(|g| g.origin.source == o.source && g.origin.line < line)
                .filter(|g| g.capability.is_some())
                .count(),
        )
    });
    s.facts_mut().add_gpu(Gpu {
        index,
        name,
        capability,
        origin: o,
    });
    s.set_mode(Mode::SmiCsv {
        columns: columns.to_vec(),
    });
    true
}
