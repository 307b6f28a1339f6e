//! Team setup: `crashdoc.toml`, found in the current directory or the nearest parent
//! (as `typos.toml` or `.semgrep.yml` are):
//!
//! ```toml
//! signatures = ["ops/crashdoc-signatures"]   # folders, relative to this file
//! format = "markdown"                        # the default --format of diagnose
//! top = 5                                    # the default --top
//! ```
//!
//! Command-line options win over the file; `CRASHDOC_SIGNATURES` folders come first.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The file's name.
pub const FILE_NAME: &str = "crashdoc.toml";

/// The diagnose formats a config may name.
const FORMATS: [&str; 6] = ["text", "json", "markdown", "sarif", "github", "jsonl"];

#[derive(Debug, Clone, Default)]
pub struct Config {
    /// The file read, when one was found.
    pub path: Option<PathBuf>,
    pub signatures: Vec<PathBuf>,
    pub format: Option<&'static str>,
    pub top: Option<usize>,
}

static CURRENT: OnceLock<Result<Config, String>> = OnceLock::new();

impl Config {
    /// The configuration of the current directory (read once); an unreadable or
    /// invalid file is an error.
    pub fn load_current() -> &'static Result<Config, String> {
        CURRENT.get_or_init(|| {
            let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
            match find_upward(&cwd) {
                Some(p) => Config::read(&p),
                None => Ok(Config::default()),
            }
        })
    }

    /// The configuration in effect (empty when the file is invalid: `run` has already
    /// refused to go on then).
    pub fn current() -> Config {
        Config::load_current().clone().unwrap_or_default()
    }

    /// Reads one file.
    pub fn read(path: &Path) -> Result<Config, String> {
        let name = path.display();
        let text =
            crate::knowledge::files::read_text(path, crate::knowledge::files::MAX_SMALL_FILE_BYTES)
                .map_err(|e| format!("{name}: {e}"))?;
        let doc: toml_edit::DocumentMut = text.parse().map_err(|e| format!("{name}: {e}"))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let mut c = Config {
            path: Some(path.to_path_buf()),
            ..Config::default()
        };
        for (key, item) in doc.iter() {
            match key {
                "signatures" => c.signatures = folders(item, base, &name.to_string())?,
                "format" => {
                    let f = item.as_str().unwrap_or_default();
                    c.format = Some(FORMATS.into_iter().find(|x| *x == f).ok_or_else(|| {
                        format!("{name}: format = {f:?}: one of {}", FORMATS.join(", "))
                    })?);
                }
                "top" => match item.as_integer() {
                    Some(n) if n >= 1 => c.top = usize::try_from(n).ok(),
                    _ => return Err(format!("{name}: top must be a whole number, at least 1")),
                },
                other => {
                    return Err(format!(
                        "{name}: unknown key {other:?} (known: signatures, format, top)"
                    ))
                }
            }
        }
        Ok(c)
    }
}

fn folders(item: &toml_edit::Item, base: &Path, name: &str) -> Result<Vec<PathBuf>, String> {
    let arr = item
        .as_array()
        .ok_or_else(|| format!("{name}: signatures must be a list of folders"))?;
    arr.iter()
        .map(|v| {
            v.as_str()
                .map(|s| base.join(s))
                .ok_or_else(|| format!("{name}: signatures must be a list of folders"))
        })
        .collect()
}

/// `crashdoc.toml` in `dir` or its nearest parent.
pub fn find_upward(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .map(|d| d.join(FILE_NAME))
        .find(|p| p.is_file())
}
