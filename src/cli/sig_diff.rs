//! `crashdoc sig diff [BASE]`: what a library change does to the corpus.
//!
//! The library at a git revision (`BASE`, default `HEAD`: the last commit) is read
//! straight from git's object store (`git ls-tree` and one `git cat-file --batch`), so
//! the working tree is never touched; the library *now* is the one the other commands
//! load (the embedded library, `--signatures DIR`…). Both replay the same corpus and
//! [`crate::corpus::diff`] prints every incident that moved. git is run only to read
//! objects, with the revision passed as one argument after `--end-of-options`.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{bail, Context};
use clap::Args;
use indicatif::ProgressBar;

use super::{LibraryArgs, EXIT_FOUND, EXIT_NONE};
use crate::corpus::{self, diff};
use crate::engine::matcher::{Compiled, EngineKind};
use crate::knowledge::signature::load::{compile_files, LibraryFile};
use crate::knowledge::signature::Library;

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The git revision whose library is the "before" (a commit, branch or tag).
    #[arg(value_name = "BASE", default_value = "HEAD")]
    pub base: String,
    /// The corpus to replay.
    #[arg(long, value_name = "DIR", default_value = "corpus")]
    pub corpus: PathBuf,
    /// The git repository holding the library at BASE.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// The library's folder inside that repository.
    #[arg(long, value_name = "PATH", default_value = "signatures")]
    pub path: String,
    /// `text` (before → after, one line per incident that moved) or `json`.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    pub format: DiffFormat,
    /// The library "after" (default: the embedded one, as every command loads it).
    #[command(flatten)]
    pub library: LibraryArgs,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffFormat {
    Text,
    Json,
}

/// Exit 0 when no incident that was right is wrong now, 1 when one is.
pub fn run_diff(a: &DiffArgs) -> anyhow::Result<ExitCode> {
    let incidents = corpus::load_dir(&a.corpus)?;
    if incidents.is_empty() {
        bail!("{}: no incidents", a.corpus.display());
    }
    let files = files_at(&a.repo, &a.base, &a.path)?;
    let before_lib = compile_files(&files).map_err(|errors| super::CliError::Broken {
        what: "the library at the base revision has",
        errors,
    })?;
    let after_lib = a.library.load()?;
    let before = replay(&before_lib, &incidents)?;
    let after = replay(&after_lib, &incidents)?;
    let d = diff::compare(&before, &after);
    let text = match a.format {
        DiffFormat::Text => diff::render_text(
            &d,
            &format!("{} at {}", a.path, a.base),
            "the library loaded now",
        ),
        DiffFormat::Json => serde_json::to_string_pretty(&d)? + "\n",
    };
    super::print(&text)?;
    Ok(ExitCode::from(if d.breaks() {
        EXIT_NONE
    } else {
        EXIT_FOUND
    }))
}

fn replay(
    lib: &Library,
    incidents: &[corpus::Incident],
) -> anyhow::Result<corpus::score::CorpusReport> {
    let compiled = Compiled::new(lib)?;
    let run = corpus::run::run_corpus(
        &compiled,
        EngineKind::Prefilter,
        incidents,
        &ProgressBar::hidden(),
    );
    Ok(run.report)
}

fn git(repo: &Path) -> Command {
    let mut c = Command::new("git");
    c.arg("-C").arg(repo);
    c
}

/// Every file of the library folder `path` at revision `rev`, named as a library
/// folder's files are (`<rev>/gpu/x.yaml`).
pub fn files_at(repo: &Path, rev: &str, path: &str) -> anyhow::Result<Vec<LibraryFile>> {
    let tree = format!("{rev}:{path}");
    let out = git(repo)
        .args(["ls-tree", "-r", "-z", "--name-only", "--end-of-options"])
        .arg(&tree)
        .output()
        .context("running git (is it installed?)")?;
    if !out.status.success() {
        bail!(
            "git cannot read `{tree}` in {}: {}",
            repo.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let names: Vec<String> = out
        .stdout
        .split(|b| *b == 0)
        .filter(|n| !n.is_empty())
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect();
    if names.is_empty() {
        bail!("`{tree}` holds no files");
    }
    let texts = cat_files(
        repo,
        &names
            .iter()
            .map(|n| format!("{tree}/{n}"))
            .collect::<Vec<_>>(),
    )?;
    Ok(names
        .into_iter()
        .zip(texts)
        .map(|(n, text)| LibraryFile {
            name: format!("<{rev}>/{n}"),
            text,
        })
        .collect())
}

/// The contents of these objects, in order, through one `git cat-file --batch`.
fn cat_files(repo: &Path, objects: &[String]) -> anyhow::Result<Vec<String>> {
    let mut child = git(repo)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("running git cat-file")?;
    let mut stdin = child.stdin.take().context("git cat-file's input")?;
    let request: String = objects.iter().map(|o| format!("{o}\n")).collect();
    let writer = std::thread::spawn(move || stdin.write_all(request.as_bytes()));
    let stdout = child.stdout.take().context("git cat-file's output")?;
    let mut r = BufReader::new(stdout);
    let mut texts = Vec::with_capacity(objects.len());
    for o in objects {
        let mut header = String::new();
        r.read_line(&mut header)?;
        let parts: Vec<&str> = header.split_whitespace().collect();
        let size: usize = match parts.as_slice() {
            [_, "blob", size] => size.parse().context("git cat-file's size")?,
            _ => bail!("git cannot read `{o}`: {}", header.trim()),
        };
        let mut body = vec![0; size + 1];
        r.read_exact(&mut body)?;
        body.pop();
        texts.push(String::from_utf8(body).with_context(|| format!("`{o}` is not UTF-8"))?);
    }
    match writer.join() {
        Ok(res) => res.context("writing to git cat-file")?,
        Err(_) => bail!("writing to git cat-file failed"),
    }
    child.wait()?;
    Ok(texts)
}
