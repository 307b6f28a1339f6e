//! Replaying a corpus in parallel.
//!
//! Incidents are independent, so they run on rayon's pool. The compiled [`Library`] is
//! immutable and `Sync`, so every worker borrows the same one; an [`Engine`] is not
//! shareable (its matcher keeps scratch buffers) and building one (the prefilter's DFA)
//! costs more than diagnosing a typical log, so there is exactly one per pool thread,
//! built in parallel up front and picked by `rayon::current_thread_index` (its mutex
//! is never contended: a thread only takes its own). Results come back in the corpus's
//! order whatever the scheduling, so a run is deterministic.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use rayon::prelude::*;

use super::score::{CorpusReport, IncidentResult};
use super::seen::{is_seen, ExampleText};
use super::{evaluate, Incident};
use crate::engine::matcher::EngineKind;
use crate::engine::pipeline::Engine;
use crate::knowledge::signature::Library;

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
    lib: &Library,
    kind: EngineKind,
    incidents: &[Incident],
    progress: &ProgressBar,
) -> Run {
    let start = Instant::now();
    let threads = rayon::current_num_threads().min(incidents.len()).max(1);
    let examples = ExampleText::of(lib);
    let engines: Vec<Mutex<Engine<'_>>> = (0..threads)
        .into_par_iter()
        .map(|_| Mutex::new(Engine::new(lib, kind)))
        .collect();
    let results: Vec<(IncidentResult, Duration)> = incidents
        .par_iter()
        .map(|inc| {
            let t = Instant::now();
            let slot = rayon::current_thread_index().unwrap_or(0) % engines.len();
            // a poisoned lock only means another incident panicked; the engine is
            // still usable (it holds no cross-incident state)
            let mut engine = match engines[slot].lock() {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            let r = match evaluate(&mut engine, inc) {
                Ok((o, d)) => {
                    let mut r = IncidentResult::new(inc, &o, &d);
                    r.seen = is_seen(&examples, inc.expected.key_line.as_deref(), &d);
                    r
                }
                Err(e) => IncidentResult::failed(inc, e.to_string()),
            };
            drop(engine);
            progress.inc(1);
            (r, t.elapsed())
        })
        .collect();
    progress.finish_and_clear();
    let durations = results.iter().map(|(r, d)| (r.name.clone(), *d)).collect();
    let report = CorpusReport::new(lib, results.into_iter().map(|(r, _)| r).collect());
    Run {
        report,
        durations,
        total: start.elapsed(),
    }
}
