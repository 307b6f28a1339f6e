//! The pipeline for one input: ingest → normalize → extract (+ loose-line matching) →
//! match failures → rank → diagnosis. One pass over the log; only failures and the
//! matches of loose lines are kept. Environment reports inside the log (pip list,
//! collect_env, nvidia-smi…) are read in the same pass ([`crate::env::Scanner`]) and
//! merged under the facts given with [`Engine::with_facts`] (`--env` files win).

use aho_corasick::AhoCorasick;

use crate::env::{Facts, Scanner};
use crate::extract::{shapes, ExtractOptions, Extraction, Extractor};
use crate::ingest::{IngestError, LineReader};
use crate::matcher::{EngineKind, Matcher, Matches};
use crate::normalize::{self, Level};
use crate::rank;
use crate::report::{BuildOptions, Diagnosis};
use crate::signature::Library;

/// A compiled library with its prefilter, ready for many inputs.
///
/// The engine keeps one more automaton, the *line scanner*: the library's atoms plus
/// every literal extraction acts on. While no block is open, a line that is valid
/// UTF-8, has none of those literals, reads as the usual journald/vLLM layers and has no
/// error or warning level cannot start a failure nor match a signature: it is counted
/// and skipped without being normalized into a record (no allocation). Every other line
/// takes the full path. The brute-force engine never skips.
pub struct Engine<'l> {
    pub matcher: Matcher<'l>,
    scanner: Option<AhoCorasick>,
    scratch: String,
    /// Facts given apart from the log (`--env`).
    given: Facts,
}

impl<'l> Engine<'l> {
    pub fn new(library: &'l Library, kind: EngineKind) -> Self {
        let matcher = Matcher::new(library, kind);
        let scanner = match kind {
            EngineKind::Brute => None,
            EngineKind::Prefilter => {
                let mut lits: Vec<String> = matcher.prefilter().atoms().to_vec();
                lits.extend(shapes::structural_literals().map(str::to_string));
                AhoCorasick::builder()
                    .ascii_case_insensitive(true)
                    .build(&lits)
                    .ok()
            }
        };
        Engine {
            matcher,
            scanner,
            scratch: String::new(),
            given: Facts::default(),
        }
    }

    /// Uses these environment facts (from `--env` files) for every input.
    pub fn with_facts(mut self, facts: Facts) -> Self {
        self.matcher.facts = facts.clone();
        self.given = facts;
        self
    }

    /// The fast path: whether this line can be skipped (see the type's docs), with its
    /// message; the worker key, if any, is left in `scratch`.
    fn skippable<'t>(
        scanner: &AhoCorasick,
        text: &'t str,
        scratch: &mut String,
    ) -> Option<(bool, &'t str)> {
        if scanner.is_match(text) {
            return None;
        }
        let v = normalize::view(text)?;
        if matches!(v.level, Some(l) if l >= Level::Warning) {
            return None;
        }
        scratch.clear();
        match v.worker {
            Some(w) if w.contains("Worker") => {
                scratch.push_str(w);
                if let Some(p) = v.pid {
                    scratch.push_str(" pid=");
                    scratch.push_str(&p.to_string());
                }
                Some((true, v.message))
            }
            _ => Some((false, v.message)),
        }
    }

    fn extract_options(&self) -> ExtractOptions {
        ExtractOptions {
            plumbing: self.matcher.library.plumbing.clone(),
        }
    }

    /// Extracts and matches one input.
    pub fn run(&mut self, reader: &mut LineReader) -> Result<(Extraction, Matches), IngestError> {
        let (x, m, _) = self.run_with_facts(reader)?;
        Ok((x, m))
    }

    /// Extracts and matches one input; also returns the environment facts (the log's
    /// own reports under the given ones). Loose lines are matched with the facts known
    /// when they stream by; failures with all of them.
    pub fn run_with_facts(
        &mut self,
        reader: &mut LineReader,
    ) -> Result<(Extraction, Matches, Facts), IngestError> {
        self.pass(reader, true)
    }

    /// Extraction only (`crashdoc extract`).
    pub fn extract(&mut self, reader: &mut LineReader) -> Result<Extraction, IngestError> {
        Ok(self.pass(reader, false)?.0)
    }

    /// The one pass over a log; `matching` off gives extraction only.
    fn pass(
        &mut self,
        reader: &mut LineReader,
        matching: bool,
    ) -> Result<(Extraction, Matches, Facts), IngestError> {
        let mut x = Extractor::new(self.extract_options());
        let mut m = Matches::default();
        let mut scan = Scanner::new(&format!("{} (log)", reader.name()));
        while let Some(raw) = reader.next_raw()? {
            if let (Some(sc), true) = (&self.scanner, x.idle()) {
                if let Some(text) = raw.clean() {
                    if let Some((worker, msg)) = Self::skippable(sc, text, &mut self.scratch) {
                        scan.push(raw.number, msg);
                        x.skip(raw.number, worker.then_some(self.scratch.as_str()));
                        continue;
                    }
                }
            }
            let rec = normalize::normalize(raw.into_line());
            scan.push(rec.line, &rec.message);
            let attempt = x.current_attempt();
            if let Some(loose) = x.push(rec) {
                if matching {
                    self.matcher.match_loose(&loose, attempt, &mut m);
                }
            }
        }
        let x = x.finish();
        let mut facts = scan.finish();
        facts.merge(self.given.clone());
        if matching {
            self.matcher.facts = facts;
            self.matcher.match_failures(&x, &mut m);
            facts = std::mem::replace(&mut self.matcher.facts, self.given.clone());
        }
        Ok((x, m, facts))
    }

    /// The whole diagnosis of one input.
    pub fn diagnose(
        &mut self,
        reader: &mut LineReader,
        opts: BuildOptions,
    ) -> Result<Diagnosis, IngestError> {
        let name = reader.name().to_string();
        let (x, m, facts) = self.run_with_facts(reader)?;
        let ranked = rank::aggregate(self.matcher.library, &x, &m);
        Ok(Diagnosis::build_with_facts(
            &name,
            self.matcher.library,
            x,
            ranked,
            opts,
            facts,
        ))
    }

    /// Diagnoses text held in memory (signature examples, tests).
    pub fn diagnose_text(&mut self, name: &str, text: &str, opts: BuildOptions) -> Diagnosis {
        let bytes = text.as_bytes().to_vec();
        LineReader::from_reader(Box::new(std::io::Cursor::new(bytes)), name.to_string())
            .and_then(|mut r| self.diagnose(&mut r, opts))
            // reading memory cannot fail; an empty diagnosis is the safe answer if it did
            .unwrap_or_else(|_| {
                Diagnosis::build(
                    name,
                    self.matcher.library,
                    Extraction::default(),
                    Vec::new(),
                    opts,
                )
            })
    }
}
