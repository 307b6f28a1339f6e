//! The engine: one input from bytes to a diagnosis. Imports from [`crate::knowledge`] and
//! [`crate::env`] only; its stages depend one way, in this order:
//!
//! [`ingest`] → [`normalize`] → [`rejoin`] → [`steps`] → [`extract`] → [`matcher`] → [`rank`] →
//! [`infer`], [`remedy`] → [`findings`] → [`diagnosis`] → [`pipeline`] (which wires them for
//! one input).

pub mod ingest;

pub mod normalize;

/// Lines cut at a fixed width put back together (read before [`normalize`] in the
/// pipeline; it uses [`normalize`] to tell a new record from a continuation).
pub mod rejoin;

/// Where a CI step ends and whether it failed; the failing block of lines.
pub mod steps;

pub mod extract;

pub mod matcher;

pub mod rank;

pub mod infer;
pub mod remedy;

pub mod findings;

pub mod diagnosis;

pub mod pipeline;

/// Builds the engine's own regexes and automata (the steps tracker's, the shape
/// classifiers', the cause linker's) on a thread of their own, while the caller loads the
/// library: on a short journal their construction was about a third of the run
/// (callgrind: 91 M of 233 M instructions on the scenario journal), built one by one at
/// the first line that needed each. Each is a [`normalize::Prebuilt`]: what is built is the
/// same whichever thread builds it, and the scan never waits for this thread (a line that
/// needs one not built yet builds it itself). The thread is not joined: at exit, whatever
/// it has not finished does not matter.
pub fn warm_up_in_background() {
    let _ = std::thread::Builder::new()
        .name("warm-up".into())
        .spawn(|| {
            steps::warm_up();
            extract::warm_up();
        });
}
