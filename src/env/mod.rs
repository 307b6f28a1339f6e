//! The environment: facts about the installed packages, the GPU and the driver, read
//! from reports, and conditions on them.
//!
//! - [`facts`]: the typed facts, each with where it was read;
//! - [`parse`]: reports (pip, collect_env, nvidia-smi) into facts, line by line, so that
//!   reports inside a log are recognized as the log streams;
//! - [`eval`]: conditions on facts ([`crate::knowledge::cond`]) evaluated, three-valued
//!   (true, false, unknown), for signatures and compatibility rules;
//! - [`vars`]: `{{env.…}}` template variables filled from facts;
//! - [`collect`]: read-only collection on this machine (`pip list`, `nvidia-smi`).

pub mod collect;
pub mod eval;
pub mod facts;
pub mod parse;
pub mod vars;

pub use facts::{Facts, Origin};
pub use parse::{parse_text, Scanner};

/// Reading an environment report failed.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: no environment report recognised (expected pip list/freeze/show, collect_env or nvidia-smi output)")]
    Empty { path: String },
}

/// Reads one `--env FILE` (lossy UTF-8; `-` is not accepted: the log owns stdin).
pub fn read_env_file(path: &std::path::Path) -> Result<Facts, EnvError> {
    let name = path.display().to_string();
    let bytes =
        crate::knowledge::files::read_capped(path, crate::knowledge::files::MAX_SMALL_FILE_BYTES)
            .map_err(std::io::Error::from)
            .map_err(|source| EnvError::Read {
                path: name.clone(),
                source,
            })?;
    let text = String::from_utf8_lossy(&bytes);
    let f = parse_text(&name, &text);
    if f.is_empty() {
        return Err(EnvError::Empty { path: name });
    }
    Ok(f)
}
