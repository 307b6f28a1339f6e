//! Replaying a corpus in parallel.
//!
//! Incidents are independent, so they run on rayon's pool. The [`Compiled`] library
//! (signatures, regexes, the prefilter automaton) is immutable and `Sync`, so every
//! worker borrows the same one; an [`Engine`] (a scan's mutable state) is cheap to make
//! and each rayon job makes its own (`map_init`). Results come back in the corpus's
//! order whatever the scheduling, so a run is deterministic.

use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use rayon::prelude::*;

use super::score::{CorpusReport, IncidentResult};
use super::seen::{is_seen, ExampleText};
use super::{evaluate, Incident};
use crate::engine::matcher::{Compiled, EngineKind};
use crate::engine::pipeline::Engine;

/// A run: the scored report and how long each incident took (same order as
/// `report.incidents`; kept apart so the report stays deterministic).
#[derive(Debug, Clone)]
pub struct Run {
    pub report: CorpusReport,
    pub durations: Vec<(String, Duration)>,
    pub total: Duration,
}

/// Diagnoses every incident and scores the run. `progress` is advanced once per
/// incident (pass [`ProgressBar::hidden`] when nothing should be drawn).
pub fn run_corpus(
    compiled: &Compiled<'_>,
    kind: EngineKind,
    incidents: &[Incident],
    progress: &ProgressBar,
) -> Run {
    let start = Instant::now();
    let examples = ExampleText::of(compiled.library);
    let results: Vec<(IncidentResult, Duration)> = incidents
        .par_iter()
        .map_init(
            || Engine::new(compiled, kind),
            |engine, inc| {
                let t = Instant::now();
                let r = match evaluate(engine, inc) {
                    Ok((o, d)) => {
                        let mut r = IncidentResult::new(inc, &o, &d);
                        r.seen = is_seen(
                            &examples,
                            inc.expected.signature.as_deref(),
                            inc.expected.key_line.as_deref(),
                            &d,
                        );
                        r
                    }
                    Err(e) => IncidentResult::failed(inc, e.to_string()),
                };
                progress.inc(1);
                (r, t.elapsed())
            },
        )
        .collect();
    progress.finish_and_clear();
    let durations = results.iter().map(|(r, d)| (r.name.clone(), *d)).collect();
    let report = CorpusReport::new(
        compiled.library,
        results.into_iter().map(|(r, _)| r).collect(),
    );
    Run {
        report,
        durations,
        total: start.elapsed(),
    }
}
