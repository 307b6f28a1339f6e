//! The command line: one `Args` struct per subcommand (clap derive).
//!
//! `crashdoc FILE` and `journalctl -u X | crashdoc` mean `crashdoc diagnose`.
//! Exit codes: 0 a cause was found (or the command succeeded); 1 no cause found (or
//! checks failed); 2 usage or input error; 3 the signature library is broken.
//!
//! Errors end at one edge: every command returns `anyhow::Result<ExitCode>` and
//! [`run`] maps an error to its exit code and says it on stderr ([`exit_for`]). A
//! closed standard output (`crashdoc … | head`) ends quietly with 0, as ripgrep does.

mod bench;
mod bless;
pub mod config;
pub mod contrib;
pub mod corpus;
pub mod corpus_cluster;
mod diagnose;
pub mod emit;
mod examples;
mod follow;
pub mod inputs;
mod install;
pub mod output;
pub mod preflight;
mod progress;
mod run;
mod schema;
pub mod sig;
mod sig_diff;
mod suggest;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use crate::engine::matcher::EngineKind;
use crate::knowledge::signature::{Library, LoadErrors};
use crate::knowledge::sources::{self, Form, Loaded, Spec};

pub const EXIT_FOUND: u8 = 0;
pub const EXIT_NONE: u8 = 1;
pub const EXIT_INPUT: u8 = 2;
pub const EXIT_LIBRARY: u8 = 3;

/// An error whose message and exit code are not the default ones (`crashdoc: …`, 2).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The signature library or the rules do not load (exit 3): every located error,
    /// then their count.
    #[error("{errors}\ncrashdoc: {what} {} error(s)", errors.0.len())]
    Broken {
        /// "the signature library has", "the rules have".
        what: &'static str,
        errors: LoadErrors,
    },
    /// Library folders that cannot be read (exit 2): the located errors.
    #[error("{0}")]
    Unreadable(LoadErrors),
}

#[derive(Parser, Debug)]
#[command(
    name = "crashdoc",
    version,
    about = "Diagnose crash logs: probable causes, ranked, with the lines that prove them and the commands that fix them.",
    args_conflicts_with_subcommands = true,
    after_help = "Exit codes: 0 cause found / success, 1 no cause found / checks failed, 2 usage or input error, 3 broken signature library."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// `crashdoc [OPTIONS] [FILE]...` is `crashdoc diagnose [OPTIONS] [FILE]...`.
    #[command(flatten)]
    pub diagnose: diagnose::DiagnoseArgs,
    /// Do not look for `crashdoc.toml` (also: a non-empty `CRASHDOC_NO_CONFIG`).
    #[arg(long, global = true)]
    pub no_config: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Diagnose logs (the default command).
    Diagnose(diagnose::DiagnoseArgs),
    /// Run a command; when it fails, diagnose its output (its exit status is kept).
    Run(run::RunArgs),
    /// Show the failures extracted from logs (the signature author's debugging view).
    Extract(diagnose::ExtractArgs),
    /// Work with the signature library.
    #[command(subcommand)]
    Sig(sig::SigCommand),
    /// Generate benchmark inputs (large logs, synthetic libraries).
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Replay the corpus of past incidents (score, regression gate) or file a new one.
    #[command(subcommand)]
    Corpus(corpus::CorpusCommand),
    /// Why a signature did or did not match a log (atoms, conditions, closest line).
    Explain(contrib::ExplainArgs),
    /// Check an environment against the compatibility rules before anything runs
    /// (exit 0 ok, 1 problems found, 2 input error, 3 broken rules).
    Preflight(preflight::PreflightArgs),
    /// Work with the compatibility rules.
    #[command(subcommand)]
    Rules(preflight::RulesCommand),
    /// Print the JSON Schema of a format: the diagnosis output (`--format json`), a
    /// signature file or a rule file.
    Schema(schema::SchemaArgs),
    /// Print the shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(install::CompletionsArgs),
    /// Print the man page (roff), of crashdoc or of a subcommand.
    Man(install::ManArgs),
}

/// Which signatures to load.
#[derive(Args, Debug, Clone, Default)]
pub struct LibraryArgs {
    /// Add a signature library folder (repeatable). A file of the same name as a
    /// built-in signature (`<id>.yaml`) replaces it. Also read from
    /// `CRASHDOC_SIGNATURES` (a path list) and `crashdoc.toml`.
    #[arg(long = "signatures", value_name = "DIR")]
    pub signatures: Vec<PathBuf>,
    /// Do not load the embedded default library.
    #[arg(long)]
    pub no_builtin: bool,
}

/// The folder a signature library keeps its signatures in, read by the contributor
/// commands when they run inside one ([`local_signatures`], [`LibraryArgs::load_here`]).
pub const CHECKOUT_DIR: &str = "signatures";

/// The environment variable naming a team's signature folders (a path list, as `PATH`).
pub const SIGNATURES_ENV: &str = "CRASHDOC_SIGNATURES";

impl LibraryArgs {
    /// The folders: `CRASHDOC_SIGNATURES`, then `crashdoc.toml`'s, then `--signatures`.
    pub fn dirs(&self) -> Vec<PathBuf> {
        self.dirs_via().into_iter().map(|(d, _)| d).collect()
    }

    /// [`LibraryArgs::dirs`], each with what named it (`CRASHDOC_SIGNATURES`, the
    /// config file's path, `--signatures`).
    fn dirs_via(&self) -> Vec<(PathBuf, String)> {
        let mut v: Vec<(PathBuf, String)> = std::env::var_os(SIGNATURES_ENV)
            .map(|p| {
                std::env::split_paths(&p)
                    .filter(|p| !p.as_os_str().is_empty())
                    .map(|p| (p, SIGNATURES_ENV.to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let cfg = config::Config::current();
        let via = cfg
            .path
            .as_ref()
            .map_or_else(String::new, |p| p.display().to_string());
        v.extend(cfg.signatures.into_iter().map(|d| (d, via.clone())));
        v.extend(
            self.signatures
                .iter()
                .map(|d| (d.clone(), "--signatures".to_string())),
        );
        v
    }

    /// Records the libraries a loaded library came from, for every report
    /// ([`crate::report::provenance`]).
    fn record_provenance(&self, loaded: &Loaded, local: Option<&PathBuf>) {
        use crate::report::provenance::{Provenance, Source};
        let mut sources = Vec::new();
        if !self.no_builtin {
            sources.push(Source {
                kind: "builtin".into(),
                path: None,
                via: None,
            });
        }
        if let Some(p) = &config::Config::current().path {
            sources.push(Source {
                kind: "config".into(),
                path: Some(p.display().to_string()),
                via: None,
            });
        }
        let local = local.map(|d| (d.clone(), "the current folder".to_string()));
        sources.extend(
            self.dirs_via()
                .into_iter()
                .chain(local)
                .map(|(d, via)| Source {
                    kind: "folder".into(),
                    path: Some(d.display().to_string()),
                    via: Some(via),
                }),
        );
        let files = loaded.folder_signatures().into_iter().collect();
        crate::report::provenance::set(Provenance { sources, files });
    }

    /// What to load: the embedded library (unless `--no-builtin`), the folders
    /// ([`LibraryArgs::dirs`]) over it, through the cache ([`cache_dir`]).
    pub fn spec(&self) -> Spec {
        Spec {
            builtin: !self.no_builtin,
            dirs: self.dirs(),
            form: Form::Frozen,
            cache: cache_dir(),
        }
    }

    /// Loads the library ([`sources::load`]); a broken one is [`CliError::Broken`]
    /// (exit 3). A folder's `<id>.yaml` replaces the built-in file of that name (a note
    /// on stderr says which): an edited copy of a built-in signature just works.
    pub fn load(&self) -> anyhow::Result<Library> {
        Ok(self.load_spec(&self.spec(), None)?.library)
    }

    /// [`LibraryArgs::load`] with the working folder's own `./signatures` too, when the
    /// command runs in a signature repository ([`local_signatures`]): what `sig new`,
    /// `sig test` and `corpus add` work on is the library being edited, without
    /// `--signatures` (issue 31, shortfall 4). `--no-builtin`, `--signatures`,
    /// `CRASHDOC_SIGNATURES` or `crashdoc.toml`'s folders keep the library as given.
    pub fn load_here(&self) -> anyhow::Result<Library> {
        Ok(self.load_spec_here(self.spec())?.library)
    }

    /// [`LibraryArgs::load_here`] of another spec (`sig test`: the YAML form).
    pub fn load_spec_here(&self, mut spec: Spec) -> anyhow::Result<Loaded> {
        let local = local_for(&spec);
        spec.dirs.extend(local.clone());
        self.load_spec(&spec, local.as_ref())
    }

    /// Loads `spec`, says its notes and what it replaced on stderr, and records its
    /// provenance (`local`: the working folder's `./signatures`, when added).
    pub fn load_spec(&self, spec: &Spec, local: Option<&PathBuf>) -> anyhow::Result<Loaded> {
        let loaded = sources::load(spec).map_err(|errors| CliError::Broken {
            what: "the signature library has",
            errors,
        })?;
        for n in &loaded.notes {
            eprintln!(
                "crashdoc: note: {}",
                crate::knowledge::text::escape_control(n)
            );
        }
        if !loaded.replaced.is_empty() {
            eprintln!(
                "crashdoc: note: {} built-in signature(s) replaced by the folders' file of the same id: {}",
                loaded.replaced.len(),
                summary(&loaded.replaced, NOTE_IDS)
            );
        }
        self.record_provenance(&loaded, local);
        Ok(loaded)
    }
}

/// The folder `sig new`, `sig test` and `corpus add` read besides the others:
/// `./signatures`, when the command runs in a signature repository (a crashdoc checkout,
/// a team's library). It is trusted as `crashdoc.toml` is
/// ([`crate::knowledge::files::check_trusted`]: owned by you or root, writable by nobody
/// else; a symlink's own owner too); one that is not is not read, and a warning says
/// why.
pub fn local_signatures() -> Option<PathBuf> {
    use crate::knowledge::files::{check_owner, check_trusted};
    let dir = PathBuf::from(CHECKOUT_DIR);
    let link = std::fs::symlink_metadata(&dir).ok()?;
    let meta = std::fs::metadata(&dir).ok().filter(|m| m.is_dir())?;
    match check_owner(&link).and_then(|()| check_trusted(&meta)) {
        Ok(()) => Some(dir),
        Err(why) => {
            eprintln!(
                "crashdoc: warning: ./signatures is not read: {}",
                crate::knowledge::text::escape_control(&why)
            );
            None
        }
    }
}

/// The working folder's `./signatures` ([`local_signatures`]) a load of `spec` adds:
/// none when the library is given otherwise (`--no-builtin`, or any folder named by
/// `--signatures`, `CRASHDOC_SIGNATURES` or `crashdoc.toml`), or names it already.
pub fn local_for(spec: &Spec) -> Option<PathBuf> {
    if !spec.builtin || !spec.dirs.is_empty() {
        return None;
    }
    local_signatures().filter(|d| !names(&spec.dirs, d))
}

/// Whether `dirs` names `dir` already (the same folder, however written).
fn names(dirs: &[PathBuf], dir: &std::path::Path) -> bool {
    let canon = |p: &std::path::Path| p.canonicalize().ok();
    let want = canon(dir);
    dirs.iter()
        .any(|d| d == dir || (want.is_some() && canon(d) == want))
}

/// Ids named in the replacement note before "and N more".
const NOTE_IDS: usize = 5;

fn summary(ids: &[String], max: usize) -> String {
    let mut s = ids.iter().take(max).cloned().collect::<Vec<_>>().join(", ");
    if ids.len() > max {
        s.push_str(&format!(" and {} more", ids.len() - max));
    }
    s
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Colour for standard output.
    pub fn enabled(self) -> bool {
        self.enabled_for(std::io::stdout().is_terminal())
    }

    /// Colour for a destination that is (or is not) a terminal.
    pub fn enabled_for(self, terminal: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && terminal
            }
        }
    }
}

#[derive(Args, Debug, Clone, Default)]
pub struct EngineArgs {
    /// Matching engine: the prefilter (default) or brute force (the oracle).
    #[arg(long, value_enum, default_value_t = Matcher::Prefilter)]
    pub engine: Matcher,
}

impl EngineArgs {
    /// The engine's matcher this argument names.
    pub fn kind(&self) -> EngineKind {
        match self.engine {
            Matcher::Prefilter => EngineKind::Prefilter,
            Matcher::Brute => EngineKind::Brute,
        }
    }
}

/// `--engine`: the command-line names of [`EngineKind`] (the engine knows nothing of clap).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Matcher {
    /// One Aho-Corasick pass over the atoms, then confirmation of candidates.
    #[default]
    Prefilter,
    /// Every signature's conditions on every failure and line (the oracle).
    Brute,
}

/// Writes to standard output (a closed pipe comes back as an error that [`exit_for`]
/// ends quietly).
pub fn print(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Whether the error is a closed standard output (the reader went away).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The one place an error becomes an exit code and a message on stderr.
pub fn exit_for(e: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(e) {
        return ExitCode::from(EXIT_FOUND);
    }
    match e.downcast_ref::<CliError>() {
        Some(c @ CliError::Broken { .. }) => {
            eprintln!("{c}");
            ExitCode::from(EXIT_LIBRARY)
        }
        Some(c @ CliError::Unreadable(_)) => {
            eprintln!("{c}");
            ExitCode::from(EXIT_INPUT)
        }
        None => {
            // the whole chain: "cannot write the report: No space left on device"
            eprintln!("crashdoc: {e:#}");
            ExitCode::from(EXIT_INPUT)
        }
    }
}

/// Parses the command line and runs the command.
pub fn run() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(e) = suggest::mistyped_subcommand(&args) {
        let _ = e.print();
        return ExitCode::from(EXIT_INPUT);
    }
    // read before the arguments are parsed: its `format` and `top` are their defaults
    let loaded = config::Config::load_current(no_config_arg(&args));
    // the examples only matter to help: start-up does not build them otherwise
    let wants_help = args
        .iter()
        .any(|a| a == "-h" || a == "--help" || a == "help");
    let base = if wants_help {
        examples::with_examples(Cli::command())
    } else {
        Cli::command()
    };
    let cmd = match loaded {
        Ok(cfg) => with_config_defaults(base, cfg),
        // --version, --help and the commands that never read it still work
        Err(_) => base,
    };
    let mut matches = cmd.get_matches_from(args);
    let cli = match Cli::from_arg_matches_mut(&mut matches) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(EXIT_INPUT);
        }
    };
    let reads_config = !matches!(
        cli.command,
        Some(Command::Completions(_) | Command::Man(_) | Command::Schema(_))
    );
    if reads_config {
        match loaded {
            Err(e) => {
                eprintln!(
                    "crashdoc: {} (--no-config or {}=1 runs without it)",
                    crate::knowledge::text::escape_control(e),
                    config::NO_CONFIG_ENV
                );
                return ExitCode::from(EXIT_INPUT);
            }
            Ok(c) => {
                if let Some(why) = &c.ignored {
                    eprintln!(
                        "crashdoc: warning: {}",
                        crate::knowledge::text::escape_control(why)
                    );
                }
            }
        }
    }
    dispatch(cli).unwrap_or_else(|e| exit_for(&e))
}

/// Whether `--no-config` is on the command line (before a `--`): config discovery runs
/// before clap parses the arguments.
fn no_config_arg(args: &[std::ffi::OsString]) -> bool {
    args.iter()
        .skip(1)
        .take_while(|a| a.as_os_str() != "--")
        .any(|a| a.as_os_str() == "--no-config")
}

/// `crashdoc.toml`'s `format` and `top` as the defaults of `diagnose` (an option on the
/// command line still wins).
fn with_config_defaults(cmd: clap::Command, cfg: &config::Config) -> clap::Command {
    let top: Option<&'static str> = cfg.top.map(|n| &*Box::leak(n.to_string().into_boxed_str()));
    let set = |c: clap::Command| {
        let c = match cfg.format {
            Some(f) => c.mut_arg("format", |a| a.default_value(f)),
            None => c,
        };
        match top {
            Some(t) => c.mut_arg("top", |a| a.default_value(t)),
            None => c,
        }
    };
    let cmd = set(cmd);
    cmd.mut_subcommand("diagnose", set)
}

/// `crashdoc diagnose`, or `--follow`: the two readings of one set of options.
fn diagnose_or_follow(a: &diagnose::DiagnoseArgs) -> anyhow::Result<ExitCode> {
    if a.follow.follow {
        follow::run(a)
    } else {
        diagnose::run_diagnose(a)
    }
}

fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        None => diagnose_or_follow(&cli.diagnose),
        Some(Command::Diagnose(a)) => diagnose_or_follow(&a),
        Some(Command::Run(a)) => run::run_run(&a),
        Some(Command::Extract(a)) => diagnose::run_extract(&a),
        Some(Command::Sig(c)) => sig::run(c),
        Some(Command::Bench(c)) => bench::run(c),
        Some(Command::Corpus(c)) => corpus::run(c),
        Some(Command::Explain(a)) => contrib::run_explain(&a),
        Some(Command::Preflight(a)) => preflight::run_preflight(&a),
        Some(Command::Rules(c)) => preflight::run_rules(c),
        Some(Command::Schema(a)) => schema::run_schema(&a),
        Some(Command::Completions(a)) => install::run_completions(&a),
        Some(Command::Man(a)) => install::run_man(&a),
    }
}

/// A value that lives until the process ends: it is not dropped. Freeing a library's
/// tens of thousands of strings when a short run ends cost about a millisecond of its
/// start-up budget (issue 20), and the operating system takes the memory back anyway.
pub(crate) fn process_long<T>(value: T) -> std::mem::ManuallyDrop<T> {
    std::mem::ManuallyDrop::new(value)
}

/// The folder of compiled libraries kept between runs
/// ([`crate::knowledge::cache::compile_cached`]): `$CRASHDOC_CACHE_DIR` (empty: no
/// cache), else `$XDG_CACHE_HOME/crashdoc`, else `$HOME/.cache/crashdoc`; relative paths
/// of the last two are ignored, as the XDG specification says.
pub(crate) fn cache_dir() -> Option<PathBuf> {
    if let Some(v) = std::env::var_os("CRASHDOC_CACHE_DIR") {
        return (!v.is_empty()).then(|| PathBuf::from(v));
    }
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    std::env::var_os("XDG_CACHE_HOME")
        .and_then(absolute)
        .map(|p| p.join("crashdoc"))
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(absolute)
                .map(|p| p.join(".cache").join("crashdoc"))
        })
}
