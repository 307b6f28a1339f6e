//! The pipeline for one input: ingest → normalize → extract (+ loose-line matching) →
//! match failures → rank → diagnosis. One pass over the log; only failures and the
//! matches of loose lines are kept.

use crate::extract::{ExtractOptions, Extraction, Extractor};
use crate::ingest::{IngestError, LineReader};
use crate::matcher::{EngineKind, Matcher, Matches};
use crate::normalize::normalize;
use crate::rank;
use crate::report::{BuildOptions, Diagnosis};
use crate::signature::Library;

/// A compiled library with its prefilter, ready for many inputs.
pub struct Engine<'l> {
    pub matcher: Matcher<'l>,
}

impl<'l> Engine<'l> {
    pub fn new(library: &'l Library, kind: EngineKind) -> Self {
        Engine {
            matcher: Matcher::new(library, kind),
        }
    }

    fn extract_options(&self) -> ExtractOptions {
        ExtractOptions {
            plumbing: self.matcher.library.plumbing.clone(),
        }
    }

    /// Extracts and matches one input.
    pub fn run(&mut self, reader: &mut LineReader) -> Result<(Extraction, Matches), IngestError> {
        let mut x = Extractor::new(self.extract_options());
        let mut m = Matches::default();
        while let Some(line) = reader.next_line()? {
            let rec = normalize(line);
            let attempt = x.current_attempt();
            if let Some(loose) = x.push(rec) {
                self.matcher.match_loose(&loose, attempt, &mut m);
            }
        }
        let x = x.finish();
        self.matcher.match_failures(&x, &mut m);
        Ok((x, m))
    }

    /// Extraction only (`crashdoc extract`).
    pub fn extract(&self, reader: &mut LineReader) -> Result<Extraction, IngestError> {
        let mut x = Extractor::new(self.extract_options());
        while let Some(line) = reader.next_line()? {
            let _ = x.push(normalize(line));
        }
        Ok(x.finish())
    }

    /// The whole diagnosis of one input.
    pub fn diagnose(
        &mut self,
        reader: &mut LineReader,
        opts: BuildOptions,
    ) -> Result<Diagnosis, IngestError> {
        let name = reader.name().to_string();
        let (x, m) = self.run(reader)?;
        let ranked = rank::aggregate(self.matcher.library, &x, &m);
        Ok(Diagnosis::build(
            &name,
            self.matcher.library,
            x,
            ranked,
            opts,
        ))
    }

    /// Diagnoses text held in memory (signature examples, tests).
    pub fn diagnose_text(&mut self, name: &str, text: &str, opts: BuildOptions) -> Diagnosis {
        let bytes = text.as_bytes().to_vec();
        match LineReader::from_reader(Box::new(std::io::Cursor::new(bytes)), name.to_string()) {
            Ok(mut r) => match self.diagnose(&mut r, opts) {
                Ok(d) => d,
                Err(_) => Diagnosis::build(
                    name,
                    self.matcher.library,
                    Extraction::default(),
                    Vec::new(),
                    opts,
                ),
            },
            Err(_) => Diagnosis::build(
                name,
                self.matcher.library,
                Extraction::default(),
                Vec::new(),
                opts,
            ),
        }
    }
}
