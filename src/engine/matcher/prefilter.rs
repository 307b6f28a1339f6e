//! The prefilter: one Aho-Corasick automaton over every atom of the library.
//!
//! Atoms are deduplicated; each maps to the signatures that need it. The automaton is
//! ASCII case-insensitive (atoms are lowercase), so a `(?i)` regex's atoms are found in
//! any case; a case-sensitive regex may be a false-positive candidate, never a miss.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

use crate::engine::extract::shapes;
use crate::env::parse::GATE_LITERALS;

use crate::knowledge::signature::compile::stream_atoms;
use crate::knowledge::signature::{Library, SigIndex};

type AtomSet = crate::knowledge::signature::atoms::AtomSet;

/// `needle` (lowercase) occurs in `hay`, ASCII case-insensitively.
fn contains_ignore_ascii_case(hay: &str, needle: &str) -> bool {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

/// The longest prefix of an atom the automaton holds, in bytes. An atom is a literal a
/// line must contain for its signature to match, so its prefix is one too: the
/// candidates are a superset (the signature's own conditions confirm them), and the
/// automaton keeps one state per distinct prefix instead of one per byte of every long
/// atom's unique tail. Measured on the embedded library (1,128 atoms, 39 bytes on
/// average): 35,206 trie states in full, 17,228 at 24 bytes; the DFA built from them
/// went from 18.2 MB to about half. At 16 bytes (990 distinct prefixes) the DFA is
/// 5.3 MB (8.9 at 24), the NFA a run starts with builds in 3.0 ms instead of 5.4, and
/// neither the corpus nor the throughput on the generated 100 MB logs changed.
pub const MAX_ATOM_BYTES: usize = 16;

/// `atom` cut to at most [`MAX_ATOM_BYTES`] bytes, at a character boundary.
fn atom_prefix(atom: &str) -> &str {
    let mut end = atom.len().min(MAX_ATOM_BYTES);
    while !atom.is_char_boundary(end) {
        end -= 1;
    }
    &atom[..end]
}

pub struct Prefilter {
    /// The atoms, then the literals extraction acts on ([`shapes::message_literals`]) and
    /// those the environment scanner's gate looks for ([`GATE_LITERALS`]): one automaton
    /// serves the matcher (pattern ids below `atoms`) and the pipeline's
    /// fast path (all of them).
    patterns: Arc<Vec<String>>,
    atoms: usize,
    /// Built at once (cheap to build, about half the speed of the DFA).
    nfa: AhoCorasick,
    /// Built by [`Prefilter::upgrade`] or [`Prefilter::upgrade_in_background`] once an
    /// input proves long enough to repay it (`None` when it cannot be built: the NFA,
    /// which finds the same matches, stays).
    dfa: Arc<OnceLock<Option<AhoCorasick>>>,
    building: Arc<AtomicBool>,
    /// Pattern id → signature indices.
    owners: Vec<Vec<SigIndex>>,
    /// Signature index → the literals its stream key must contain (see
    /// [`crate::knowledge::signature::compile::stream_atoms`]); `None`: any stream.
    stream_gates: Vec<Option<AtomSet>>,
    /// Pattern id → whether some owner takes any stream.
    ungated: Vec<bool>,
}

/// The prefilter's automaton cannot be built (the atoms exceed what Aho-Corasick can
/// hold): an error, never a prefilter that matches nothing.
#[derive(Debug, thiserror::Error)]
#[error("the prefilter automaton over {patterns} atoms and literals cannot be built: {source}")]
pub struct PrefilterError {
    pub patterns: usize,
    pub source: aho_corasick::BuildError,
}

fn automaton(
    patterns: &[String],
    kind: AhoCorasickKind,
) -> Result<AhoCorasick, aho_corasick::BuildError> {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .kind(Some(kind))
        .build(patterns)
}

impl Prefilter {
    /// Builds the automaton over the library's atoms (the contiguous NFA, or the
    /// non-contiguous one when the first is too big).
    pub fn new(lib: &Library) -> Result<Self, PrefilterError> {
        let mut patterns: Vec<String> = Vec::new();
        let mut owners: Vec<Vec<SigIndex>> = Vec::new();
        let mut index = std::collections::HashMap::new();
        for (i, s) in lib.signatures.indexed() {
            for a in s.atoms.iter().map(|a| atom_prefix(a)) {
                let id = *index.entry(a.to_string()).or_insert_with(|| {
                    patterns.push(a.to_string());
                    owners.push(Vec::new());
                    patterns.len() - 1
                });
                if !owners[id].contains(&i) {
                    owners[id].push(i);
                }
            }
        }
        let atoms = patterns.len();
        patterns.extend(shapes::message_literals().map(str::to_string));
        patterns.extend(crate::engine::steps::literals().map(str::to_string));
        patterns.extend(GATE_LITERALS.iter().map(|s| s.to_string()));
        let nfa = automaton(&patterns, AhoCorasickKind::ContiguousNFA)
            .or_else(|_| automaton(&patterns, AhoCorasickKind::NoncontiguousNFA))
            .map_err(|source| PrefilterError {
                patterns: patterns.len(),
                source,
            })?;
        let stream_gates: Vec<Option<AtomSet>> = lib
            .signatures
            .iter()
            .map(|s| stream_atoms(&s.cond))
            .collect();
        let ungated = owners
            .iter()
            .map(|o| o.iter().any(|&s| stream_gates[s.0].is_none()))
            .collect();
        Ok(Prefilter {
            patterns: Arc::new(patterns),
            atoms,
            nfa,
            dfa: Arc::new(OnceLock::new()),
            building: Arc::new(AtomicBool::new(false)),
            owners,
            stream_gates,
            ungated,
        })
    }

    /// Builds the DFA (once): worth it for inputs past a few thousand lines, not for a
    /// short journal, where building it would cost more than the whole scan.
    pub fn upgrade(&self) {
        self.dfa
            .get_or_init(|| automaton(&self.patterns, AhoCorasickKind::DFA).ok());
    }

    /// Builds the DFA on another thread; [`Prefilter::scanner`] switches to it when it
    /// is ready (the NFA finds the same matches meanwhile). Once per prefilter and its
    /// clones; if no thread can be started, the NFA stays.
    pub fn upgrade_in_background(&self) {
        if self.dfa.get().is_some() || self.building.swap(true, Ordering::AcqRel) {
            return;
        }
        let (patterns, dfa) = (Arc::clone(&self.patterns), Arc::clone(&self.dfa));
        let _ = std::thread::Builder::new()
            .name("crashdoc-dfa".into())
            .spawn(move || {
                dfa.get_or_init(|| automaton(&patterns, AhoCorasickKind::DFA).ok());
            });
    }

    /// The automaton over every pattern: atoms (ids below [`Prefilter::atom_count`]),
    /// then extraction's literals.
    pub fn scanner(&self) -> &AhoCorasick {
        match self.dfa.get() {
            Some(Some(d)) => d,
            _ => &self.nfa,
        }
    }

    /// How many of the patterns are atoms.
    pub fn atom_count(&self) -> usize {
        self.atoms
    }

    /// The distinct atoms, in library order.
    pub fn atoms(&self) -> &[String] {
        &self.patterns[..self.atoms]
    }

    /// Whether any atom occurs in the text.
    pub fn any(&self, text: &str) -> bool {
        self.scanner()
            .find_overlapping_iter(text)
            .any(|m| m.pattern().as_usize() < self.atoms)
    }

    /// Adds the signatures whose atoms occur in `text` to `out` (unsorted, may repeat).
    pub fn candidates(&self, text: &str, out: &mut Vec<SigIndex>) {
        for m in self.scanner().find_overlapping_iter(text) {
            if let Some(o) = self.owners.get(m.pattern().as_usize()) {
                out.extend_from_slice(o);
            }
        }
    }

    /// Whether a hit of atom `pattern` on a line of stream `key` can make a candidate
    /// that may be confirmed: false only when every signature owning the atom requires
    /// a stream whose literals `key` lacks.
    pub fn open_for(&self, pattern: usize, key: &str) -> bool {
        if self.ungated.get(pattern).is_none_or(|&u| u) {
            return true;
        }
        self.owners[pattern].iter().any(|&s| {
            self.stream_gates[s.0]
                .as_ref()
                .is_none_or(|g| g.iter().any(|a| contains_ignore_ascii_case(key, a)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_atom_is_held_by_its_prefix_at_a_character_boundary() {
        assert_eq!(atom_prefix("cuda error: "), "cuda error: ");
        assert_eq!(
            atom_prefix("the server socket has failed to listen on any local network address."),
            "the server socke"
        );
        // a multi-byte character across the cut is left out whole
        let a = format!("{}é tail", "x".repeat(MAX_ATOM_BYTES - 1));
        assert_eq!(atom_prefix(&a), "x".repeat(MAX_ATOM_BYTES - 1));
    }

    #[test]
    fn upgrade_switches_the_scanner_to_a_dfa() {
        let lib = crate::knowledge::signature::load(&[
            crate::knowledge::signature::LibrarySource::Builtin,
        ])
        .expect("the embedded library");
        let pf = Prefilter::new(&lib).expect("the automaton");
        assert_eq!(pf.scanner().kind(), AhoCorasickKind::ContiguousNFA);
        pf.upgrade();
        assert_eq!(pf.scanner().kind(), AhoCorasickKind::DFA);
        // atoms are held by their prefix: the DFA stays small
        assert!(
            pf.scanner().memory_usage() < 12 << 20,
            "DFA of {} bytes",
            pf.scanner().memory_usage()
        );
        // atoms first, then extraction's literals: candidates come from atoms only
        assert!(pf.any("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"));
        assert!(!pf.any("Traceback (most recent call last):"));
    }
}
