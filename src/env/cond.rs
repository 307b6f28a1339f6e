//! Conditions on facts: their YAML form, compilation and three-valued evaluation.
//!
//! A fact condition is [`Truth::True`], [`Truth::False`] or [`Truth::Unknown`] — unknown
//! when the facts it needs were not given (no package list, no GPU report). Trees
//! combine with Kleene logic (`all` is false if one child is false, unknown if one is
//! unknown; `not unknown` is unknown). The consumers decide what unknown means:
//!
//! - a signature's `match` tree holds unless it is *false*: without facts a fact
//!   condition never rules a match out, so a diagnosis without facts is what it was;
//! - a remediation step's `if` keeps the step unless it is false, and marks the step as
//!   fitting the environment when it is true;
//! - a rule's `when` reports a problem only when it is *true*: preflight never fails on
//!   what it does not know.
//!
//! Versions are compared with PEP 440 semantics (`pep440_rs`); version specifiers are
//! PEP 440 specifier sets (`>=2,<2.3`).

use std::str::FromStr;

use pep508_rs::pep440_rs::{Version, VersionSpecifiers};
use schemars::JsonSchema;
use serde::Deserialize;

use super::facts::{normalize_name, parse_version, Facts, Origin};
use crate::signature::model::Text;

/// Three-valued truth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Truth {
    True,
    False,
    Unknown,
}

impl Truth {
    pub fn of(b: bool) -> Truth {
        if b {
            Truth::True
        } else {
            Truth::False
        }
    }
    pub fn negate(self) -> Truth {
        match self {
            Truth::True => Truth::False,
            Truth::False => Truth::True,
            Truth::Unknown => Truth::Unknown,
        }
    }
    pub fn holds(self) -> bool {
        self == Truth::True
    }
    pub fn possible(self) -> bool {
        self != Truth::False
    }
}

// ---------------------------------------------------------------- YAML form

/// `package: {name, version, missing, required_by}`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PackageCondition {
    /// The distribution name (normalized: `Flash_Attn` = `flash-attn`).
    #[schemars(with = "String")]
    pub name: Text,
    /// A PEP 440 specifier set the installed version must satisfy (`<0.6.4`, `>=2,<3`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub version: Option<Text>,
    /// True: the package is not installed (known only from a complete package list).
    #[serde(default)]
    pub missing: bool,
    /// True: another installed package requires it (`pip show` Required-by is not
    /// empty); false: none does. Unknown without `pip show` output.
    #[serde(default)]
    pub required_by: Option<bool>,
}

/// `versions_differ: {packages: [a, b], ignore_local: true}`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VersionsDiffer {
    #[schemars(with = "Vec<String>")]
    pub packages: Vec<Text>,
    /// Compare without the local label (`0.6.16+cu130` = `0.6.16`).
    #[serde(default)]
    pub ignore_local: bool,
}

/// `requires_table`: when `package` is at a version listed in `table`, `dependency` must
/// satisfy the specifier given for it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequiresTable {
    #[schemars(with = "String")]
    pub package: Text,
    #[schemars(with = "String")]
    pub dependency: Text,
    /// Rows `{version: "0.0.28.post3", requires: "==2.5.1"}`.
    pub table: Vec<TableRow>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TableRow {
    #[schemars(with = "String")]
    pub version: Text,
    #[schemars(with = "String")]
    pub requires: Text,
}

/// `cuda_exceeds_driver`: the CUDA version torch was built with is newer than the driver
/// supports. The driver's maximum is `nvidia-smi`'s `CUDA Version`, or else derived from
/// the driver version through `table` (NVIDIA's minimum driver per toolkit release).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CudaExceedsDriver {
    /// `same_major`: only a newer major version counts (minor version compatibility lets
    /// a 12.8 build run on a 12.4 driver); `any`: a newer minor counts too.
    #[serde(default)]
    pub compare: Compare,
    /// Rows `{cuda: "12.8", driver: "570.26"}`: the driver a toolkit release needs.
    #[serde(default)]
    pub table: Vec<DriverRow>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Compare {
    #[default]
    SameMajor,
    Any,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DriverRow {
    #[schemars(with = "String")]
    pub cuda: Text,
    #[schemars(with = "String")]
    pub driver: Text,
}

/// A condition of a compatibility rule: facts only.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum FactCondition {
    /// An installed package (version range, missing, required by another).
    Package(PackageCondition),
    /// A GPU's compute capability satisfies this PEP 440 specifier (`>=12.0`).
    GpuCapability(#[schemars(with = "String")] Text),
    /// The NVIDIA driver version satisfies this specifier (`<570`).
    Driver(#[schemars(with = "String")] Text),
    /// The CUDA version torch was built with satisfies this specifier (`>=12.8`).
    TorchCuda(#[schemars(with = "String")] Text),
    /// The installed versions of these packages are not all equal.
    VersionsDiffer(VersionsDiffer),
    /// torch's CUDA arch list covers no architecture that runs on a GPU present.
    ArchListLacksGpu(bool),
    /// A package's version pins a dependency that is installed at another version.
    RequiresTable(RequiresTable),
    /// The CUDA version torch was built with is newer than the driver supports.
    CudaExceedsDriver(CudaExceedsDriver),
    All(Vec<FactCondition>),
    Any(Vec<FactCondition>),
    Not(Box<FactCondition>),
}

// ---------------------------------------------------------------- compiled form

/// A compiled leaf.
#[derive(Debug, Clone)]
pub enum Fact {
    Package {
        name: String,
        version: Option<VersionSpecifiers>,
        missing: bool,
        required_by: Option<bool>,
    },
    GpuCapability(VersionSpecifiers),
    Driver(VersionSpecifiers),
    TorchCuda(VersionSpecifiers),
    VersionsDiffer {
        packages: Vec<String>,
        ignore_local: bool,
    },
    ArchListLacksGpu(bool),
    RequiresTable {
        package: String,
        dependency: String,
        table: Vec<(Version, VersionSpecifiers)>,
    },
    CudaExceedsDriver {
        compare: Compare,
        table: Vec<(Version, Version)>,
    },
}

/// A compiled tree.
#[derive(Debug, Clone)]
pub enum FactCond {
    Leaf(Fact),
    All(Vec<FactCond>),
    Any(Vec<FactCond>),
    Not(Box<FactCond>),
}

/// A compile problem: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CondError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

fn at(t: &Text, message: String) -> CondError {
    CondError {
        line: t.referenced.line() as usize,
        column: t.referenced.column() as usize,
        message,
    }
}

fn spec(t: &Text) -> Result<VersionSpecifiers, CondError> {
    VersionSpecifiers::from_str(t.value.trim()).map_err(|e| {
        at(
            t,
            format!("`{}` is not a PEP 440 version specifier: {e}", t.value),
        )
    })
}

fn version(t: &Text) -> Result<Version, CondError> {
    Version::from_str(t.value.trim())
        .map_err(|e| at(t, format!("`{}` is not a PEP 440 version: {e}", t.value)))
}

fn name(t: &Text) -> Result<String, CondError> {
    let n = t.value.trim();
    if n.is_empty()
        || !n
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        return Err(at(t, format!("`{n}` is not a package name")));
    }
    Ok(normalize_name(n))
}

/// Compiles a leaf of either YAML form.
pub fn compile_package(p: &PackageCondition) -> Result<Fact, CondError> {
    if p.missing && (p.version.is_some() || p.required_by.is_some()) {
        return Err(at(
            &p.name,
            "`missing: true` cannot be combined with `version` or `required_by`".into(),
        ));
    }
    Ok(Fact::Package {
        name: name(&p.name)?,
        version: p.version.as_ref().map(spec).transpose()?,
        missing: p.missing,
        required_by: p.required_by,
    })
}

pub fn compile_gpu_capability(t: &Text) -> Result<Fact, CondError> {
    spec(t).map(Fact::GpuCapability)
}
pub fn compile_driver(t: &Text) -> Result<Fact, CondError> {
    spec(t).map(Fact::Driver)
}
pub fn compile_torch_cuda(t: &Text) -> Result<Fact, CondError> {
    spec(t).map(Fact::TorchCuda)
}

/// Compiles a rule's tree, collecting every error.
pub fn compile(c: &FactCondition, errors: &mut Vec<CondError>) -> Option<FactCond> {
    let leaf = |r: Result<Fact, CondError>, errors: &mut Vec<CondError>| match r {
        Ok(f) => Some(FactCond::Leaf(f)),
        Err(e) => {
            errors.push(e);
            None
        }
    };
    match c {
        FactCondition::Package(p) => leaf(compile_package(p), errors),
        FactCondition::GpuCapability(t) => leaf(compile_gpu_capability(t), errors),
        FactCondition::Driver(t) => leaf(compile_driver(t), errors),
        FactCondition::TorchCuda(t) => leaf(compile_torch_cuda(t), errors),
        FactCondition::ArchListLacksGpu(b) => Some(FactCond::Leaf(Fact::ArchListLacksGpu(*b))),
        FactCondition::VersionsDiffer(v) => {
            let mut names = Vec::new();
            for t in &v.packages {
                match name(t) {
                    Ok(n) => names.push(n),
                    Err(e) => errors.push(e),
                }
            }
            if v.packages.len() < 2 {
                errors.push(CondError {
                    line: 0,
                    column: 0,
                    message: "versions_differ needs at least two packages".into(),
                });
                return None;
            }
            Some(FactCond::Leaf(Fact::VersionsDiffer {
                packages: names,
                ignore_local: v.ignore_local,
            }))
        }
        FactCondition::RequiresTable(r) => {
            let mut table = Vec::new();
            for row in &r.table {
                match (version(&row.version), spec(&row.requires)) {
                    (Ok(v), Ok(s)) => table.push((v, s)),
                    (Err(e), _) | (_, Err(e)) => errors.push(e),
                }
            }
            let (p, d) = (name(&r.package), name(&r.dependency));
            match (p, d) {
                (Ok(package), Ok(dependency)) if !table.is_empty() => {
                    Some(FactCond::Leaf(Fact::RequiresTable {
                        package,
                        dependency,
                        table,
                    }))
                }
                (Err(e), _) | (_, Err(e)) => {
                    errors.push(e);
                    None
                }
                _ => {
                    errors.push(at(&r.package, "requires_table has no rows".into()));
                    None
                }
            }
        }
        FactCondition::CudaExceedsDriver(c) => {
            let mut table = Vec::new();
            for row in &c.table {
                match (version(&row.cuda), version(&row.driver)) {
                    (Ok(a), Ok(b)) => table.push((a, b)),
                    (Err(e), _) | (_, Err(e)) => errors.push(e),
                }
            }
            Some(FactCond::Leaf(Fact::CudaExceedsDriver {
                compare: c.compare,
                table,
            }))
        }
        FactCondition::All(v) => compile_list(v, errors).map(FactCond::All),
        FactCondition::Any(v) => compile_list(v, errors).map(FactCond::Any),
        FactCondition::Not(b) => compile(b, errors).map(|c| FactCond::Not(Box::new(c))),
    }
}

fn compile_list(v: &[FactCondition], errors: &mut Vec<CondError>) -> Option<Vec<FactCond>> {
    let before = errors.len();
    let out: Vec<FactCond> = v.iter().filter_map(|c| compile(c, errors)).collect();
    (errors.len() == before).then_some(out)
}

/// Every package name a tree mentions (preflight asks `pip show` about them).
pub fn package_names(c: &FactCond, out: &mut Vec<String>) {
    let mut push = |n: &String| {
        if !out.contains(n) {
            out.push(n.clone());
        }
    };
    match c {
        FactCond::Leaf(Fact::Package { name, .. }) => push(name),
        FactCond::Leaf(Fact::VersionsDiffer { packages, .. }) => packages.iter().for_each(push),
        FactCond::Leaf(Fact::RequiresTable {
            package,
            dependency,
            ..
        }) => {
            push(package);
            push(dependency);
        }
        FactCond::Leaf(_) => {}
        FactCond::All(v) | FactCond::Any(v) => v.iter().for_each(|c| package_names(c, out)),
        FactCond::Not(c) => package_names(c, out),
    }
}

// ---------------------------------------------------------------- evaluation

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

/// Evaluates a leaf; facts it looked at go to `out`.
pub fn eval_fact(f: &Fact, facts: &Facts, out: &mut Vec<Seen>) -> Truth {
    match f {
        Fact::Package {
            name,
            version,
            missing,
            required_by,
        } => {
            let Some(p) = facts.package(name) else {
                if facts.has_package_list {
                    return Truth::of(*missing);
                }
                return Truth::Unknown;
            };
            seen(out, format!("{} {}", p.name, p.version), &p.origin);
            if *missing {
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
                        Truth::of(by.is_empty() != *want)
                    }
                    None => Truth::Unknown,
                };
                t = and(t, r);
            }
            t
        }
        Fact::GpuCapability(spec) => {
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
        Fact::Driver(spec) => match &facts.driver {
            Some(d) => match parse_version(&d.value) {
                Some(v) => {
                    seen(out, format!("driver {}", d.value), &d.origin);
                    Truth::of(spec.contains(&v))
                }
                None => Truth::Unknown,
            },
            None => Truth::Unknown,
        },
        Fact::TorchCuda(spec) => match facts.torch_cuda_version() {
            Some((v, o)) => match parse_version(&v) {
                Some(pv) => {
                    seen(out, format!("torch built with CUDA {v}"), &o);
                    Truth::of(spec.contains(&pv))
                }
                None => Truth::Unknown,
            },
            None => Truth::Unknown,
        },
        Fact::VersionsDiffer {
            packages,
            ignore_local,
        } => {
            let mut vs = Vec::new();
            for n in packages {
                let Some(p) = facts.package(n) else {
                    return Truth::Unknown;
                };
                let Some(v) = p.parsed() else {
                    return Truth::Unknown;
                };
                vs.push((p, if *ignore_local { v.without_local() } else { v }));
            }
            let differ = vs.windows(2).any(|w| w[0].1 != w[1].1);
            if differ {
                for (p, _) in &vs {
                    seen(out, format!("{} {}", p.name, p.version), &p.origin);
                }
            }
            Truth::of(differ)
        }
        Fact::ArchListLacksGpu(want) => {
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
                    return Truth::of(*want);
                }
            }
            if any_known {
                Truth::of(!*want)
            } else {
                Truth::Unknown
            }
        }
        Fact::RequiresTable {
            package,
            dependency,
            table,
        } => {
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
        Fact::CudaExceedsDriver { compare, table } => {
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
    }
}

fn and(a: Truth, b: Truth) -> Truth {
    match (a, b) {
        (Truth::False, _) | (_, Truth::False) => Truth::False,
        (Truth::True, Truth::True) => Truth::True,
        _ => Truth::Unknown,
    }
}

fn or(a: Truth, b: Truth) -> Truth {
    match (a, b) {
        (Truth::True, _) | (_, Truth::True) => Truth::True,
        (Truth::False, Truth::False) => Truth::False,
        _ => Truth::Unknown,
    }
}

/// Evaluates a tree (Kleene logic).
pub fn eval(c: &FactCond, facts: &Facts, out: &mut Vec<Seen>) -> Truth {
    match c {
        FactCond::Leaf(f) => eval_fact(f, facts, out),
        FactCond::All(v) => v
            .iter()
            .fold(Truth::True, |t, c| and(t, eval(c, facts, out))),
        FactCond::Any(v) => v
            .iter()
            .fold(Truth::False, |t, c| or(t, eval(c, facts, out))),
        FactCond::Not(c) => {
            let mut scratch = Vec::new();
            eval(c, facts, &mut scratch).negate()
        }
    }
}

/// Kleene conjunction and disjunction, for other evaluators.
pub fn truth_and(a: Truth, b: Truth) -> Truth {
    and(a, b)
}
pub fn truth_or(a: Truth, b: Truth) -> Truth {
    or(a, b)
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

    #[test]
    fn kleene() {
        assert_eq!(and(Truth::Unknown, Truth::False), Truth::False);
        assert_eq!(or(Truth::Unknown, Truth::True), Truth::True);
        assert_eq!(Truth::Unknown.negate(), Truth::Unknown);
    }
}
