//! Every remediation command of the embedded library, filled with arbitrary values through
//! the path the CLI takes ([`render_step_list`]: the capture's full-match pattern, the
//! value checks, the quoting for the placeholder's context), checked against the
//! shell-parse invariant.
//!
//! For each template and each of its variables, the fuzzed value goes into that variable
//! (the others get a plain value their pattern accepts), and once more into every
//! variable at once. A refused value (no command, a note) is fine. A rendered command is
//! tokenized by [`tokenize`] (POSIX shell rules as bash and dash apply them, plus what zsh
//! with `EXTENDED_GLOB` and interactive history expansion read specially) and compared
//! with the tokens of a reference rendering in which each placeholder holds a plain token
//! (`zqx0tok`, …). The invariant:
//! - the same control operators, redirections and comments, in the same places, and the
//!   same number of words: the value introduced no `;`, `|`, `&`, `(`, `<`, `>`, newline
//!   or `#` comment, and was not split;
//! - each word's literal text is the reference word's with each token replaced by its
//!   value: the value lands inside exactly the word(s) the template put it in;
//! - every character that came from a value is quoted (single quotes, double quotes,
//!   backslash) or is a bare character no shell reads specially (`[A-Za-z0-9._+:/@%,=-]`,
//!   not `=` or `-` first in a word): no unquoted expansion (`$`, `` ` ``, `~`), glob
//!   (`*?[]`, zsh's `^ # ~`), brace (`{}`) or history (`!`) character from a value;
//! - the template's own expansions (`"$(id -u)"`, `"$PATH"`, a `*`) are unchanged.
#![no_main]

use std::collections::BTreeMap;
use std::sync::LazyLock;

use crashdoc::engine::remedy::render_step_list;
use crashdoc::env::Facts;
use crashdoc::knowledge::signature::compile::{Signature, Step};
use crashdoc::knowledge::signature::template::{quote, Piece, Quoting};
use crashdoc::knowledge::signature::{self, Library, LibrarySource, SigIndex};
use libfuzzer_sys::fuzz_target;

/// How the shell reads one character of a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Inside quotes or after a backslash: a literal.
    Quoted,
    /// Unquoted, and not special: a literal.
    Bare,
    /// Unquoted and special (a glob, brace, tilde, history or zsh extended-glob
    /// character), or part of an expansion (`$…`, `` `…` ``) even inside double quotes.
    Special,
}

/// A shell token: a word (each character with how it is read), an operator, or a comment.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Word(Vec<(char, Kind)>),
    Op(String),
    Comment(String),
}

/// Bare characters no shell treats specially (the quoting's "plain" set).
fn inert(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._+:/@%,=-".contains(c)
}

/// Splits a command line the way a POSIX shell (bash, dash) does, marking what zsh with
/// `EXTENDED_GLOB` and history expansion would read specially too. Only what the
/// invariant needs: words with each character's [`Kind`], control and redirection
/// operators, comments; an expansion is kept whole (`$(…)` with its nesting, `${…}`,
/// `$name`, `` `…` ``, `$'…'`) and marked special. `Err` for an unterminated quote or
/// expansion.
fn tokenize(s: &str) -> Result<Vec<Tok>, String> {
    let cs: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut word: Vec<(char, Kind)> = Vec::new();
    let mut in_word = false;
    let mut i = 0;
    let flush = |word: &mut Vec<(char, Kind)>, in_word: &mut bool, out: &mut Vec<Tok>| {
        if *in_word {
            out.push(Tok::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while i < cs.len() {
        let c = cs[i];
        match c {
            ' ' | '\t' => {
                flush(&mut word, &mut in_word, &mut out);
                i += 1;
            }
            '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => {
                flush(&mut word, &mut in_word, &mut out);
                let mut op = String::from(c);
                // two-character operators: && || ;; >> << >& <& >|
                if let Some(&n) = cs.get(i + 1) {
                    if matches!(
                        (c, n),
                        ('&', '&')
                            | ('|', '|')
                            | (';', ';')
                            | ('>', '>')
                            | ('<', '<')
                            | ('>', '&')
                            | ('<', '&')
                            | ('>', '|')
                    ) {
                        op.push(n);
                        i += 1;
                    }
                }
                out.push(Tok::Op(op));
                i += 1;
            }
            '#' if !in_word => {
                let end = cs[i..]
                    .iter()
                    .position(|&x| x == '\n')
                    .map_or(cs.len(), |p| i + p);
                out.push(Tok::Comment(cs[i..end].iter().collect()));
                i = end;
            }
            '\'' => {
                in_word = true;
                let end = cs[i + 1..]
                    .iter()
                    .position(|&x| x == '\'')
                    .ok_or("unterminated single quote")?;
                word.extend(cs[i + 1..i + 1 + end].iter().map(|&x| (x, Kind::Quoted)));
                i += end + 2;
            }
            '"' => {
                in_word = true;
                i += 1;
                loop {
                    let Some(&d) = cs.get(i) else {
                        return Err("unterminated double quote".into());
                    };
                    match d {
                        '"' => {
                            i += 1;
                            break;
                        }
                        '\\' => {
                            let n = *cs.get(i + 1).ok_or("backslash at the end")?;
                            if matches!(n, '$' | '`' | '"' | '\\' | '\n') {
                                word.push((n, Kind::Quoted));
                            } else {
                                word.push(('\\', Kind::Quoted));
                                word.push((n, Kind::Quoted));
                            }
                            i += 2;
                        }
                        '$' | '`' => i = expansion(&cs, i, &mut word)?,
                        // history expansion in interactive bash and zsh
                        '!' => {
                            word.push((d, Kind::Special));
                            i += 1;
                        }
                        _ => {
                            word.push((d, Kind::Quoted));
                            i += 1;
                        }
                    }
                }
            }
            '\\' => {
                in_word = true;
                let n = *cs.get(i + 1).ok_or("backslash at the end")?;
                if n != '\n' {
                    word.push((n, Kind::Quoted));
                }
                i += 2;
            }
            '$' | '`' => {
                in_word = true;
                i = expansion(&cs, i, &mut word)?;
            }
            _ => {
                // `=` first in a word is zsh's `=cmd` expansion; `~`, globs, braces,
                // `!`, zsh's `^` and `#` anywhere
                let first = !in_word;
                in_word = true;
                let kind = if inert(c) && !(first && c == '=') {
                    Kind::Bare
                } else {
                    Kind::Special
                };
                word.push((c, kind));
                i += 1;
            }
        }
    }
    flush(&mut word, &mut in_word, &mut out);
    Ok(out)
}

/// Reads an expansion starting at `cs[i]` (`$` or `` ` ``) into `word` as special
/// characters; returns the index after it.
fn expansion(cs: &[char], i: usize, word: &mut Vec<(char, Kind)>) -> Result<usize, String> {
    let end = if cs[i] == '`' {
        let mut j = i + 1;
        loop {
            match cs.get(j) {
                None => return Err("unterminated backquote".into()),
                Some('\\') => j += 2,
                Some('`') => break j + 1,
                Some(_) => j += 1,
            }
        }
    } else {
        match cs.get(i + 1) {
            Some('(') | Some('{') => {
                // to the matching bracket, skipping quoted text
                let (open, close) = if cs[i + 1] == '(' {
                    ('(', ')')
                } else {
                    ('{', '}')
                };
                let mut depth = 0usize;
                let mut j = i + 1;
                loop {
                    match cs.get(j) {
                        None => return Err("unterminated expansion".into()),
                        Some('\\') => j += 2,
                        Some('\'') => {
                            let e = cs[j + 1..]
                                .iter()
                                .position(|&x| x == '\'')
                                .ok_or("unterminated quote in an expansion")?;
                            j += e + 2;
                        }
                        Some('"') => {
                            j += 1;
                            while let Some(&x) = cs.get(j) {
                                if x == '\\' {
                                    j += 2;
                                    continue;
                                }
                                j += 1;
                                if x == '"' {
                                    break;
                                }
                            }
                        }
                        Some(&x) if x == open => {
                            depth += 1;
                            j += 1;
                        }
                        Some(&x) if x == close => {
                            depth -= 1;
                            j += 1;
                            if depth == 0 {
                                break j;
                            }
                        }
                        Some(_) => j += 1,
                    }
                }
            }
            Some('\'') => {
                let e = cs[i + 2..]
                    .iter()
                    .position(|&x| x == '\'')
                    .ok_or("unterminated $'")?;
                i + 2 + e + 1
            }
            Some(c) if c.is_ascii_alphanumeric() || *c == '_' => {
                let mut j = i + 1;
                while cs
                    .get(j)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    j += 1;
                }
                j
            }
            Some(_) => i + 2,
            None => i + 1,
        }
    };
    let end = end.min(cs.len());
    word.extend(cs[i..end].iter().map(|&x| (x, Kind::Special)));
    Ok(end)
}

/// A plain token per variable position: alphanumeric, so inert in every shell.
fn token(i: usize) -> String {
    format!("zqx{i}tok")
}

include!("../../tests/support/plain_values.rs");

/// One template ready for the check.
struct Target {
    sig: SigIndex,
    step: Step,
    vars: Vec<String>,
    benign: Vec<String>,
}

static LIB: LazyLock<Library> =
    LazyLock::new(|| signature::load(&[LibrarySource::Builtin]).expect("the embedded library"));

static TARGETS: LazyLock<Vec<Target>> = LazyLock::new(|| {
    let mut out = Vec::new();
    for (si, sig) in LIB.signatures.indexed() {
        for step in &sig.prose.remediation {
            let Some(t) = &step.command else { continue };
            let mut vars: Vec<String> = Vec::new();
            for v in t.variables() {
                if !vars.iter().any(|x| x == v) {
                    vars.push(v.to_string());
                }
            }
            // only values read from the log (captures, the unit): not environment facts
            if vars.is_empty() || vars.iter().any(|v| !is_log_value(sig, v)) {
                continue;
            }
            let benign = vars
                .iter()
                .map(|v| benign_for(sig, v).expect("a plain value for every capture"))
                .collect();
            out.push(Target {
                sig: si,
                // the step's condition is not under test: render it whatever the facts
                step: Step {
                    condition: None,
                    ..step.clone()
                },
                vars,
                benign,
            });
        }
    }
    assert!(out.len() > 50, "{} templates", out.len());
    out
});

fn is_log_value(sig: &Signature, v: &str) -> bool {
    sig.capture_patterns.contains_key(v) || v == "unit"
}

static FACTS: LazyLock<Facts> = LazyLock::new(Facts::default);

/// Renders `t` through the CLI's path with `values` (one per variable).
fn render(t: &Target, values: &[&str]) -> Option<String> {
    let sig = &LIB.signatures[t.sig];
    let mut captures = BTreeMap::new();
    let mut unit = None;
    for (v, x) in t.vars.iter().zip(values) {
        if sig.capture_patterns.contains_key(v) {
            captures.insert(v.clone(), x.to_string());
        } else {
            unit = Some(x.to_string());
        }
    }
    let r = render_step_list(
        std::slice::from_ref(&t.step),
        &captures,
        &sig.capture_patterns,
        unit.as_deref(),
        &FACTS,
    );
    assert_eq!(r.len(), 1);
    let step = r.into_iter().next()?;
    if step.command.is_none() {
        let note = step.note.as_deref().unwrap_or("");
        assert!(
            note.contains("refused") || note.contains("needs"),
            "no command and no reason: {note}"
        );
    }
    step.command
}

/// The template with token `i` for each variable `i` in `which`, the benign value for the
/// others (all plain, so exactly what rendering would give them).
fn reference(t: &Target, which: &[bool]) -> String {
    let sig = &LIB.signatures[t.sig];
    let Some(tpl) = &t.step.command else {
        unreachable!()
    };
    let _ = sig;
    let mut s = String::new();
    for p in &tpl.pieces {
        match p {
            Piece::Text(x) => s.push_str(x),
            Piece::Var { name, quoting } => {
                let i = t.vars.iter().position(|v| v == name).expect("a variable");
                let x = if which[i] {
                    token(i)
                } else {
                    t.benign[i].clone()
                };
                assert_eq!(quote(&x, *quoting), x);
                s.push_str(&x);
            }
        }
    }
    s
}

/// Checks the invariant on `got` (rendered with `values`) against the reference `reference`
/// whose tokens stand for the values in `which`; `Err` says what broke.
fn check(
    t: &Target,
    reference: &str,
    got: &str,
    values: &[&str],
    which: &[bool],
) -> Result<(), String> {
    let ctx =
        || {
            format!(
            "template {:?} ({}), values {values:?}\n  reference: {reference}\n  rendered:  {got}",
            t.step.command.as_ref().map(|c| c.source.as_str()).unwrap_or(""),
            LIB.signatures[t.sig].id
        )
        };
    let want = tokenize(reference).map_err(|e| format!("the reference: {e}: {}", ctx()))?;
    let have = tokenize(got).map_err(|e| format!("{e}: {}", ctx()))?;
    if want.len() != have.len() {
        return Err(format!(
            "the value added or removed words or operators\n  {want:?}\n  {have:?}\n{}",
            ctx()
        ));
    }
    let tokens: Vec<(String, usize)> = (0..t.vars.len())
        .filter(|&i| which[i])
        .map(|i| (token(i), i))
        .collect();
    for (w, h) in want.iter().zip(&have) {
        let (Tok::Word(w), Tok::Word(h)) = (w, h) else {
            if w != h {
                return Err(format!(
                    "an operator or a comment changed: {w:?} -> {h:?}\n{}",
                    ctx()
                ));
            }
            continue;
        };
        // expected: the reference word with each token replaced by its value, each
        // value character marked as coming from a value (None)
        let mut exp: Vec<(char, Option<Kind>)> = Vec::new();
        let mut k = 0;
        'outer: while k < w.len() {
            for (tok, i) in &tokens {
                let n = tok.chars().count();
                if k + n <= w.len() && w[k..k + n].iter().map(|(c, _)| *c).eq(tok.chars()) {
                    exp.extend(values[*i].chars().map(|c| (c, None)));
                    k += n;
                    continue 'outer;
                }
            }
            exp.push((w[k].0, Some(w[k].1)));
            k += 1;
        }
        let exp_text: String = exp.iter().map(|(c, _)| *c).collect();
        let got_text: String = h.iter().map(|(c, _)| *c).collect();
        if exp_text != got_text {
            return Err(format!(
                "a word changed: {exp_text:?} -> {got_text:?}\n{}",
                ctx()
            ));
        }
        for (j, ((c, ek), (_, hk))) in exp.iter().zip(h).enumerate() {
            match ek {
                Some(k) if k != hk => {
                    return Err(format!(
                        "the template's own {c:?} is read differently\n{}",
                        ctx()
                    ))
                }
                Some(_) => {}
                None => {
                    let ok = *hk == Kind::Quoted
                        || (*hk == Kind::Bare && !(j == 0 && (*c == '-' || *c == '=')));
                    if !ok {
                        return Err(format!(
                            "the value's {c:?} is {hk:?} at {j} of its word\n{}",
                            ctx()
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// The check must be able to fail: for every template and variable, a value substituted
/// raw (no quoting) that escapes its context is caught — `$(…)` bare or in double quotes,
/// `'` in single quotes, and bare a `;`, a space, a glob, a brace, a tilde.
fn self_test() {
    for t in TARGETS.iter() {
        let Some(tpl) = &t.step.command else { continue };
        let n = t.vars.len();
        for v in 0..n {
            let quoting = tpl.pieces.iter().find_map(|p| match p {
                Piece::Var { name, quoting } if *name == t.vars[v] => Some(*quoting),
                _ => None,
            });
            let bad: &[&str] = match quoting {
                Some(Quoting::Single) => &["x';touch PWNED;'"],
                Some(Quoting::Double) => &["x$(touch PWNED)", "x\";touch PWNED;\""],
                _ => &[
                    "x$(touch PWNED)",
                    "x;touch PWNED",
                    "a b",
                    "x*",
                    "x{a,b}",
                    "x~y",
                ],
            };
            let which: Vec<bool> = (0..n).map(|j| j == v).collect();
            let r = reference(t, &which);
            for b in bad {
                let raw = r.replace(&token(v), b);
                let mut values: Vec<&str> = t.benign.iter().map(String::as_str).collect();
                values[v] = b;
                assert!(
                    check(t, &r, &raw, &values, &which).is_err(),
                    "the check misses the raw {b:?} in {raw}"
                );
            }
        }
    }
}

static CHECKED: LazyLock<()> = LazyLock::new(self_test);

const FORMS: &[&str] = &[
    "",
    "x",
    "/data/x",
    "1.0",
    "https://x.example/",
    "zqxother.",
    "/data/x/.cache/huggingface/",
];

// The input: its first byte picks the prefix the values are tried behind (so narrower
// capture patterns let them in), the rest (lossy UTF-8) is the values, NUL-separated.
fuzz_target!(|data: &[u8]| {
    LazyLock::force(&CHECKED);
    let Some((&form, rest)) = data.split_first() else {
        return;
    };
    let prefix = FORMS[form as usize % FORMS.len()];
    let text = String::from_utf8_lossy(rest);
    let fuzzed: Vec<String> = text.split('\0').map(|v| format!("{prefix}{v}")).collect();
    for t in TARGETS.iter() {
        let n = t.vars.len();
        // the value in one variable at a time
        for i in 0..n {
            let mut values: Vec<&str> = t.benign.iter().map(String::as_str).collect();
            values[i] = &fuzzed[i % fuzzed.len()];
            let which: Vec<bool> = (0..n).map(|j| j == i).collect();
            if let Some(got) = render(t, &values) {
                if let Err(e) = check(t, &reference(t, &which), &got, &values, &which) {
                    panic!("{e}");
                }
            }
        }
        // and in every variable at once
        if n > 1 {
            let values: Vec<&str> = (0..n).map(|i| fuzzed[i % fuzzed.len()].as_str()).collect();
            let which = vec![true; n];
            if let Some(got) = render(t, &values) {
                if let Err(e) = check(t, &reference(t, &which), &got, &values, &which) {
                    panic!("{e}");
                }
            }
        }
    }
});
