//! The execution harness of issue 19: every remediation command of the embedded library,
//! filled with hostile values through the CLI's own rendering path
//! ([`crashdoc::engine::remedy::render_step_list`], the capture patterns and the
//! value checks included), is EXECUTED under bash, dash, zsh (`setopt extendedglob`) and
//! fish, with a `PATH` holding only stub programs that record their arguments, in an
//! empty working directory.
//!
//! What it proves, for each template × variable × hostile value × shell:
//! - a value the capture's pattern (or the value checks) refuses never reaches a command:
//!   the step has no command and a note saying why (counted as refused, which is safe);
//! - an accepted value runs exactly the programs the template runs, with exactly the
//!   arguments the template gives them, the value standing where the placeholder stood:
//!   the stubs' records equal those of a reference run of the same template in which the
//!   placeholder holds a plain token (`zqxval…`, inert in every shell), the token then
//!   replaced by the value. So the value is never split into several words, globbed,
//!   brace-expanded, tilde- or parameter-expanded, command-substituted, read as an
//!   option, nor does it run a program of its own (`touch PWNED`: `touch` is a stub too);
//! - nothing appears in the working directory or in `HOME` (the `touch` stub creates its
//!   files there, as the real one would) and no file named `PWNED` appears anywhere under
//!   the test's folder.
//!
//! Each command runs in a subshell of its own (`( . FILE )`; fish: `source FILE`) of one
//! shell process per shell, so a command, or its syntax error, cannot affect the next.
//! Not covered here: interactive history expansion (`!!` in a pasted line: scripts do no
//! history expansion; the quoting keeps `!` in single quotes, checked by the
//! `remediation` fuzz target's tokenizer and `remediation_safety.rs`), and what a program
//! does with the argument it is given.
//!
//! A reference run must reach the token under bash and dash for every template (else the
//! comparison would be vacuous); where zsh or fish cannot run a template as written (a
//! glob in the template that matches nothing is an error in both), the count is printed.
//! A shell that is not installed is skipped, and the test prints so.
//!
//! Every value, stub and file here is CONSTRUCTED test data, written by the test.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crashdoc::engine::remedy::render_step_list;
use crashdoc::knowledge::signature::compile::Step;
use crashdoc::knowledge::signature::template::{quote, Piece};
use tempfile::TempDir;

/// The plain token a reference run puts in place of the variable under test.
const TOKEN: &str = "zqxvaltok";

/// Hostile values (CONSTRUCTED): each is also tried behind the prefixes of
/// [`carriers`], so that captures with a narrower pattern (a path, a name, a version)
/// let some of them in.
fn hostile_cores() -> Vec<String> {
    let mut v: Vec<String> = [
        "$(touch PWNED)",
        "`touch PWNED`",
        "; touch PWNED",
        "' ; touch PWNED ; '",
        "\" ; touch PWNED ; \"",
        "\"$HOME\"",
        "$HOME",
        "${HOME}",
        "*",
        "?",
        "{a,b}",
        "{1..3}",
        "[ab]",
        "^x",
        "x#",
        "a~b",
        "!!",
        "!$",
        "-rf",
        "--output=/etc/x",
        "a\ntouch PWNED",
        "a\rtouch PWNED",
        "a\ttouch PWNED",
        "~root",
        "~",
        "=ls",
        "%1",
        "#x",
        "a b",
        "x|touch PWNED",
        "x&&touch PWNED",
        "x&touch PWNED",
        "x>PWNED",
        "x<PWNED",
        "(touch PWNED)",
        "a'b",
        "a\"b",
        "a\\b",
        "a\\$(touch PWNED)",
        "a\\`touch PWNED\\`",
        "x\u{202e}y",
        "a@(b)",
        "$'\\x41'",
        "\\",
        "a\\'b",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // a 4 KiB value made of everything above that a single word may hold
    let mut big = String::from("x");
    while big.len() < 4096 {
        big.push_str("$(touch PWNED)`touch PWNED`;*?[ab]{a,b}^x~root!!'\"a b|&<>");
    }
    big.truncate(4096);
    v.push(big);
    v
}

/// The forms each hostile core is tried in.
fn carriers(core: &str) -> Vec<String> {
    vec![
        core.to_string(),
        format!("x{core}"),
        format!("/data/x{core}"),
        format!("1.0{core}"),
        format!("x{core}.service"),
        format!("https://x.example/{core}"),
        format!("/data/x/.cache/huggingface/{core}"),
        format!("/data/x{core}/libstdc++.so.6"),
    ]
}

include!("../support/plain_values.rs");

/// A rendered command and what it was made from.
#[derive(Debug, Clone)]
struct Case {
    /// Index into the references (the template and variable).
    reference: usize,
    value: String,
    command: String,
}

#[derive(Debug, Clone)]
struct Reference {
    signature: String,
    template: String,
    var: String,
    /// The template with [`TOKEN`] for the variable and plain values for the others.
    command: String,
}

/// One recorded program run: its name, then its arguments.
type Run = Vec<String>;

/// What the library gives: references, cases, the number of refused values and of
/// templates without a variable.
struct Plan {
    references: Vec<Reference>,
    cases: Vec<Case>,
    refused: usize,
    attempts: usize,
    no_variable: usize,
    templates: usize,
    /// Variables no plain value was found for (the test fails on any).
    no_benign: Vec<String>,
}

/// `all_forms`: every form of every hostile value; else, per value, its first form the
/// capture lets in (or every form, all refused).
fn plan(all_forms: bool) -> Plan {
    let lib = crate::util::library();
    let facts = crashdoc::env::Facts::default();
    let cores = hostile_cores();
    // each core in its forms, without repeats
    let mut seen = BTreeSet::new();
    let values: Vec<Vec<String>> = cores
        .iter()
        .map(|c| {
            carriers(c)
                .into_iter()
                .filter(|v| seen.insert(v.clone()))
                .collect()
        })
        .collect();
    let mut p = Plan {
        references: Vec::new(),
        cases: Vec::new(),
        refused: 0,
        attempts: 0,
        no_variable: 0,
        templates: 0,
        no_benign: Vec::new(),
    };
    let mut seen_ref: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    let mut seen_cmd: BTreeSet<(usize, String)> = BTreeSet::new();
    for sig in &lib.signatures {
        for step in &sig.prose.remediation {
            let Some(t) = &step.command else { continue };
            p.templates += 1;
            // the step's condition is not under test: render it whatever the facts
            let step = Step {
                condition: None,
                ..step.clone()
            };
            let vars: BTreeSet<&str> = t.variables().collect();
            if vars.is_empty() {
                p.no_variable += 1;
                continue;
            }
            let is_capture = |v: &str| sig.capture_patterns.contains_key(v);
            // a plain value for every variable its pattern accepts
            let mut benign: BTreeMap<&str, String> = BTreeMap::new();
            for v in &vars {
                let Some(b) = benign_for(sig, v) else {
                    p.no_benign
                        .push(format!("{}: `{v}` in {}", sig.id, t.source));
                    continue;
                };
                benign.insert(v, b);
            }
            if benign.len() < vars.len() {
                continue;
            }
            let render = |target: &str, value: &str| {
                let mut captures = BTreeMap::new();
                let mut unit = None;
                for v in &vars {
                    let x = if *v == target {
                        value
                    } else {
                        benign[v].as_str()
                    };
                    if is_capture(v) {
                        captures.insert(v.to_string(), x.to_string());
                    } else if *v == "unit" {
                        unit = Some(x.to_string());
                    }
                }
                let mut r = render_step_list(
                    std::slice::from_ref(&step),
                    &captures,
                    &sig.capture_patterns,
                    unit.as_deref(),
                    &facts,
                );
                assert_eq!(r.len(), 1, "{}: {}", sig.id, t.source);
                r.remove(0)
            };
            for var in &vars {
                if !is_capture(var) && *var != "unit" {
                    // an environment fact (`env.…`): not read from the log
                    continue;
                }
                let filled = render(var, &benign[var]);
                assert!(
                    filled.command.is_some(),
                    "{}: the plain values do not render {}: {:?}",
                    sig.id,
                    t.source,
                    filled.note
                );
                let mut reference = String::new();
                for piece in &t.pieces {
                    match piece {
                        Piece::Text(s) => reference.push_str(s),
                        Piece::Var { name, quoting } => {
                            let x = if name == var {
                                TOKEN
                            } else {
                                benign[name.as_str()].as_str()
                            };
                            assert_eq!(quote(x, *quoting), x, "a plain value is not plain");
                            reference.push_str(x);
                        }
                    }
                }
                let key = (t.source.clone(), var.to_string(), reference.clone());
                let r = *seen_ref.entry(key).or_insert_with(|| {
                    p.references.push(Reference {
                        signature: sig.id.clone(),
                        template: t.source.clone(),
                        var: var.to_string(),
                        command: reference.clone(),
                    });
                    p.references.len() - 1
                });
                for forms in &values {
                    for value in forms {
                        p.attempts += 1;
                        let out = render(var, value);
                        let Some(command) = out.command else {
                            let note = out.note.unwrap_or_default();
                            assert!(
                                note.contains("refused"),
                                "{}: {value:?} in {}: no command and no refusal: {note}",
                                sig.id,
                                t.source
                            );
                            p.refused += 1;
                            continue;
                        };
                        if seen_cmd.insert((r, command.clone())) {
                            p.cases.push(Case {
                                reference: r,
                                value: value.clone(),
                                command,
                            });
                        }
                        if !all_forms {
                            break;
                        }
                    }
                }
            }
        }
    }
    p
}

/// The program names the templates run (and `touch`, `rm`, `id`, `sh`: what an injected
/// value would run), each to get a stub.
fn program_names(refs: &[Reference]) -> BTreeSet<String> {
    const BUILTINS: &[&str] = &[
        "echo", "printf", "cd", "export", "set", "test", "true", "false", "read", "source", "exec",
        "eval", "then", "do", "done", "if", "fi",
    ];
    let mut names: BTreeSet<String> = ["touch", "rm", "id", "sh", "bash", "cat", "ls", "sudo"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for r in refs {
        let mut start = true;
        for w in r
            .template
            .split(|c: char| c.is_whitespace() || "|;&()$`".contains(c))
            .chain(std::iter::once("|"))
        {
            if w.is_empty() {
                // a separator: the next word is a command
                start = true;
                continue;
            }
            if start
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.+-".contains(c))
                && !BUILTINS.contains(&w)
            {
                names.insert(w.to_string());
            }
            start = w == "sudo";
        }
    }
    names
}

const STUB: &str = r#"#!/bin/sh
# CONSTRUCTED test stub: records its name and its arguments (each prefixed, NUL-ended)
# in a file of its own, runs nothing, exits 0.
f="${CRASHDOC_REC:-$CRASHDOC_ORPHANS}/$$"
{ printf 'P%s\000' "${0##*/}"; if [ $# -gt 0 ]; then printf 'A%s\000' "$@"; fi; } > "$f"
"#;

/// `touch` creates its files in the working directory, as the real one does.
const TOUCH_TAIL: &str = "for a in \"$@\"; do : > \"$a\"; done\nexit 0\n";

struct Shell {
    name: &'static str,
    args: &'static [&'static str],
    fish: bool,
}

const SHELLS: &[Shell] = &[
    Shell {
        name: "bash",
        args: &["--norc", "--noprofile"],
        fish: false,
    },
    Shell {
        name: "dash",
        args: &[],
        fish: false,
    },
    Shell {
        name: "zsh",
        args: &["-f"],
        fish: false,
    },
    Shell {
        name: "fish",
        args: &["--no-config"],
        fish: true,
    },
];

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/bin".into(), "/bin".into()])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn write_exec(p: &Path, text: &str) {
    std::fs::write(p, text).expect("write stub");
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Every file under `dir`, relative.
fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() && !p.is_symlink() {
                stack.push(p.clone());
            }
            out.push(p.strip_prefix(dir).unwrap_or(&p).display().to_string());
        }
    }
    out.sort();
    out
}

/// The runs recorded in one command's folder, sorted.
fn records(dir: &Path) -> Vec<Run> {
    let mut runs = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let bytes = std::fs::read(e.path()).unwrap_or_default();
        let run: Run = bytes
            .split(|b| *b == 0)
            .filter(|f| !f.is_empty())
            .map(|f| String::from_utf8_lossy(&f[1..]).into_owned())
            .collect();
        runs.push(run);
    }
    runs.sort();
    runs
}

/// What one shell gave: the records of each command (references first, then cases) and
/// the shell's stderr.
struct ShellRun {
    records: Vec<Vec<Run>>,
    stderr: String,
    work_left: Vec<String>,
    pwned: Vec<String>,
    seconds: f64,
}

fn run_shell(shell: &Shell, exe: &Path, commands: &[&str], names: &BTreeSet<String>) -> ShellRun {
    let root = TempDir::new().expect("temp dir");
    let r = root.path();
    for d in [
        "bin", "rec", "cmds", "work", "home", "xdg", "orphans", "warmup",
    ] {
        std::fs::create_dir(r.join(d)).expect("mkdir");
    }
    for n in names {
        let tail = if n == "touch" { TOUCH_TAIL } else { "exit 0\n" };
        write_exec(&r.join("bin").join(n), &format!("{STUB}{tail}"));
    }
    let mut driver = String::new();
    if shell.name == "zsh" {
        driver.push_str("setopt extendedglob\n");
    }
    if shell.fish {
        // fish's own `ls` and `grep` functions probe the real program on their first
        // call (`ls --color=auto /`): run them once before the recorded commands
        let _ = writeln!(
            driver,
            "set -gx CRASHDOC_REC {}\nls >/dev/null; grep x /dev/null",
            r.join("warmup").display()
        );
    }
    for (i, c) in commands.iter().enumerate() {
        let rec = r.join("rec").join(i.to_string());
        std::fs::create_dir(&rec).expect("mkdir");
        let file = r.join("cmds").join(format!("{i}.sh"));
        std::fs::write(&file, format!("{c}\n")).expect("command file");
        // the folders are plain (a temp dir and digits): no quoting needed
        if shell.fish {
            let _ = writeln!(
                driver,
                "set -gx CRASHDOC_REC {}\nsource {}",
                rec.display(),
                file.display()
            );
        } else {
            // a subshell each: a command (or its syntax error) cannot touch the next
            let _ = writeln!(
                driver,
                "CRASHDOC_REC={}; export CRASHDOC_REC\n( . {} )",
                rec.display(),
                file.display()
            );
        }
    }
    let driver_path = r.join("driver");
    std::fs::write(&driver_path, driver).expect("driver");
    let before_bin = listing(&r.join("bin"));
    let mut child = Command::new(exe)
        .args(shell.args)
        .arg(&driver_path)
        .current_dir(r.join("work"))
        .env_clear()
        .env("PATH", r.join("bin"))
        .env("HOME", r.join("home"))
        .env("XDG_CONFIG_HOME", r.join("xdg"))
        .env("XDG_DATA_HOME", r.join("xdg"))
        .env("XDG_CACHE_HOME", r.join("xdg"))
        .env("XDG_RUNTIME_DIR", r.join("xdg"))
        .env("LC_ALL", "C.UTF-8")
        .env("CRASHDOC_ORPHANS", r.join("orphans"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the shell");
    let err = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut e) = err {
            use std::io::Read;
            let mut b = Vec::new();
            let _ = e.read_to_end(&mut b);
            s = String::from_utf8_lossy(&b).into_owned();
        }
        s
    });
    let t = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if t.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{} did not finish the commands in 300 s", shell.name);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let stderr = reader.join().unwrap_or_default();
    let seconds = t.elapsed().as_secs_f64();
    assert_eq!(
        listing(&r.join("bin")),
        before_bin,
        "{}: the stubs were changed",
        shell.name
    );
    let orphans = listing(&r.join("orphans"));
    assert!(
        orphans.is_empty(),
        "{}: a stub ran without a record folder",
        shell.name
    );
    let pwned = listing(r)
        .into_iter()
        .filter(|p| p.contains("PWNED"))
        .collect();
    ShellRun {
        records: (0..commands.len())
            .map(|i| records(&r.join("rec").join(i.to_string())))
            .collect(),
        stderr,
        // the working directory and HOME must stay empty
        work_left: listing(&r.join("work"))
            .into_iter()
            .chain(
                listing(&r.join("home"))
                    .into_iter()
                    .map(|p| format!("~/{p}")),
            )
            .collect(),
        seconds,
        pwned,
    }
}

fn show(runs: &[Run]) -> String {
    format!("{runs:?}").chars().take(600).collect::<String>()
}

#[test]
fn every_library_command_runs_hostile_values_as_one_literal_word_in_every_shell() {
    execute(false);
}

#[test]
#[ignore = "heavy: every form of every hostile value, about 6,700 commands x 4 shells (about 60 s release on 2 cores); run by `cargo test --release -- --ignored`"]
fn every_library_command_runs_every_form_of_every_hostile_value_in_every_shell() {
    execute(true);
}

/// Renders, executes and compares (see the module documentation).
fn execute(all_forms: bool) {
    let started = Instant::now();
    let p = plan(all_forms);
    assert!(
        p.no_benign.is_empty(),
        "no plain value fits these variables (add one to BENIGN): {:#?}",
        p.no_benign
    );
    assert!(p.references.len() > 50, "{} references", p.references.len());
    assert!(
        p.cases.len() > p.references.len(),
        "{} cases",
        p.cases.len()
    );
    let names = program_names(&p.references);
    let commands: Vec<&str> = p
        .references
        .iter()
        .map(|r| r.command.as_str())
        .chain(p.cases.iter().map(|c| c.command.as_str()))
        .collect();
    let shells: Vec<(&Shell, PathBuf)> = SHELLS
        .iter()
        .filter_map(|s| match which(s.name) {
            Some(p) => Some((s, p)),
            None => {
                eprintln!("SKIPPED: {} is not installed", s.name);
                None
            }
        })
        .collect();
    assert!(
        shells.iter().any(|(s, _)| s.name == "bash"),
        "bash is needed"
    );
    let results: Vec<(&Shell, ShellRun)> = std::thread::scope(|scope| {
        let handles: Vec<_> = shells
            .iter()
            .map(|(s, exe)| {
                let (commands, names) = (&commands, &names);
                scope.spawn(move || (*s, run_shell(s, exe, commands, names)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a shell thread"))
            .collect()
    });
    let nrefs = p.references.len();
    let mut failures = Vec::new();
    let mut summary = String::new();
    for (shell, run) in &results {
        if !run.work_left.is_empty() {
            failures.push(format!(
                "{}: files appeared in the working directory: {:?}",
                shell.name, run.work_left
            ));
        }
        if !run.pwned.is_empty() {
            failures.push(format!("{}: PWNED files: {:?}", shell.name, run.pwned));
        }
        let mut unreached = Vec::new();
        for (i, r) in p.references.iter().enumerate() {
            let reached = run.records[i]
                .iter()
                .any(|inv| inv.iter().skip(1).any(|a| a.contains(TOKEN)));
            if !reached {
                unreached.push(format!("{} ({}: {})", r.template, r.signature, r.var));
            }
        }
        if matches!(shell.name, "bash" | "dash") {
            for u in &unreached {
                failures.push(format!(
                    "{}: the reference run of {u} never passed the value to a program (a missing stub?); stderr: {}",
                    shell.name,
                    run.stderr.chars().take(400).collect::<String>()
                ));
            }
        }
        let mut compared = 0;
        for (j, c) in p.cases.iter().enumerate() {
            let expected: Vec<Run> = {
                let mut e: Vec<Run> = run.records[c.reference]
                    .iter()
                    .map(|inv| inv.iter().map(|a| a.replace(TOKEN, &c.value)).collect())
                    .collect();
                e.sort();
                e
            };
            let got = &run.records[nrefs + j];
            compared += 1;
            if *got != expected {
                let r = &p.references[c.reference];
                failures.push(format!(
                    "{}: {} ({}), `{}` = {:?}\n  command: {}\n  expected runs: {}\n  got runs:      {}",
                    shell.name,
                    r.template,
                    r.signature,
                    r.var,
                    c.value,
                    c.command,
                    show(&expected),
                    show(got)
                ));
            }
        }
        let _ = writeln!(
            summary,
            "  {} ({:.1} s): {compared} hostile commands compared, {} of {nrefs} templates×variables reached the value{}",
            shell.name,
            run.seconds,
            nrefs - unreached.len(),
            if unreached.is_empty() {
                String::new()
            } else {
                format!(" (not reached: {})", unreached.join("; "))
            }
        );
    }
    eprintln!(
        "shell execution harness: {} templates ({} without a variable), {} template×variable references, {} hostile renderings tried, {} refused, {} distinct commands accepted and executed × {} shells, {:.1} s\n{summary}",
        p.templates,
        p.no_variable,
        nrefs,
        p.attempts,
        p.refused,
        p.cases.len(),
        results.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures
            .iter()
            .take(15)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
