//! The pipeline's fast path reads most lines with `normalize::view` and builds their
//! records from it (`View::record`) instead of running the layer parsers. That is only
//! right if the two agree: for every line of the real logs in the repository (the
//! corpus, the scenario journal, the contributor and environment test logs) and for
//! lines of the generated benchmark log, a line the view accepts must give exactly the
//! record `normalize` gives.

use std::path::{Path, PathBuf};

use crashdoc::engine::ingest::{LineReader, Source};
use crashdoc::engine::normalize::{self, Level};

fn logs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            logs(&p, out);
        } else if p
            .extension()
            .is_some_and(|x| x == "txt" || x == "log" || x == "gz")
        {
            out.push(p);
        }
    }
}

fn check(name: &str, reader: &mut LineReader) -> (usize, usize) {
    let (mut lines, mut viewed) = (0, 0);
    while let Some(raw) = reader.next_raw().expect("read") {
        lines += 1;
        let Some(text) = raw.clean() else {
            continue;
        };
        let Some(v) = normalize::view(text) else {
            continue;
        };
        viewed += 1;
        let fast = v.record(raw.number, text, raw.truncated);
        let mut key = String::from("stale");
        v.key_into(&mut key);
        let full = normalize::normalize(raw.into_line());
        assert_eq!(fast, full, "{name}: line {} differs", full.line);
        assert_eq!(key, full.stream.key(), "{name}: line {} key", full.line);
        assert_eq!(
            v.key_hash(),
            normalize::stream_key_hash(&key),
            "{name}: line {} key hash",
            full.line
        );
    }
    (lines, viewed)
}

#[test]
fn view_records_equal_normalized_records_on_every_real_log() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for d in ["corpus", "tests/data"] {
        logs(&root.join(d), &mut files);
    }
    assert!(files.len() > 40, "the corpus and test logs are there");
    let (mut lines, mut viewed) = (0, 0);
    for f in &files {
        let mut r = LineReader::open(&Source::Path(f.clone())).expect("open");
        let (l, v) = check(&f.display().to_string(), &mut r);
        lines += l;
        viewed += v;
    }
    // the scenario journal alone has hundreds of lines in the fast layer stack
    assert!(viewed > 500, "{viewed} of {lines} lines read by the view");
}

#[test]
fn view_records_equal_normalized_records_on_the_generated_log() {
    let mut bytes = Vec::new();
    crashdoc::tools::bench::write_log(&mut bytes, 2_000_000, 3).expect("generate");
    let mut r =
        LineReader::from_reader(Box::new(std::io::Cursor::new(bytes)), "gen".into()).expect("open");
    let (lines, viewed) = check("generated", &mut r);
    assert!(viewed * 10 > lines * 9, "{viewed} of {lines}");
}

#[test]
fn view_reads_levels_the_fast_path_relies_on() {
    // Source: tests/data/scenario/journal.txt (line 39)
    let line = "Feb 20 23:31:36 llm-two vllm-kimi[216054]: (Worker_TP4 pid=216054) ERROR 02-20 23:31:36 [multiproc_executor.py:783] Traceback (most recent call last):";
    let v = normalize::view(line).expect("the usual layers");
    assert_eq!(v.level, Some(Level::Error));
    assert_eq!(v.message, "Traceback (most recent call last):");
    assert_eq!(v.worker, Some("Worker_TP4"));
    assert_eq!(v.origin, Some("multiproc_executor.py:783"));
    // systemd's lines act on extraction through their identifier: never viewed
    assert!(normalize::view("Feb 20 23:31:36 llm-two systemd[1]: Started vllm.service.").is_none());
}

/// The two-thread pass (used past 10,000 lines) gives the same diagnosis and extraction
/// as one thread, on the generated log (with its restarts, tracebacks and NCCL blocks)
/// and on the scenario journal.
#[test]
fn two_threads_give_what_one_thread_gives() {
    use crashdoc::engine::diagnosis::BuildOptions;
    use crashdoc::engine::matcher::EngineKind;
    use crashdoc::engine::pipeline::Engine;
    let lib = crashdoc::knowledge::signature::load(&[
        crashdoc::knowledge::signature::LibrarySource::Builtin,
    ])
    .expect("library");
    let mut generated = Vec::new();
    crashdoc::tools::bench::write_log(&mut generated, 6_000_000, 11).expect("generate");
    let scenario = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/scenario/journal.txt"),
    )
    .expect("scenario");
    let compiled = crashdoc::engine::matcher::Compiled::new(&lib).expect("compiled");
    for (name, bytes) in [("generated", generated), ("scenario", scenario)] {
        let render = |parallel_after: usize| {
            let mut e =
                Engine::new(&compiled, EngineKind::Prefilter).with_parallel_after(parallel_after);
            let mut r =
                LineReader::from_reader(Box::new(std::io::Cursor::new(bytes.clone())), name.into())
                    .expect("open");
            let d = e
                .diagnose(&mut r, BuildOptions::default())
                .expect("diagnose");
            serde_json::to_string(&d).expect("json")
        };
        let one = render(usize::MAX);
        assert_eq!(render(0), one, "{name}: from the first line");
        assert_eq!(render(1000), one, "{name}: from line 1000");
    }
}
