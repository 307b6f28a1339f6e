//! Three-valued evaluation of compiled fact conditions ([`crate::knowledge::cond`])
//! against the facts of one environment.

use pep440_rs::{Version, VersionSpecifiers};

use super::facts::{Facts, Origin};
use crate::knowledge::cond::{Compare, Fact, FactCond, Truth};
use crate::knowledge::version::parse_version;

/// A fact a condition looked at: shown as evidence of a finding.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Seen {
    pub what: String,
    pub origin: Origin,
}

fn seen(out: &mut Vec<Seen>, what: String, origin: &Origin) {
    let s = Seen {
        what,
        origin: origin.clone(),
    };
    if !out.contains(&s) {
        out.push(s);
    }
}

fn cap_version(c: &str) -> Option<Version> {
    parse_version(c)
}

/// Whether an arch list entry runs on a GPU of capability `major.minor`: a cubin
/// (`sm_XY`) of the same major and a minor not above it; PTX (`compute_XY`) of any
/// capability not above it (the driver JIT-compiles it forward).
pub fn arch_runs_on(arch: &str, major: u64, minor: u64) -> bool {
    let (kind, num) = match arch.split_once('_') {
        Some(x) => x,
        None => return false,
    };
    let digits: String = num.chars().take_while(|c| c.is_ascii_digit()).collect();
    if digits.len() < 2 {
        return false;
    }
    let (a, b) = digits.split_at(digits.len() - 1);
    let (Ok(am), Ok(bm)) = (a.parse::<u64>(), b.parse::<u64>()) else {
        return false;
    };
    match kind {
        "sm" => am == major && bm <= minor,
        "compute" => (am, bm) <= (major, minor),
        _ => false,
    }
}

fn major_minor(v: &Version) -> (u64, u64) {
    let r = v.release();
    (
        r.first().copied().unwrap_or(0),
        r.get(1).copied().unwrap_or(0),
    )
}

/// Evaluates a leaf; facts it looked at go to `out`. One function per kind of fact.
pub fn eval_fact(f: &Fact, facts: &Facts, out: &mut Vec<Seen>) -> Truth {
    match f {
        Fact::Package {
            name,
            version,
            missing,
            required_by,
        } => package(facts, out, name, version.as_ref(), *missing, *required_by),
        Fact::GpuCapability(spec) => gpu_capability(facts, out, spec),
        Fact::Driver(spec) => driver(facts, out, spec),
        Fact::TorchCuda(spec) => torch_cuda(facts, out, spec),
        Fact::VersionsDiffer {
            packages,
            ignore_local,
        } => versions_differ(facts, out, packages, *ignore_local),
        Fact::ArchListLacksGpu(want) => arch_list_lacks_gpu(facts, out, *want),
        Fact::RequiresTable {
            package,
            dependency,
            table,
        } => requires_table(facts, out, package, dependency, table),
        Fact::CudaExceedsDriver { compare, table } => {
            cuda_exceeds_driver(facts, out, *compare, table)
        }
    }
}

/// `package:` (installed, a version, missing, required by another).
fn package(
    facts: &Facts,
    out: &mut Vec<Seen>,
    name: &str,
    version: Option<&VersionSpecifiers>,
    missing: bool,
    required_by: Option<bool>,
) -> Truth {
    let Some(p) = facts.package(name) else {
        if facts.has_package_list {
            return Truth::of(missing);
        }
        return Truth::Unknown;
    };
    seen(out, format!("{} {}", p.name, p.version), &p.origin);
    if missing {
        return Truth::False;
    }
    let mut t = Truth::True;
    if let Some(spec) = version {
        t = match p.parsed() {
            Some(v) => Truth::of(spec.contains(&v)),
            None => Truth::Unknown,
        };
    }
    if t == Truth::False {
        return t;
    }
    if let Some(want) = required_by {
        let r = match &p.required_by {
            Some(by) => {
                if !by.is_empty() {
                    seen(
                        out,
                        format!("{} is required by {}", p.name, by.join(", ")),
                        &p.origin,
                    );
                }
                Truth::of(by.is_empty() != want)
            }
            None => Truth::Unknown,
        };
        t = t & r;
    }
    t
}

/// `gpu_capability:`: a GPU of a capability in `spec`.
fn gpu_capability(facts: &Facts, out: &mut Vec<Seen>, spec: &VersionSpecifiers) -> Truth {
    let mut any_known = false;
    for g in &facts.gpus {
        if let Some(c) = g.capability.as_deref().and_then(cap_version) {
            any_known = true;
            if spec.contains(&c) {
                seen(
                    out,
                    format!("{} (compute capability {})", g.name, c),
                    &g.origin,
                );
                return Truth::True;
            }
        }
    }
    if any_known {
        Truth::False
    } else {
        Truth::Unknown
    }
}

/// `driver:`: the NVIDIA driver's version in `spec`.
fn driver(facts: &Facts, out: &mut Vec<Seen>, spec: &VersionSpecifiers) -> Truth {
    match &facts.driver {
        Some(d) => match parse_version(&d.value) {
            Some(v) => {
                seen(out, format!("driver {}", d.value), &d.origin);
                Truth::of(spec.contains(&v))
            }
            None => Truth::Unknown,
        },
        None => Truth::Unknown,
    }
}

/// `torch_cuda:`: the CUDA version torch was built with in `spec`.
fn torch_cuda(facts: &Facts, out: &mut Vec<Seen>, spec: &VersionSpecifiers) -> Truth {
    match facts.torch_cuda_version() {
        Some((v, o)) => match parse_version(&v) {
            Some(pv) => {
                seen(out, format!("torch built with CUDA {v}"), &o);
                Truth::of(spec.contains(&pv))
            }
            None => Truth::Unknown,
        },
        None => Truth::Unknown,
    }
}

/// `versions_differ:`: the packages' versions are not all equal.
fn versions_differ(
    facts: &Facts,
    out: &mut Vec<Seen>,
    packages: &[String],
    ignore_local: bool,
) -> Truth {
    let mut vs = Vec::new();
    for n in packages {
        let Some(p) = facts.package(n) else {
            return Truth::Unknown;
        };
        let Some(v) = p.parsed() else {
            return Truth::Unknown;
        };
        vs.push((p, if ignore_local { v.without_local() } else { v }));
    }
    let differ = vs.windows(2).any(|w| w[0].1 != w[1].1);
    if differ {
        for (p, _) in &vs {
            seen(out, format!("{} {}", p.name, p.version), &p.origin);
        }
    }
    Truth::of(differ)
}

/// `arch_list_lacks_gpu:`: torch's arch list has nothing that runs on a GPU.
fn arch_list_lacks_gpu(facts: &Facts, out: &mut Vec<Seen>, want: bool) -> Truth {
    let Some((list, lo)) = &facts.arch_list else {
        return Truth::Unknown;
    };
    let mut any_known = false;
    for g in &facts.gpus {
        let Some(c) = g.capability.as_deref().and_then(cap_version) else {
            continue;
        };
        any_known = true;
        let (ma, mi) = major_minor(&c);
        if !list.iter().any(|a| arch_runs_on(a, ma, mi)) {
            seen(
                out,
                format!("{} has compute capability {ma}.{mi} (sm_{ma}{mi})", g.name),
                &g.origin,
            );
            seen(out, format!("torch arch list: {}", list.join(" ")), lo);
            return Truth::of(want);
        }
    }
    if any_known {
        Truth::of(!want)
    } else {
        Truth::Unknown
    }
}

/// `requires_table:`: a package's version needs a dependency version it does not have.
fn requires_table(
    facts: &Facts,
    out: &mut Vec<Seen>,
    package: &str,
    dependency: &str,
    table: &[(Version, VersionSpecifiers)],
) -> Truth {
    let (Some(p), Some(d)) = (facts.package(package), facts.package(dependency)) else {
        return Truth::Unknown;
    };
    let (Some(pv), Some(dv)) = (p.parsed(), d.parsed()) else {
        return Truth::Unknown;
    };
    let pv = pv.without_local();
    let Some((_, want)) = table.iter().find(|(v, _)| *v == pv) else {
        return Truth::Unknown;
    };
    let ok = want.contains(&dv.clone().without_local());
    if !ok {
        seen(
            out,
            format!("{} {} needs {} {}", p.name, p.version, d.name, want),
            &p.origin,
        );
        seen(out, format!("{} {}", d.name, d.version), &d.origin);
    }
    Truth::of(!ok)
}

/// `cuda_exceeds_driver:`: torch's CUDA is newer than the driver supports.
fn cuda_exceeds_driver(
    facts: &Facts,
    out: &mut Vec<Seen>,
    compare: Compare,
    table: &[(Version, Version)],
) -> Truth {
    let Some((tc, to)) = facts.torch_cuda_version() else {
        return Truth::Unknown;
    };
    let Some(tv) = parse_version(&tc) else {
        return Truth::Unknown;
    };
    // the driver's newest CUDA: nvidia-smi says it, or the table derives it
    let (max, what, origin) = if let Some(dc) = &facts.driver_cuda {
        match parse_version(&dc.value) {
            Some(v) => (
                v,
                format!("the driver supports CUDA up to {}", dc.value),
                dc.origin.clone(),
            ),
            None => return Truth::Unknown,
        }
    } else if let Some(d) = &facts.driver {
        let Some(dv) = parse_version(&d.value) else {
            return Truth::Unknown;
        };
        let best = table
            .iter()
            .filter(|(_, need)| dv >= *need)
            .map(|(cuda, _)| cuda.clone())
            .max();
        match best {
            Some(v) => (
                v.clone(),
                format!("driver {} supports CUDA up to {v}", d.value),
                d.origin.clone(),
            ),
            None => return Truth::Unknown,
        }
    } else {
        return Truth::Unknown;
    };
    let (a, b) = (major_minor(&tv), major_minor(&max));
    let exceeds = match compare {
        Compare::SameMajor => a.0 > b.0,
        Compare::Any => a > b,
    };
    if exceeds {
        seen(out, format!("torch built with CUDA {tc}"), &to);
        seen(out, what, &origin);
    }
    Truth::of(exceeds)
}

/// Evaluates a tree ([`crate::knowledge::cond::Tree::eval`]); the facts the leaves
/// outside a `not` looked at go to `out`.
pub fn eval(c: &FactCond, facts: &Facts, out: &mut Vec<Seen>) -> Truth {
    c.eval(&mut |f, keep| {
        if keep {
            eval_fact(f, facts, out)
        } else {
            eval_fact(f, facts, &mut Vec::new())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_coverage_follows_torch_rules() {
        // sm_80 cubins run on 8.6, not on 9.0; sm_90 does not run on 12.0
        assert!(arch_runs_on("sm_80", 8, 6));
        assert!(!arch_runs_on("sm_80", 9, 0));
        assert!(!arch_runs_on("sm_90", 12, 0));
        assert!(arch_runs_on("sm_120", 12, 0));
        // PTX is JIT-compiled forward
        assert!(arch_runs_on("compute_90", 12, 0));
        assert!(!arch_runs_on("compute_120", 9, 0));
    }
}
