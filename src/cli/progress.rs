//! A progress bar on standard error for a large input (over [`LARGE_INPUT`] bytes), drawn
//! only when standard error is a terminal: never when it is piped or redirected.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

use crate::engine::ingest::{IngestError, LineReader, Source};

/// Inputs larger than this (bytes on disk) get a bar.
pub const LARGE_INPUT: u64 = 50 << 20;

/// Opens an input; a large file read for a terminal comes with its bar (finish it with
/// `finish_and_clear` once the input is read).
pub fn open(s: &Source) -> Result<(LineReader, Option<ProgressBar>), IngestError> {
    let Source::Path(p) = s else {
        return Ok((LineReader::open(s)?, None));
    };
    let size = std::fs::metadata(p)
        .ok()
        .filter(|m| m.is_file())
        .map_or(0, |m| m.len());
    if size <= LARGE_INPUT || !std::io::stderr().is_terminal() {
        return Ok((LineReader::open(s)?, None));
    }
    let file = std::fs::File::open(p).map_err(|source| IngestError::Open {
        path: s.name(),
        source,
    })?;
    let pb = ProgressBar::new(size);
    if let Ok(style) = ProgressStyle::with_template(
        "{prefix} [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec} {eta}",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_prefix(s.name());
    let r = LineReader::from_reader(Box::new(pb.wrap_read(file)), s.name())?;
    Ok((r, Some(pb)))
}
