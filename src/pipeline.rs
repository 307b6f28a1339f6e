//! The pipeline for one input: ingest → normalize → extract (+ loose-line matching) →
//! match failures → rank → diagnosis. One pass over the log; only failures and the
//! matches of loose lines are kept. Environment reports inside the log (pip list,
//! collect_env, nvidia-smi…) are read in the same pass ([`crate::env::Scanner`]) and
//! merged under the facts given with [`Engine::with_facts`] (`--env` files win).

use crate::env::{Facts, Scanner};
use crate::extract::{ExtractOptions, Extraction, Extractor};
use crate::ingest::{IngestError, LineReader};
use crate::matcher::{EngineKind, Matcher, Matches};
use crate::normalize::{self, Level};
use crate::rank;
use crate::report::{BuildOptions, Diagnosis};
use crate::signature::Library;

/// A compiled library with its prefilter, ready for many inputs.
///
/// The prefilter's automaton holds the library's atoms and every literal extraction acts
/// on in a message ([`crate::extract::shapes::message_literals`]) and those the
/// environment scanner looks for ([`crate::env::parse::GATE_LITERALS`]): it is also the
/// fast path's scanner. Each
/// line that is valid UTF-8 and reads as the usual journald/vLLM layers is read with
/// [`normalize::view`], without allocating. Such a line with no error or warning level,
/// whose message has none of those literals and whose stream has no block open (blocks
/// are reassembled per stream), cannot start or continue a failure nor match a signature
/// (the prefilter reads messages only): it is counted and skipped. Every other line becomes a record: built from the view when there is one
/// (the same record, without running the layer parsers again), normalized otherwise.
/// The brute-force engine never skips.
pub struct Engine<'l> {
    pub matcher: Matcher<'l>,
    /// Whether the fast path runs (not for the brute-force engine).
    fast: bool,
    /// The stream key of the line at hand (reused, not reallocated).
    key: String,
    /// Facts given apart from the log (`--env`).
    given: Facts,
}

/// Lines after which an input is long enough to repay building the prefilter's DFA.
const DFA_AFTER_LINES: usize = 20_000;

impl<'l> Engine<'l> {
    pub fn new(library: &'l Library, kind: EngineKind) -> Self {
        Engine {
            matcher: Matcher::new(library, kind),
            fast: kind == EngineKind::Prefilter,
            key: String::new(),
            given: Facts::default(),
        }
    }

    /// Uses these environment facts (from `--env` files) for every input.
    pub fn with_facts(mut self, facts: Facts) -> Self {
        self.matcher.facts = facts.clone();
        self.given = facts;
        self
    }

    /// Whether a viewed line without an error or warning level is loose and matches
    /// nothing, so that it can be skipped: its stream has no block open, and its message
    /// has no literal extraction acts on and no atom of a signature that could take a
    /// line of its stream. (Pattern ids below the number of atoms are the prefilter's.)
    fn quiet(
        matcher: &Matcher<'_>,
        v: &normalize::View<'_>,
        key: &mut String,
        x: &mut Extractor,
    ) -> bool {
        let pf = matcher.prefilter();
        let Some(scanner) = pf.scanner() else {
            return false;
        };
        let Some(first) = scanner.find(v.message) else {
            return x.idle() || !x.stream_busy_hash(v.key_hash());
        };
        let atoms = pf.atom_count();
        if first.pattern().as_usize() >= atoms || (!x.idle() && x.stream_busy_hash(v.key_hash())) {
            return false;
        }
        v.key_into(key);
        !scanner.find_overlapping_iter(v.message).any(|m| {
            let p = m.pattern().as_usize();
            p >= atoms || pf.open_for(p, key)
        })
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
            let number = raw.number;
            let viewed = raw.clean().and_then(|t| normalize::view(t).map(|v| (t, v)));
            if number == DFA_AFTER_LINES {
                self.matcher.prefilter().upgrade();
            }
            let rec = match viewed {
                Some((text, v)) => {
                    let leveled = matches!(v.level, Some(l) if l >= Level::Warning);
                    if self.fast
                        && !leveled
                        && Self::quiet(&self.matcher, &v, &mut self.key, &mut x)
                    {
                        scan.push_without_literals(number, v.message);
                        let worker = v.worker.filter(|w| w.contains("Worker"));
                        x.skip(number, worker.map(|w| (w, v.pid)));
                        continue;
                    }
                    v.record(number, text, raw.truncated)
                }
                None => normalize::normalize(raw.into_line()),
            };
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
