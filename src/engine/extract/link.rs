//! Deduplication across streams, and the order of a crash: first failure, consequences.
//!
//! The consequence shapes below are generic phrases with which programs say that the
//! error they report is the effect of another one printed earlier ("See root cause
//! above", "initialization failed", a worker "was terminated", a launcher's
//! `ChildFailedError`, systemd's exit lines). Knowledge of *which* cause a consequence
//! follows lives in the signatures (`consequence_of`); extraction only reads the order
//! the log shows.

use regex::Regex;

use super::{Failure, FailureKind};
use crate::engine::normalize::Prebuilt;

/// Builds this module's regexes now ([`crate::engine::warm_up_in_background`]).
pub fn warm_up() {
    Prebuilt::force(&CONSEQUENCE);
    Prebuilt::force(&WRAPPER);
    Prebuilt::force(&VOLATILE);
}

static CONSEQUENCE: Prebuilt<Regex> = Prebuilt::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(
        r"(?i)see root cause above|see stack trace for root cause|initialization failed|failed to start|was terminated|died unexpectedly|ChildFailedError|CalledProcessError|returned non-zero exit status|EngineDeadError|EngineCore encountered an issue|worker (?:process )?(?:died|exited)|process group watchdog thread terminated|taking the entire process down|exits with return code|exited with code",
    )
    .expect("built-in consequence regex")
});

static WRAPPER: Prebuilt<Regex> = Prebuilt::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(r"(?i)look up to see its traceback|because of the following error|see root cause above|see stack trace for root cause|see above for")
        .expect("built-in wrapper regex")
});

static VOLATILE: Prebuilt<Regex> = Prebuilt::new(|| {
    #[allow(clippy::expect_used)]
    Regex::new(r"0x[0-9a-fA-F]+|[0-9]+").expect("built-in volatile regex")
});

pub fn is_wrapper(message: &str) -> bool {
    WRAPPER.is_match(message)
}

pub fn is_consequence_shape(f: &Failure) -> bool {
    if f.kind == FailureKind::Systemd {
        return true;
    }
    if !f.chain.is_empty() && f.chain.iter().all(|e| e.wrapper) {
        return true;
    }
    CONSEQUENCE.is_match(&f.headline)
        || f.preamble
            .as_deref()
            .is_some_and(|p| CONSEQUENCE.is_match(p))
            && f.chain
                .iter()
                .all(|e| e.wrapper || CONSEQUENCE.is_match(&e.headline()))
}

/// What makes two failures the same: kind, exception type, message with numbers
/// blanked, and the raise site.
pub fn dedup_key(f: &Failure) -> String {
    let site = f
        .raise_site
        .as_ref()
        .map(|s| format!("{}:{}", s.file, s.line))
        .unwrap_or_default();
    let head = VOLATILE.replace_all(&f.headline, "#");
    format!("{}|{}|{}", f.kind.as_str(), head, site)
}

/// Merges `other` (the same failure in another stream, or again) into `into`, listing at
/// most `budget` more occurrences (what is left of the input's
/// [`super::MAX_TOTAL_OCCURRENCES`]). The content kept is that of the earliest
/// occurrence.
pub fn merge(into: &mut Failure, mut other: Failure, budget: usize) {
    if other.first.line < into.first.line {
        std::mem::swap(into, &mut other);
    }
    // bounded: the count keeps the total
    let room = super::MAX_OCCURRENCES
        .saturating_sub(into.occurrences.len())
        .min(budget);
    other.occurrences.truncate(room);
    into.occurrences.append(&mut other.occurrences);
    into.count += other.count;
}

/// Marks the first failure of each attempt and links the consequences after it.
pub fn link_attempts(failures: &mut [Failure]) {
    let mut i = 0;
    while i < failures.len() {
        let attempt = failures[i].attempt;
        let end = failures[i..]
            .iter()
            .position(|f| f.attempt != attempt)
            .map_or(failures.len(), |n| i + n);
        let span = &mut failures[i..end];
        let root = span
            .iter()
            .position(|f| !f.consequence_shape && f.kind != FailureKind::Warning)
            .or_else(|| span.iter().position(|f| f.kind != FailureKind::Warning));
        if let Some(r) = root {
            span[r].first_in_attempt = true;
            let root_id = span[r].id;
            for f in span.iter_mut().skip(r + 1) {
                if f.consequence_shape {
                    f.consequence_of = Some(root_id);
                }
            }
        }
        i = end;
    }
}
