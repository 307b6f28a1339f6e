//! The whole diagnose path on arbitrary text with the built-in library: extraction,
//! matching, ranking, the report and its three renderings. Checked beyond "no panic":
//! the prefilter finds exactly what the brute-force engine finds on the same input, and
//! the text rendering carries no raw terminal control character from the log.
#![no_main]

use std::sync::{LazyLock, Mutex};

use crashdoc::engine::diagnosis::BuildOptions;
use crashdoc::engine::ingest::LineReader;
use crashdoc::engine::matcher::{Compiled, EngineKind};
use crashdoc::engine::pipeline::Engine;
use crashdoc::knowledge::signature::{self, Library, LibrarySource};
use crashdoc::report::{self, text::Style};
use libfuzzer_sys::fuzz_target;

static LIB: LazyLock<Library> =
    LazyLock::new(|| signature::load(&[LibrarySource::Builtin]).unwrap());
static COMPILED: LazyLock<Compiled<'static>> = LazyLock::new(|| Compiled::new(&LIB).unwrap());
static ENGINES: LazyLock<Mutex<(Engine<'static>, Engine<'static>)>> = LazyLock::new(|| {
    Mutex::new((
        Engine::new(&COMPILED, EngineKind::Prefilter),
        Engine::new(&COMPILED, EngineKind::Brute),
    ))
});

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut engines = ENGINES.lock().unwrap();
    let (fast, brute) = &mut *engines;
    let d = fast.diagnose_text("fuzz", &text, BuildOptions::default());
    let out = report::text::render(
        &d,
        Style {
            color: false,
            width: None,
        },
    );
    assert!(
        !out.chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "raw control character in text output"
    );
    let _ = report::markdown::render(&d);
    let _ = report::json(&d);

    // an input crashdoc refuses to open (xz, zstd or bzip2 magic: it names the format and
    // asks for the decompressed text) is an input error, not a run to compare
    let run = |e: &mut Engine<'static>| {
        let mut r =
            LineReader::from_reader(Box::new(std::io::Cursor::new(data.to_vec())), "fuzz".into())
                .ok()?;
        e.run(&mut r).ok().map(|(_, mut m)| {
            m.failures.sort_by_key(|h| (h.failure, h.signature));
            m
        })
    };
    if let (Some(a), Some(b)) = (run(fast), run(brute)) {
        assert_eq!(a, b, "prefilter and brute force differ");
    }
});
