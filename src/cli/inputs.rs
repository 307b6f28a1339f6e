//! The inputs named on the command line, as ripgrep takes them: files, `-` for standard
//! input, and directories (their `*.log`, `*.txt` and `*.gz` files, recursively, in
//! name order). A name that cannot be used is reported and the others are still read.

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use crate::engine::ingest::Source;

/// How deep a directory given as input is searched.
pub const MAX_DEPTH: usize = 32;

/// The file name endings read from a directory given as input.
pub const LOG_EXTENSIONS: [&str; 3] = ["log", "txt", "gz"];

/// What the command line names: the inputs to read, and the names that cannot be read
/// (each a message; the command goes on and exits 2 at the end).
#[derive(Debug, Default)]
pub struct Inputs {
    pub sources: Vec<Source>,
    pub errors: Vec<String>,
}

impl Inputs {
    /// Expands the arguments; nothing named means standard input (an error on a terminal).
    pub fn expand(files: &[String]) -> Inputs {
        let mut out = Inputs::default();
        if files.is_empty() {
            if std::io::stdin().is_terminal() {
                out.errors.push(
                    "no input: give a log file or a folder, or pipe one in (journalctl -u UNIT | crashdoc)"
                        .to_string(),
                );
            } else {
                out.sources.push(Source::Stdin);
            }
            return out;
        }
        for f in files {
            let p = Path::new(f);
            if f != "-" && p.is_dir() {
                out.add_dir(p);
            } else {
                out.sources.push(Source::parse(f));
            }
        }
        out
    }

    fn add_dir(&mut self, dir: &Path) {
        let before = self.sources.len();
        let mut seen = BTreeSet::new();
        walk(dir, 0, &mut seen, self);
        if self.sources.len() == before {
            self.errors.push(format!(
                "{}: is a directory with no log file in it (*.log, *.txt, *.gz)",
                dir.display()
            ));
        }
    }
}

fn is_log(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| LOG_EXTENSIONS.iter().any(|x| e.eq_ignore_ascii_case(x)))
}

/// Depth-first, in name order; a directory already visited (a symlink loop) is skipped,
/// and so is anything deeper than [`MAX_DEPTH`].
fn walk(dir: &Path, depth: usize, seen: &mut BTreeSet<PathBuf>, out: &mut Inputs) {
    let Ok(canon) = dir.canonicalize() else {
        out.errors
            .push(format!("{}: cannot open the directory", dir.display()));
        return;
    };
    if !seen.insert(canon) {
        return;
    }
    if depth > MAX_DEPTH {
        out.errors.push(format!(
            "{}: deeper than {MAX_DEPTH} directories, not searched",
            dir.display()
        ));
        return;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => {
            out.errors
                .push(format!("{}: cannot read the directory: {e}", dir.display()));
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            walk(&p, depth + 1, seen, out);
        } else if is_log(&p) {
            out.sources.push(Source::Path(p));
        }
    }
}
