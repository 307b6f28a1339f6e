//! The examples that end every command's `--help` (as ripgrep's do) and the man page's
//! EXAMPLES and ENVIRONMENT sections: one table, set on the clap definition when the
//! command line is parsed ([`with_examples`]), so `--help`, `crashdoc man` and a test
//! that runs each example's arguments all read the same lines.

/// Each command path (`""` is crashdoc itself) and its examples (shell lines).
pub const EXAMPLES: &[(&str, &[&str])] = &[
    ("", &[
        "crashdoc tests/data/scenario/journal.txt          # diagnose a log file",
        "journalctl -u vllm -b --no-pager | crashdoc       # or a unit's journal",
        "crashdoc run -- torchrun --nproc-per-node 8 train.py   # run a job, diagnose it if it fails",
    ]),
    ("diagnose", &[
        "crashdoc diagnose --format markdown slurm-4242.out > issue.md",
        "crashdoc diagnose --env pip-list.txt --top 1 crash.log",
        "journalctl -fu vllm | crashdoc diagnose --follow",
    ]),
    ("run", &[
        "crashdoc run -- torchrun --nproc-per-node 8 train.py --config cfg.yaml",
        "crashdoc run --env -- vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2",
        "crashdoc run --format json -o diagnosis.json -- python train.py",
    ]),
    ("extract", &[
        "crashdoc extract crash.log",
        "crashdoc extract --format json crash.log | jq '.failures[0]'",
    ]),
    ("sig list", &["crashdoc sig list", "crashdoc sig list --format markdown > signatures.md"]),
    ("sig test", &["crashdoc sig test", "crashdoc sig test signatures/serving"]),
    ("sig new", &[
        "crashdoc sig new --from crash.log --source https://github.com/OWNER/REPO/issues/N",
        "crashdoc sig new --from crash.log --id vllm-my-failure --out signatures",
    ]),
    ("sig lint", &["crashdoc sig lint", "crashdoc sig lint signatures/serving/my-signature.yaml"]),
    ("sig diff", &["crashdoc sig diff", "crashdoc sig diff origin/main"]),
    ("corpus run", &[
        "crashdoc corpus run corpus/",
        "crashdoc corpus run corpus/ --baseline corpus/baseline.json",
    ]),
    ("corpus add", &["crashdoc corpus add crash.log --source https://github.com/OWNER/REPO/issues/N"]),
    ("corpus bless", &[
        "cargo build --release && ./target/release/crashdoc corpus bless   # in a crashdoc checkout",
        "crashdoc corpus bless --check                     # list the stale derived files, exit 1 if any",
    ]),
    ("explain", &[
        "crashdoc explain --signature torch-cuda-out-of-memory crash.log",
        "crashdoc explain --signature torch-cuda-out-of-memory --format json crash.log",
    ]),
    ("preflight", &["crashdoc preflight", "crashdoc preflight --python .venv/bin/python --strict"]),
    ("rules test", &["crashdoc rules test"]),
    ("schema", &["crashdoc schema diagnosis > diagnosis.schema.json"]),
    ("completions", &[
        "mkdir -p ~/.local/share/bash-completion/completions && crashdoc completions bash > ~/.local/share/bash-completion/completions/crashdoc",
    ]),
    ("man", &["crashdoc man > ~/.local/share/man/man1/crashdoc.1", "crashdoc man sig test | man -l -"]),
];

/// Every environment variable crashdoc reads, and what it does.
pub const ENVIRONMENT: &[(&str, &str)] = &[
    ("CRASHDOC_SIGNATURES", "Signature library folders to load over the embedded library (a path list, as PATH)."),
    ("CRASHDOC_CACHE_DIR", "The folder of compiled folder libraries (empty: no cache)."),
    ("XDG_CACHE_HOME", "The cache is XDG_CACHE_HOME/crashdoc when CRASHDOC_CACHE_DIR is unset (an absolute path only)."),
    ("HOME", "The cache is ~/.cache/crashdoc when neither of the above is set."),
    ("NO_COLOR", "Any non-empty value turns colour off (--color auto)."),
];

/// `Examples:` and the lines, as `--help` ends.
fn help_text(lines: &[&str]) -> String {
    let mut s = String::from("Examples:");
    for l in lines {
        s.push_str("\n  ");
        s.push_str(l);
    }
    s
}

/// Sets each command's examples as the end of its help (after what it had there).
pub fn with_examples(mut cmd: clap::Command) -> clap::Command {
    for (path, lines) in EXAMPLES {
        let text = help_text(lines);
        cmd = at_path(cmd, path, &|c: clap::Command| {
            let before = c.get_after_help().map(|h| h.to_string());
            match before {
                Some(b) if !b.contains("Examples:") => c.after_help(format!("{b}\n\n{text}")),
                Some(_) => c,
                None => c.after_help(text.clone()),
            }
        });
    }
    cmd
}

/// Applies `f` to the command at `path` (space-separated subcommand names).
fn at_path(
    cmd: clap::Command,
    path: &str,
    f: &dyn Fn(clap::Command) -> clap::Command,
) -> clap::Command {
    match path.split_once(' ') {
        _ if path.is_empty() => f(cmd),
        Some((first, rest)) => cmd.mut_subcommand(first, |c| at_path(c, rest, f)),
        None => cmd.mut_subcommand(path, f),
    }
}

/// The man page's EXAMPLES and ENVIRONMENT sections (roff) of the command at `path`.
pub fn man_sections(path: &str) -> String {
    let esc = |s: &str| s.replace('\\', "\\\\").replace('-', "\\-");
    let mut out = String::new();
    if let Some((_, lines)) = EXAMPLES.iter().find(|(p, _)| *p == path) {
        out.push_str(".SH EXAMPLES\n");
        for l in lines.iter() {
            out.push_str(&format!(".PP\n.nf\n{}\n.fi\n", esc(l)));
        }
    }
    out.push_str(".SH ENVIRONMENT\n");
    for (name, what) in ENVIRONMENT {
        out.push_str(&format!(".TP\n.B {name}\n{}\n", esc(what)));
    }
    out
}
