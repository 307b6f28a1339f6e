//! `crashdoc corpus bless`: one command regenerates every file derived from the
//! library and the corpus, so that adding a signature or an incident ends green.
//!
//! Run in the repository's root after `cargo build --release` (the binary's category
//! model is trained from the tree at build time; see CONTRIBUTING.md, "The category
//! model"). The library is `./signatures` loaded over the embedded one — a fresh
//! signature is seen without a rebuild — and a note says when it differs from the
//! binary's, so the contributor rebuilds and blesses again before committing.
//!
//! | file | what it holds | the test that checks it |
//! | --- | --- | --- |
//! | `corpus/baseline.json` | the corpus run | `corpus run --baseline` (CI), `corpus_run.rs` |
//! | `corpus/metamorphic.json` | the corpus under every transformation | `corpus run --metamorphic --baseline` (CI) |
//! | `corpus/calibration.json` | the inferred layer's calibration and the signature layers', fitted on the knock-out run and the unseen incidents (the build freezes them into the model: rebuild and bless again) | `corpus_run.rs` |
//! | `tests/data/metamorphic/examples.json` | the signature examples under every transformation | `metamorphic.rs` |
//! | `docs/signatures.md` | the library by category | `library.rs` |
//! | `signatures/schema.json`, `docs/schema/diagnosis.schema.json` | the JSON Schemas | `contrib.rs`, `schema.rs` |
//! | `README.md` between `corpus:`, `metamorphic:` and `sample:` markers | the corpus table, the metamorphic table, the sample output | `corpus_run.rs`, `metamorphic.rs`, `cli_ux.rs` |
//!
//! `--check` writes nothing and exits 1 naming every stale file.
//!
//! Each file is written whole and atomically ([`crate::knowledge::files::write_atomic`]);
//! a README without its markers is an error, never a file rewritten around them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use indicatif::ProgressBar;

use super::{EXIT_FOUND, EXIT_NONE};
use crate::corpus::{self, baseline, invariance, metamorph, render, run::run_corpus};
use crate::engine::matcher::{Compiled, EngineKind};
use crate::knowledge::signature::load::builtin_files;

#[derive(Args, Debug)]
pub struct BlessArgs {
    /// The repository's root: the folder holding `signatures/`, `corpus/` and README.md.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub root: PathBuf,
    /// Write nothing: list the derived files that are stale and exit 1 if any is.
    #[arg(long)]
    pub check: bool,
}

/// The arguments of the README's sample output (`cli_ux.rs` runs the same).
pub const SAMPLE_ARGS: [&str; 4] = ["--width", "100", "--top", "1"];
/// The log of the README's sample output.
pub const SAMPLE_LOG: &str = "tests/data/scenario/journal.txt";

/// `text` with the part between `<!-- NAME:start -->\n` and `<!-- NAME:end -->`
/// replaced by `body`.
pub fn splice(text: &str, name: &str, body: &str) -> anyhow::Result<String> {
    let (start, end) = (
        format!("<!-- {name}:start -->\n"),
        format!("<!-- {name}:end -->"),
    );
    let a = text
        .find(&start)
        .ok_or_else(|| anyhow::anyhow!("README.md has no `{}` marker", start.trim_end()))?
        + start.len();
    let b = text[a..]
        .find(&end)
        .ok_or_else(|| anyhow::anyhow!("README.md has no `{end}` marker after its start"))?
        + a;
    Ok(format!("{}{body}{}", &text[..a], &text[b..]))
}

/// The README's sample block: this binary run on the scenario, as `cli_ux.rs` runs it.
fn sample(root: &Path) -> anyhow::Result<String> {
    let exe = std::env::current_exe()?;
    let o = std::process::Command::new(exe)
        .args(SAMPLE_ARGS)
        .arg(SAMPLE_LOG)
        .current_dir(root)
        .env("NO_COLOR", "1")
        .env("CRASHDOC_CACHE_DIR", "")
        .output()?;
    Ok(format!(
        "```text\n$ crashdoc {} {SAMPLE_LOG}\n{}```\n",
        SAMPLE_ARGS.join(" "),
        String::from_utf8_lossy(&o.stdout)
    ))
}

/// Whether the folder's signature files differ from the binary's embedded ones.
fn differs_from_build(dir: &Path) -> bool {
    let (files, _) = crate::knowledge::signature::load::read_dir_files(
        dir,
        crate::knowledge::reading::Kind::Signatures,
    );
    let stem = |n: &str| {
        let base = n.rsplit(['/', '\\']).next().unwrap_or(n);
        base.trim_end_matches(".yaml").to_string()
    };
    let built: std::collections::BTreeMap<String, &str> =
        builtin_files().iter().map(|(n, t)| (stem(n), *t)).collect();
    files.len() != built.len()
        || files
            .iter()
            .any(|f| built.get(&stem(&f.name)).is_none_or(|t| *t != f.text))
}

/// Every derived file's path (relative to the root) and its regenerated content.
fn derived(root: &Path) -> anyhow::Result<Vec<(&'static str, String)>> {
    let sigs = root.join("signatures");
    if differs_from_build(&sigs) {
        eprintln!(
            "crashdoc: note: {} differs from this binary's library: the files below use the \
             folder, but the category model is the build's — rebuild (`cargo build --release`) \
             and bless again before committing",
            sigs.display()
        );
    }
    let spec = crate::knowledge::sources::Spec {
        builtin: true,
        dirs: vec![sigs.clone()],
        ..Default::default()
    };
    let lib = crate::knowledge::sources::load(&spec)
        .map_err(|errors| super::CliError::Broken {
            what: "the signature library has",
            errors,
        })?
        .library;
    let compiled = Compiled::new(&lib)?;
    let incidents = corpus::load_dir(&root.join("corpus"))?;
    let run = run_corpus(
        &compiled,
        EngineKind::Prefilter,
        &incidents,
        &ProgressBar::hidden(),
    );
    let meta = invariance::run_corpus(&compiled, &incidents);
    let (healthy, noise) = invariance::healthy_lines(&incidents);
    let ctx = metamorph::Ctx {
        seed: invariance::SEED,
        healthy: &healthy,
        noise: &noise,
        bury_lines: invariance::EXAMPLE_BURY_LINES,
    };
    let examples = invariance::run(
        &compiled,
        &invariance::example_subjects(&lib),
        &ctx,
        metamorph::ALL,
    );
    let knocked = corpus::knockout::run(
        &lib,
        EngineKind::Prefilter,
        &incidents,
        &root.join("corpus"),
    );
    let calibration = serde_json::to_string_pretty(&corpus::knockout::calibration_file(&knocked))?;
    let readme = std::fs::read_to_string(root.join("README.md"))
        .map_err(|e| anyhow::anyhow!("{}: {e}", root.join("README.md").display()))?;
    let readme = splice(&readme, "corpus", &render::markdown(&run.report))?;
    let readme = splice(&readme, "metamorphic", &render::invariance_markdown(&meta))?;
    let readme = splice(&readme, "sample", &sample(root)?)?;
    Ok(vec![
        ("corpus/baseline.json", baseline::to_json(&run.report)?),
        ("corpus/metamorphic.json", invariance::to_json(&meta)),
        ("corpus/calibration.json", format!("{calibration}\n")),
        (
            "tests/data/metamorphic/examples.json",
            invariance::to_json(&examples),
        ),
        ("docs/signatures.md", super::sig::library_markdown(&lib)),
        (
            "signatures/schema.json",
            crate::tools::schema::schema_json(),
        ),
        (
            "docs/schema/diagnosis.schema.json",
            crate::report::wire::diagnosis_schema()?,
        ),
        ("README.md", readme),
    ])
}

pub fn run(a: &BlessArgs) -> anyhow::Result<ExitCode> {
    for need in ["signatures", "corpus", "README.md"] {
        if !a.root.join(need).exists() {
            anyhow::bail!(
                "{}: no {need} here: run `crashdoc corpus bless` in a crashdoc checkout (or give --root DIR)",
                a.root.display()
            );
        }
    }
    let mut stale = 0;
    for (rel, text) in derived(&a.root)? {
        let path = a.root.join(rel);
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        if old == text {
            eprintln!("crashdoc: current  {rel}");
            continue;
        }
        stale += 1;
        if a.check {
            eprintln!("crashdoc: stale    {rel}");
            continue;
        }
        crate::knowledge::files::write_atomic(&path, text.as_bytes())
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        eprintln!("crashdoc: wrote    {rel}");
        if rel == "corpus/calibration.json" {
            eprintln!(
                "crashdoc: note: the build freezes the calibration into the binary: rebuild \
                 (`cargo build --release`) and bless again before committing"
            );
        }
    }
    Ok(ExitCode::from(if a.check && stale > 0 {
        EXIT_NONE
    } else {
        EXIT_FOUND
    }))
}
