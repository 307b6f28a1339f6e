//! Conditions on facts: their YAML form, compilation and three-valued logic
//! (evaluation against facts is in [`crate::env::eval`]).
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

use pep440_rs::{Version, VersionSpecifiers};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::diagnostic::Text;
use super::version::normalize_name;

/// Three-valued truth, with Kleene's operators: `a & b` is false if either is false,
/// `a | b` is true if either is true, `!Unknown` is unknown.
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
    pub fn holds(self) -> bool {
        self == Truth::True
    }
    pub fn possible(self) -> bool {
        self != Truth::False
    }
}

impl std::ops::BitAnd for Truth {
    type Output = Truth;
    fn bitand(self, other: Truth) -> Truth {
        match (self, other) {
            (Truth::False, _) | (_, Truth::False) => Truth::False,
            (Truth::True, Truth::True) => Truth::True,
            _ => Truth::Unknown,
        }
    }
}

impl std::ops::BitOr for Truth {
    type Output = Truth;
    fn bitor(self, other: Truth) -> Truth {
        match (self, other) {
            (Truth::True, _) | (_, Truth::True) => Truth::True,
            (Truth::False, Truth::False) => Truth::False,
            _ => Truth::Unknown,
        }
    }
}

impl std::ops::Not for Truth {
    type Output = Truth;
    fn not(self) -> Truth {
        match self {
            Truth::True => Truth::False,
            Truth::False => Truth::True,
            Truth::Unknown => Truth::Unknown,
        }
    }
}

/// A compiled condition tree over leaves `L`: the one shape of a signature's `match`
/// (leaves on the log and on facts, [`crate::knowledge::signature::compile::Leaf`]), a
/// rule's `when` and a step's or a note's `if` (leaves on facts, [`Fact`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Tree<L> {
    Leaf(L),
    All(Vec<Tree<L>>),
    Any(Vec<Tree<L>>),
    Not(Box<Tree<L>>),
}

impl<L> Tree<L> {
    /// Kleene evaluation, the one semantics of every tree: `leaf(l, keep)` judges a leaf,
    /// `keep` is false under a `not` (what the leaf saw is no evidence: a negated
    /// condition yields no captures and no evidence). An `all` stops at its first false
    /// child, an `any` at its first true one (their value is decided).
    pub fn eval(&self, leaf: &mut impl FnMut(&L, bool) -> Truth) -> Truth {
        self.eval_kept(true, leaf)
    }

    fn eval_kept(&self, keep: bool, leaf: &mut impl FnMut(&L, bool) -> Truth) -> Truth {
        match self {
            Tree::Leaf(l) => leaf(l, keep),
            Tree::All(v) => {
                let mut t = Truth::True;
                for c in v {
                    t = t & c.eval_kept(keep, leaf);
                    if t == Truth::False {
                        break;
                    }
                }
                t
            }
            Tree::Any(v) => {
                let mut t = Truth::False;
                for c in v {
                    t = t | c.eval_kept(keep, leaf);
                    if t == Truth::True {
                        break;
                    }
                }
                t
            }
            Tree::Not(c) => !c.eval_kept(false, leaf),
        }
    }

    /// Every leaf, in order, with whether it is under a `not`.
    pub fn for_each_leaf<'a>(&'a self, f: &mut impl FnMut(&'a L, bool)) {
        self.walk(false, f)
    }

    fn walk<'a>(&'a self, negated: bool, f: &mut impl FnMut(&'a L, bool)) {
        match self {
            Tree::Leaf(l) => f(l, negated),
            Tree::All(v) | Tree::Any(v) => v.iter().for_each(|c| c.walk(negated, f)),
            Tree::Not(c) => c.walk(true, f),
        }
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

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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

/// A compiled tree of fact conditions.
pub type FactCond = Tree<Fact>;

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
    c.for_each_leaf(&mut |leaf, _| match leaf {
        Fact::Package { name, .. } => push(name),
        Fact::VersionsDiffer { packages, .. } => packages.iter().for_each(&mut push),
        Fact::RequiresTable {
            package,
            dependency,
            ..
        } => {
            push(package);
            push(dependency);
        }
        _ => {}
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kleene() {
        use Truth::{False as F, True as T, Unknown as U};
        assert_eq!(U & F, F);
        assert_eq!(U & T, U);
        assert_eq!(U | T, T);
        assert_eq!(U | F, U);
        assert_eq!(!U, U);
        assert_eq!(!T, F);
    }

    #[test]
    fn a_tree_stops_once_decided_and_keeps_nothing_under_not() {
        let t: Tree<Truth> = Tree::All(vec![
            Tree::Leaf(Truth::Unknown),
            Tree::Not(Box::new(Tree::Leaf(Truth::False))),
            Tree::Leaf(Truth::False),
            Tree::Leaf(Truth::True),
        ]);
        let mut seen = Vec::new();
        let v = t.eval(&mut |l, keep| {
            seen.push((*l, keep));
            *l
        });
        assert_eq!(v, Truth::False);
        assert_eq!(
            seen,
            [
                (Truth::Unknown, true),
                (Truth::False, false),
                (Truth::False, true)
            ]
        );
    }
}
