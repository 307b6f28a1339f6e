//! Remediation rendering on arbitrary templates and arbitrary captured values.
//!
//! A template is parsed (or refused with an offset inside it); a parsed template is
//! rendered with fuzzed values, each checked against one of a few capture patterns like
//! those signatures use. Checked beyond "no panic":
//! - a refused or missing value is an error, never partial output;
//! - rendered output holds no control character the template text did not hold;
//! - each value, quoted for its context, cannot leave that context: in single quotes
//!   no bare `'` remains, in double quotes no unescaped `"`, `$` or `` ` `` (but for the
//!   `"'!'"` and `"'`'"` that leave the quotes for a single-quoted `!` or `` ` ``), and a bare
//!   value is either shell-inert or single-quoted.
#![no_main]

use std::collections::HashMap;
use std::sync::LazyLock;

use crashdoc::knowledge::signature::template::{quote, Piece, Quoting, Template};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use regex::Regex;

#[derive(Debug, Arbitrary)]
struct Input {
    template: String,
    values: Vec<(String, String, u8)>,
}

static PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"^(?:.+)$",
        r"^(?:[0-9]+)$",
        r"^(?:[A-Za-z0-9_./-]+)$",
        r"^(?:\S+)$",
    ]
    .iter()
    .map(|p| Regex::new(p).unwrap())
    .collect()
});

fn single_safe(q: &str) -> bool {
    !q.replace("'\\''", "").contains('\'')
}

fn double_safe(q: &str) -> bool {
    // `!` and `` ` `` leave the double quotes for single quotes of their own: `"'!'"`
    let q = q.replace("\"'!'\"", "").replace("\"'`'\"", "");
    let mut chars = q.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '"' | '$' | '`' => return false,
            _ => {}
        }
    }
    true
}

fn bare_safe(q: &str) -> bool {
    let plain = q
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._+:/=@%,^-".contains(c));
    plain
        || (q.len() >= 2
            && q.starts_with('\'')
            && q.ends_with('\'')
            && single_safe(&q[1..q.len() - 1]))
}

fuzz_target!(|input: Input| {
    let t = match Template::parse(&input.template) {
        Ok(t) => t,
        Err(e) => {
            assert!(e.offset <= input.template.len());
            return;
        }
    };
    let values: HashMap<String, (String, usize)> = input
        .values
        .into_iter()
        .map(|(k, v, p)| (k, (v, p as usize % (PATTERNS.len() + 1))))
        .collect();
    let rendered = t.render(|name| {
        values
            .get(name)
            .map(|(v, p)| (v.as_str(), PATTERNS.get(*p)))
    });
    let template_controls = input.template.chars().filter(|c| c.is_control()).count();
    if let Ok(out) = rendered {
        assert!(
            out.chars().filter(|c| c.is_control()).count() <= template_controls,
            "a value brought a control character into {out:?}"
        );
        for p in &t.pieces {
            if let Piece::Var { name, quoting } = p {
                let Some((v, _)) = values.get(name) else {
                    panic!("rendered without a value for {name}");
                };
                assert!(!v.starts_with('-'), "an option-like value was rendered");
                let q = quote(v, *quoting);
                let ok = match quoting {
                    Quoting::Single => single_safe(&q),
                    Quoting::Double => double_safe(&q),
                    Quoting::Bare => bare_safe(&q),
                };
                assert!(ok, "{v:?} escapes its {quoting:?} context as {q:?}");
            }
        }
    }
});
