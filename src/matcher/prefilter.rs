//! The prefilter: one Aho-Corasick automaton over every atom of the library.
//!
//! Atoms are deduplicated; each maps to the signatures that need it. The automaton is
//! ASCII case-insensitive (atoms are lowercase), so a `(?i)` regex's atoms are found in
//! any case; a case-sensitive regex may be a false-positive candidate, never a miss.

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

use crate::signature::Library;

pub struct Prefilter {
    ac: Option<AhoCorasick>,
    /// Pattern id → signature indices.
    owners: Vec<Vec<usize>>,
    atoms: Vec<String>,
}

impl Prefilter {
    pub fn new(lib: &Library) -> Self {
        let mut atoms: Vec<String> = Vec::new();
        let mut owners: Vec<Vec<usize>> = Vec::new();
        let mut index = std::collections::HashMap::new();
        for (i, s) in lib.signatures.iter().enumerate() {
            for a in &s.atoms {
                let id = *index.entry(a.clone()).or_insert_with(|| {
                    atoms.push(a.clone());
                    owners.push(Vec::new());
                    atoms.len() - 1
                });
                if !owners[id].contains(&i) {
                    owners[id].push(i);
                }
            }
        }
        let ac = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&atoms)
            .or_else(|_| {
                AhoCorasick::builder()
                    .ascii_case_insensitive(true)
                    .match_kind(MatchKind::Standard)
                    .build(&atoms)
            })
            .ok();
        Prefilter { ac, owners, atoms }
    }

    /// The distinct atoms, in library order.
    pub fn atoms(&self) -> &[String] {
        &self.atoms
    }

    /// Whether any atom occurs in the text.
    pub fn any(&self, text: &str) -> bool {
        self.ac.as_ref().is_some_and(|ac| ac.is_match(text))
    }

    /// Adds the signatures whose atoms occur in `text` to `out` (unsorted, may repeat).
    pub fn candidates(&self, text: &str, out: &mut Vec<usize>) {
        let Some(ac) = &self.ac else {
            return;
        };
        for m in ac.find_overlapping_iter(text) {
            out.extend_from_slice(&self.owners[m.pattern().as_usize()]);
        }
    }
}
