//! The inputs named on the command line, as ripgrep takes them: files, `-` for standard
//! input, and directories (their `*.log`, `*.txt`, `*.out`, `*.err`, `*.md` and `*.gz`
//! files, recursively, in name order: Slurm writes `slurm-N.out`, schedulers and
//! `nohup` `.out`/`.err`, an issue paste is Markdown). A name that cannot be used is reported and the others are still read.

use std::io::IsTerminal;
use std::path::Path;

use crate::engine::ingest::Source;
use crate::knowledge::files;

/// How deep a directory given as input is searched.
pub const MAX_DEPTH: usize = files::MAX_DEPTH;

/// The file name endings read from a directory given as input.
pub const LOG_EXTENSIONS: [&str; 6] = ["log", "txt", "out", "err", "md", "gz"];

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
        let w = files::walk(dir, &is_log);
        for (p, e) in w.errors {
            self.errors.push(format!("{}: {e}", shown(&p)));
        }
        self.sources.extend(w.files.into_iter().map(Source::Path));
        if self.sources.len() == before {
            self.errors.push(format!(
                "{}: is a directory with no log file in it (*.log, *.txt, *.out, *.err, *.md, *.gz)",
                shown(dir)
            ));
        }
    }
}

fn is_log(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| LOG_EXTENSIONS.iter().any(|x| e.eq_ignore_ascii_case(x)))
}

/// A path as an error message shows it (control, bidi and zero-width characters escaped).
fn shown(p: &Path) -> String {
    crate::knowledge::text::escape_control(&p.display().to_string())
}
