//! Raise site, crash site and the failing import of a traceback.
//!
//! The *raise site* is the innermost frame. The *crash site* is where the program was
//! when it failed: walking outwards from the raise site, the first frame that is not
//! Python's import machinery, not part of the module being imported, not in the
//! failing dependency's package (the package of the raise site, when it differs from the
//! application's — the package of the outermost frame), and not framework plumbing
//! (path fragments from the library's `frames.yaml`). In the flashinfer scenario that is
//! `deepseek_v2.py:932`, the model constructor line that led to the import, while the
//! raise site is `flashinfer/jit/env.py:58`.

use super::{Failure, Frame};

/// A frame, as reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    pub file: String,
    pub line: u32,
    pub function: String,
    pub source: Option<String>,
    /// The log line of the frame.
    pub log_line: usize,
}

impl Site {
    fn of(f: &Frame) -> Self {
        Site {
            file: f.file.clone(),
            line: f.line,
            function: f.function.clone(),
            source: f.source.clone(),
            log_line: f.log_line,
        }
    }

    /// `deepseek_v2.py:932` — the file name and line.
    pub fn short(&self) -> String {
        let name = self.file.rsplit('/').next().unwrap_or(&self.file);
        format!("{name}:{}", self.line)
    }
}

pub fn is_import_machinery(file: &str) -> bool {
    file.starts_with("<frozen importlib") || file.ends_with("importlib/__init__.py")
}

/// The import path of a file under `site-packages`/`dist-packages` (`flashinfer/jit/env.py`).
fn package_path(file: &str) -> Option<&str> {
    for marker in ["site-packages/", "dist-packages/"] {
        if let Some(i) = file.rfind(marker) {
            return Some(&file[i + marker.len()..]);
        }
    }
    None
}

/// The top-level package of a file, when it lives in an installed package.
pub fn top_package(file: &str) -> Option<String> {
    let p = package_path(file)?;
    let top = p.split('/').next()?;
    Some(top.trim_end_matches(".py").to_string())
}

/// The dotted module name of a file (`flashinfer/__init__.py` → `flashinfer`).
fn module_name(file: &str) -> String {
    let p = package_path(file).unwrap_or_else(|| file.rsplit('/').next().unwrap_or(file));
    let p = p.trim_end_matches(".py");
    let p = p.strip_suffix("/__init__").unwrap_or(p);
    p.replace('/', ".")
}

pub fn locate(failure: &mut Failure, plumbing: &[String]) {
    let Some(exc) = failure.primary() else {
        return;
    };
    let frames = &exc.frames;
    let Some(raise) = frames.last() else {
        return;
    };
    let raise_site = Site::of(raise);
    let dependency = top_package(&raise.file);
    let app = frames.first().and_then(|f| top_package(&f.file));
    let foreign_dependency = dependency.is_some() && dependency != app;

    // The import chain: `<module>` frames after the first import-machinery frame.
    let first_machinery = frames.iter().position(|f| f.import_machinery);
    let mut importing = None;
    if let Some(start) = first_machinery {
        let modules: Vec<&Frame> = frames[start..]
            .iter()
            .filter(|f| !f.import_machinery && f.function == "<module>")
            .collect();
        let pick = modules
            .iter()
            .find(|f| dependency.is_some() && top_package(&f.file) == dependency)
            .or(modules.last());
        importing = pick.map(|f| module_name(&f.file));
    }

    let mut crash = None;
    for (i, f) in frames.iter().enumerate().rev() {
        if f.import_machinery {
            continue;
        }
        if first_machinery.is_some_and(|s| i > s) && f.function == "<module>" {
            continue;
        }
        if foreign_dependency && top_package(&f.file) == dependency {
            continue;
        }
        if plumbing.iter().any(|p| f.file.contains(p.as_str())) {
            continue;
        }
        crash = Some(Site::of(f));
        break;
    }
    failure.crash_site = crash.or_else(|| Some(raise_site.clone()));
    failure.raise_site = Some(raise_site);
    failure.importing = importing;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packages_and_modules() {
        let f = "/opt/vllm/.venv/lib/python3.12/site-packages/flashinfer/jit/env.py";
        assert_eq!(top_package(f).as_deref(), Some("flashinfer"));
        assert_eq!(
            module_name("/x/site-packages/flashinfer/__init__.py"),
            "flashinfer"
        );
        assert_eq!(
            module_name("/x/site-packages/vllm/v1/attention/backends/mla/flashinfer_mla.py"),
            "vllm.v1.attention.backends.mla.flashinfer_mla"
        );
        assert!(is_import_machinery("<frozen importlib._bootstrap>"));
        assert!(is_import_machinery(
            "/usr/lib/python3.12/importlib/__init__.py"
        ));
        assert_eq!(top_package("/home/u/train.py"), None);
    }
}
