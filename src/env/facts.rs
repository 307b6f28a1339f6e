//! Typed facts about one Python/GPU environment.
//!
//! Facts come from environment reports (see [`parse`](super::parse)): package lists,
//! `pip show`, `collect_env`, `nvidia-smi`. Every fact keeps its [`Origin`] (report and
//! line) so that a finding can point at the line that proves it. Absence is explicit:
//! a package that no list mentions is *missing* only when a complete package list was
//! seen ([`Facts::has_package_list`]); otherwise it is *unknown*. That distinction is
//! what lets fact conditions be three-valued (see [`eval`](super::eval)).
//!
//! Package names are normalized with PEP 503 rules
//! ([`crate::knowledge::version::normalize_name`]: `Flash_Attn` = `flash-attn`); versions are compared with PEP 440 semantics by
//! `pep440_rs`.

use std::collections::BTreeMap;
use std::str::FromStr;

use pep440_rs::Version;
use serde::Serialize;

use crate::knowledge::version::normalize_name;

/// Where a fact was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Origin {
    /// The report's name (a file, `<log>`, or the command that printed it).
    pub source: String,
    /// 1-based line in that report; 0 when the whole report is one value.
    pub line: usize,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}", self.source, self.line)
        } else {
            f.write_str(&self.source)
        }
    }
}

/// A single valued fact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fact {
    pub value: String,
    pub origin: Origin,
}

/// One installed distribution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Package {
    /// The name as the report spelt it.
    pub name: String,
    pub version: String,
    /// `pip show` Requires (names); `None` when no `pip show` covered this package.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requires: Option<Vec<String>>,
    /// `pip show` Required-by (names): the installed packages that depend on it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required_by: Option<Vec<String>>,
    pub origin: Origin,
}

impl Package {
    /// The PEP 440 version, when the text is one.
    pub fn parsed(&self) -> Option<Version> {
        Version::from_str(self.version.trim()).ok()
    }
}

/// One GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Gpu {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    pub name: String,
    /// Compute capability, `major.minor` (`12.0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capability: Option<String>,
    pub origin: Origin,
}

/// Everything known about one environment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// By normalized name.
    pub packages: BTreeMap<String, Package>,
    /// A complete package list was seen (pip list/freeze/json, collect_env's libraries).
    pub has_package_list: bool,
    /// The CUDA version PyTorch was built with (`CUDA used to build PyTorch`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torch_cuda: Option<Fact>,
    /// The CUDA runtime/toolkit on the machine (`CUDA runtime version`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_runtime: Option<Fact>,
    /// The NVIDIA driver version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<Fact>,
    /// The newest CUDA the driver supports (`nvidia-smi`'s `CUDA Version`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_cuda: Option<Fact>,
    /// The architectures PyTorch was compiled for (`sm_90`, `compute_90`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arch_list: Option<(Vec<String>, Origin)>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<Gpu>,
    /// The reports recognized, in order (`pip list at env.txt:1`).
    pub reports: Vec<String>,
}

impl Facts {
    pub fn is_empty(&self) -> bool {
        self.reports.is_empty()
            && self.packages.is_empty()
            && self.torch_cuda.is_none()
            && self.cuda_runtime.is_none()
            && self.driver.is_none()
            && self.driver_cuda.is_none()
            && self.arch_list.is_none()
            && self.gpus.is_empty()
    }

    pub fn package(&self, name: &str) -> Option<&Package> {
        self.packages.get(&normalize_name(name))
    }

    /// Records an installed package; a later report of the same package replaces the
    /// version and keeps what `pip show` told about its dependencies.
    pub fn add_package(&mut self, name: &str, version: &str, origin: Origin) {
        let key = normalize_name(name);
        let version = version.trim().to_string();
        match self.packages.get_mut(&key) {
            Some(p) => {
                p.version = version;
                p.origin = origin;
            }
            None => {
                self.packages.insert(
                    key,
                    Package {
                        name: name.trim().to_string(),
                        version,
                        requires: None,
                        required_by: None,
                        origin,
                    },
                );
            }
        }
    }

    /// Records `pip show` dependency fields of a package already added.
    pub fn set_dependencies(
        &mut self,
        name: &str,
        requires: Option<Vec<String>>,
        required_by: Option<Vec<String>>,
    ) {
        if let Some(p) = self.packages.get_mut(&normalize_name(name)) {
            if requires.is_some() {
                p.requires = requires;
            }
            if required_by.is_some() {
                p.required_by = required_by;
            }
        }
    }

    /// Adds or completes a GPU (matched by index, else by name).
    pub fn add_gpu(&mut self, gpu: Gpu) {
        let same = self.gpus.iter_mut().find(|g| match (g.index, gpu.index) {
            (Some(a), Some(b)) => a == b,
            _ => g.name == gpu.name || g.name.starts_with(gpu.name.trim_end_matches("...")),
        });
        match same {
            Some(g) => {
                if gpu.capability.is_some() {
                    g.capability = gpu.capability;
                }
                if g.name.ends_with("...") || g.name.len() < gpu.name.len() {
                    g.name = gpu.name;
                }
            }
            None => self.gpus.push(gpu),
        }
    }

    /// Every fact of `other` added over these (the later report wins).
    pub fn merge(&mut self, other: Facts) {
        for (_, p) in other.packages {
            let (req, by) = (p.requires.clone(), p.required_by.clone());
            self.add_package(&p.name, &p.version, p.origin);
            self.set_dependencies(&p.name, req, by);
        }
        self.has_package_list |= other.has_package_list;
        macro_rules! take {
            ($f:ident) => {
                if other.$f.is_some() {
                    self.$f = other.$f;
                }
            };
        }
        take!(torch_cuda);
        take!(cuda_runtime);
        take!(driver);
        take!(driver_cuda);
        take!(arch_list);
        for g in other.gpus {
            self.add_gpu(g);
        }
        for r in other.reports {
            if !self.reports.contains(&r) {
                self.reports.push(r);
            }
        }
    }

    /// The CUDA version PyTorch was built with: `CUDA used to build PyTorch`, else the
    /// `+cuXYZ` local label of the torch package.
    pub fn torch_cuda_version(&self) -> Option<(String, Origin)> {
        if let Some(f) = &self.torch_cuda {
            return Some((f.value.clone(), f.origin.clone()));
        }
        let t = self.package("torch")?;
        let local = t.version.split_once('+')?.1;
        let digits = local.strip_prefix("cu")?;
        if digits.len() < 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let (major, minor) = digits.split_at(digits.len() - 1);
        Some((format!("{major}.{minor}"), t.origin.clone()))
    }

    /// The value of a template variable `env.…` (see [`super::vars`] and [`crate::knowledge::vars`]).
    pub fn lookup(&self, var: &str) -> Option<String> {
        let rest = var.strip_prefix("env.")?;
        let list = |v: &Option<Vec<String>>| -> Option<String> {
            v.as_ref().filter(|v| !v.is_empty()).map(|v| v.join(", "))
        };
        if let Some(name) = rest.strip_prefix("packages.") {
            return self.package(name).map(|p| p.version.clone());
        }
        if let Some(name) = rest.strip_prefix("required_by.") {
            return self.package(name).and_then(|p| list(&p.required_by));
        }
        if let Some(name) = rest.strip_prefix("requires.") {
            return self.package(name).and_then(|p| list(&p.requires));
        }
        match rest {
            "driver" => self.driver.as_ref().map(|f| f.value.clone()),
            "driver_cuda" => self.driver_cuda.as_ref().map(|f| f.value.clone()),
            "torch_cuda" => self.torch_cuda_version().map(|(v, _)| v),
            "cuda_runtime" => self.cuda_runtime.as_ref().map(|f| f.value.clone()),
            "gpu" => self.gpus.first().map(|g| g.name.clone()),
            "gpu_capability" => self.gpus.iter().find_map(|g| g.capability.clone()),
            "gpu_sm" => self
                .gpus
                .iter()
                .find_map(|g| g.capability.as_deref().map(|c| c.replace('.', ""))),
            "arch_list" => self.arch_list.as_ref().map(|(v, _)| v.join(" ")),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torch_cuda_from_local_label() {
        let mut f = Facts::default();
        f.add_package("torch", "2.5.1+cu124", Origin::default());
        assert_eq!(f.torch_cuda_version().map(|x| x.0), Some("12.4".into()));
        f.add_package("torch", "2.8.0+cu128", Origin::default());
        assert_eq!(f.lookup("env.torch_cuda"), Some("12.8".into()));
        f.add_package("torch", "2.8.0", Origin::default());
        assert_eq!(f.lookup("env.torch_cuda"), None);
    }
}
