//! Ingest + normalize + extract on arbitrary bytes (plain or gzip: the reader sniffs the
//! magic itself). Besides "no panic, no hang", it checks that line numbers count from 1
//! without gaps, that kept text is bounded, and that extraction loses no line: every
//! non-blank line is handed back loose by `Extractor::push`, kept in a failure's lines,
//! or the start of an occurrence — unless the extraction *reports* condensing (a merged
//! duplicate, elided lines, dropped failures), which is how it says what it did not keep.
#![no_main]

use std::collections::BTreeSet;

use crashdoc::engine::extract::{ExtractOptions, Extractor};
use crashdoc::engine::ingest::{LineReader, MAX_LINE_BYTES};
use crashdoc::engine::normalize::normalize;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(mut reader) =
        LineReader::from_reader(Box::new(std::io::Cursor::new(data.to_vec())), "fuzz".into())
    else {
        return;
    };
    let mut x = Extractor::new(ExtractOptions::default());
    let mut read = 0usize;
    let mut accounted = BTreeSet::new();
    let mut blank = BTreeSet::new();
    loop {
        match reader.next_line() {
            Ok(Some(line)) => {
                read += 1;
                assert_eq!(line.number, read, "line numbers count from 1 without gaps");
                // lossy decoding may triple a byte (U+FFFD is 3 bytes), never more
                assert!(
                    line.text.len() <= MAX_LINE_BYTES * 3,
                    "kept text is bounded"
                );
                let rec = normalize(line);
                assert_eq!(rec.line, read);
                if rec.message.trim().is_empty() {
                    blank.insert(rec.line);
                }
                if let Some(loose) = x.push(rec) {
                    assert!(accounted.insert(loose.line), "a line came back loose twice");
                }
            }
            Ok(None) => break,
            // a corrupt gzip stream is an error for the caller, not a panic
            Err(_) => break,
        }
    }
    let ex = x.finish();
    assert_eq!(ex.lines, read);
    let mut condensed_from = usize::MAX;
    if ex.dropped_failures > 0 {
        condensed_from = 0;
    }
    for f in &ex.failures {
        for l in &f.lines {
            assert!(
                l.line >= 1 && l.line <= read,
                "kept line {} out of range",
                l.line
            );
            accounted.insert(l.line);
        }
        for o in &f.occurrences {
            accounted.insert(o.line);
        }
        if f.count > 1 || f.elided_lines > 0 {
            condensed_from = condensed_from.min(f.first.line);
        }
    }
    for n in 1..=read {
        if accounted.contains(&n) || blank.contains(&n) {
            continue;
        }
        assert!(
            n > condensed_from,
            "line {n} was neither loose nor kept, and no condensing was reported before it"
        );
    }
});
