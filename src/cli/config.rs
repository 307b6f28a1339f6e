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
//!
//! A config chooses the commands crashdoc prints, so it is found the way git finds a
//! repository, with git's lessons (CVE-2022-24765): the search goes up from the current
//! folder and stops at the first folder that is a repository's root (holds `.git`) or is
//! `$HOME` — never into `/tmp` or `/` above them; a file another user owns (root
//! excepted) or that others could write is ignored, with a warning, and the search stops
//! there ([`crate::knowledge::files::check_trusted`], checked on the opened file).
//! `--no-config` or a non-empty `CRASHDOC_NO_CONFIG` turns discovery off. An invalid
//! file is an error for the commands that read it, never for `--version`, `--help`,
//! `completions`, `man` or `schema`.

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
    /// A file found and not read, and why (said as a warning).
    pub ignored: Option<String>,
    pub signatures: Vec<PathBuf>,
    pub format: Option<&'static str>,
    pub top: Option<usize>,
}

static CURRENT: OnceLock<Result<Config, String>> = OnceLock::new();

impl Config {
    /// The configuration of the current directory (read once); an unreadable or
    /// invalid file is an error.
    /// `off` (`--no-config`, `CRASHDOC_NO_CONFIG`): no file is looked for.
    pub fn load_current(off: bool) -> &'static Result<Config, String> {
        CURRENT.get_or_init(|| {
            if off || std::env::var_os(NO_CONFIG_ENV).is_some_and(|v| !v.is_empty()) {
                return Ok(Config::default());
            }
            let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
            let home = std::env::var_os("HOME").map(PathBuf::from);
            match find_upward(&cwd, home.as_deref()) {
                Some(p) => Config::read(&p),
                None => Ok(Config::default()),
            }
        })
    }

    /// The configuration in effect (empty when the file is invalid: `run` has already
    /// refused to go on then).
    pub fn current() -> Config {
        CURRENT
            .get()
            .and_then(|c| c.clone().ok())
            .unwrap_or_default()
    }

    /// Reads one file; a file [`crate::knowledge::files::check_trusted`] refuses is
    /// not read (an empty config, whose `ignored` says why).
    pub fn read(path: &Path) -> Result<Config, String> {
        use crate::knowledge::files::{read_trusted, ReadError, MAX_SMALL_FILE_BYTES};
        let name = path.display();
        // the entry itself first (a symlink, a folder or a dangling link another user put
        // in a parent folder is theirs: ignored, never an error that stops every run)
        let planted = std::fs::symlink_metadata(path)
            .map_err(|e| e.to_string())
            .and_then(|m| crate::knowledge::files::check_owner(&m));
        if let Err(why) = planted {
            return Ok(Config {
                ignored: Some(format!("{name} is not read: {why}")),
                ..Config::default()
            });
        }
        let bytes = match read_trusted(path, MAX_SMALL_FILE_BYTES) {
            Ok(b) => b,
            Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                return Ok(Config {
                    ignored: Some(format!("{name} is not read: {e}")),
                    ..Config::default()
                })
            }
            Err(e) => return Err(format!("{name}: {e}")),
        };
        let text = String::from_utf8(bytes).map_err(|e| {
            format!(
                "{name}: not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            )
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        let at = |span: Option<std::ops::Range<usize>>| located(&name.to_string(), &text, span);
        let file: File = toml::from_str(&text).map_err(|e| at(e.span()) + e.message())?;
        let format =
            match file.format {
                None => None,
                Some(f) => Some(FORMATS.into_iter().find(|x| *x == f.get_ref()).ok_or_else(
                    || {
                        at(Some(f.span()))
                            + &format!("format = {:?}: one of {}", f.get_ref(), FORMATS.join(", "))
                    },
                )?),
            };
        let top = match file.top {
            None => None,
            Some(t) => Some(
                usize::try_from(*t.get_ref())
                    .ok()
                    .filter(|n| *n >= 1)
                    .ok_or_else(|| at(Some(t.span())) + "top must be a whole number, at least 1")?,
            ),
        };
        Ok(Config {
            path: Some(path.to_path_buf()),
            ignored: None,
            signatures: file.signatures.iter().map(|s| base.join(s)).collect(),
            format,
            top,
        })
    }
}

/// What `crashdoc.toml` may hold: an unknown key is an error naming it, located.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// Folders, relative to the file.
    #[serde(default)]
    signatures: Vec<String>,
    format: Option<toml::Spanned<String>>,
    top: Option<toml::Spanned<i64>>,
}

/// `FILE:LINE:COLUMN: ` of a byte span of `text` (`FILE: ` when there is none).
fn located(name: &str, text: &str, span: Option<std::ops::Range<usize>>) -> String {
    let Some(at) = span.map(|s| s.start.min(text.len())) else {
        return format!("{name}: ");
    };
    let before = text.get(..at).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("{name}:{line}:{column}: ")
}

/// The environment variable that turns config discovery off (any non-empty value).
pub const NO_CONFIG_ENV: &str = "CRASHDOC_NO_CONFIG";

/// `crashdoc.toml` in `dir` or its nearest parent, searching no higher than the first
/// folder that is a repository's root (holds `.git`) or is `home`.
pub fn find_upward(dir: &Path, home: Option<&Path>) -> Option<PathBuf> {
    for d in dir.ancestors() {
        let p = d.join(FILE_NAME);
        if std::fs::symlink_metadata(&p).is_ok() {
            return Some(p);
        }
        if Some(d) == home || d.join(".git").exists() {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_file_line_and_column() {
        let t = tempfile::tempdir().expect("tmp");
        let p = t.path().join(FILE_NAME);
        let cases = [
            (
                "top = 3\nformat = \"yaml\"\n",
                ":2:10: format = \"yaml\": one of text",
            ),
            ("top = 0\n", ":1:7: top must be a whole number, at least 1"),
            ("\nsignature = [\"x\"]\n", ":2:1: unknown field `signature`"),
            ("signatures = [\n", ":1:"),
        ];
        for (text, want) in cases {
            std::fs::write(&p, text).expect("write");
            let e = Config::read(&p).expect_err(text);
            assert!(e.contains(want), "{text:?}: {e}");
        }
        std::fs::write(&p, "signatures = [\"a\"]\nformat = \"json\"\ntop = 5\n").expect("write");
        let c = Config::read(&p).expect("valid");
        assert_eq!((c.format, c.top), (Some("json"), Some(5)));
        assert_eq!(c.signatures, [t.path().join("a")]);
    }

    #[test]
    fn discovery_stops_at_the_repository_root_and_at_home() {
        let t = tempfile::tempdir().expect("tmp");
        let top = t.path();
        std::fs::write(top.join(FILE_NAME), "top = 1\n").expect("write");
        let repo = top.join("repo");
        let deep = repo.join("a/b");
        std::fs::create_dir_all(&deep).expect("mkdir");
        assert_eq!(find_upward(&deep, None), Some(top.join(FILE_NAME)));
        assert_eq!(find_upward(&deep, Some(&repo)), None);
        std::fs::create_dir(repo.join(".git")).expect("mkdir");
        assert_eq!(find_upward(&deep, None), None);
        std::fs::write(repo.join(FILE_NAME), "top = 2\n").expect("write");
        assert_eq!(find_upward(&deep, None), Some(repo.join(FILE_NAME)));
    }
}
