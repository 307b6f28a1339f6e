//! The signature loader and compiler on arbitrary YAML: one `LibraryFile` named like a
//! signature. Either a library comes out, or located diagnostics do; never a panic, a
//! hang or unbounded memory (the YAML budget bounds nodes, aliases and depth). A library
//! that compiles is then exercised: its prefilter is built and its examples are run.
#![no_main]

use crashdoc::engine::diagnosis::BuildOptions;
use crashdoc::engine::matcher::{Compiled, EngineKind};
use crashdoc::engine::pipeline::Engine;
use crashdoc::knowledge::signature::load::{compile_files, LibraryFile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let files = [LibraryFile {
        name: "gpu/fuzz.yaml".to_string(),
        text: text.to_string(),
    }];
    match compile_files(&files) {
        Ok(lib) => {
            // an automaton that cannot be built is an error, never a panic
            let Ok(compiled) = Compiled::new(&lib) else {
                return;
            };
            let mut engine = Engine::new(&compiled, EngineKind::Prefilter);
            for s in &lib.signatures {
                for ex in s
                    .examples
                    .matches
                    .iter()
                    .chain(&s.examples.no_match)
                    .take(4)
                {
                    let _ = engine.diagnose_text("example", &ex.log, BuildOptions::default());
                }
            }
        }
        Err(errors) => {
            for d in &errors.0 {
                // every diagnostic renders and names the file
                assert!(d.to_string().contains("gpu/fuzz.yaml"), "{d}");
            }
        }
    }
});
