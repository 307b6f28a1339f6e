//! Atoms: the literals a signature cannot match without.
//!
//! The prefilter (one Aho-Corasick automaton over every signature's atoms) may report
//! false positives — a candidate is confirmed by the full conditions — but never false
//! negatives. So an atom set must be *necessary*: whenever the condition holds, at least
//! one atom of the set occurs in one line of the failure. [`necessary`] derives such a
//! set from a regex's HIR (regex-syntax): a literal is necessary; a concatenation needs
//! any one necessary child (the strongest is kept); an alternation needs one of each
//! branch; a repetition of at least one needs its child; optional parts, classes wider
//! than one letter's cases, and look-arounds give nothing.
//!
//! The automaton matches ASCII case-insensitively, so literals are kept lowercased and a
//! case-insensitive class like `[sS]` counts as the letter. Literals are split at line
//! joins (`\n`) and at the `": "` between an exception type and its message, since the
//! automaton scans one line at a time and a headline may join two lines.

use regex_syntax::hir::{Class, Hir, HirKind};

/// A set of alternatives; any one of them must occur.
pub type AtomSet = Vec<String>;

/// Shortest useful atom: shorter literals make the prefilter fire on everything.
pub const MIN_ATOM_LEN: usize = 3;

/// The necessary literals of a regex, or `None` when it has none of use.
pub fn necessary(hir: &Hir) -> Option<AtomSet> {
    let set = walk(hir)?;
    let mut out: AtomSet = Vec::new();
    for lit in set {
        let best = split_pieces(&lit)
            .into_iter()
            .max_by_key(|p| p.len())
            .unwrap_or_default();
        if best.len() < MIN_ATOM_LEN {
            return None;
        }
        if !out.contains(&best) {
            out.push(best);
        }
    }
    if out.is_empty() {
        None
    } else {
        Some(out)
    }
}

/// Splits a literal at the places where a headline may join lines.
pub fn split_pieces(lit: &str) -> Vec<String> {
    lit.split('\n')
        .flat_map(|p| p.split(": "))
        .map(|p| p.to_string())
        .collect()
}

/// Atoms of a plain literal (an exception name, a `contains:` text).
pub fn of_literal(lit: &str) -> Option<AtomSet> {
    let best = split_pieces(&lit.to_ascii_lowercase())
        .into_iter()
        .max_by_key(|p| p.len())?;
    (best.len() >= MIN_ATOM_LEN).then(|| vec![best])
}

/// Strength of a set: its weakest member's length (and fewer members is better).
pub fn strength(set: &AtomSet) -> (usize, std::cmp::Reverse<usize>) {
    (
        set.iter().map(|s| s.len()).min().unwrap_or(0),
        std::cmp::Reverse(set.len()),
    )
}

fn walk(hir: &Hir) -> Option<Vec<String>> {
    match hir.kind() {
        HirKind::Literal(lit) => {
            let s = String::from_utf8_lossy(&lit.0).to_ascii_lowercase();
            Some(vec![s])
        }
        HirKind::Class(c) => single_letter(c).map(|ch| vec![ch.to_string()]),
        HirKind::Capture(cap) => walk(&cap.sub),
        HirKind::Repetition(rep) => {
            if rep.min >= 1 {
                walk(&rep.sub)
            } else {
                None
            }
        }
        HirKind::Concat(children) => {
            // Merge runs of adjacent single-literal children (e.g. case-folded letters)
            // into longer literals, then keep the strongest set.
            let mut best: Option<Vec<String>> = None;
            let mut run = String::new();
            let consider = |cand: Vec<String>, best: &mut Option<Vec<String>>| {
                let better = match best {
                    None => true,
                    Some(b) => strength_of(&cand) > strength_of(b),
                };
                if better {
                    *best = Some(cand);
                }
            };
            for child in children {
                match walk(child) {
                    Some(set) if set.len() == 1 && is_exact(child) => run.push_str(&set[0]),
                    other => {
                        if !run.is_empty() {
                            consider(vec![std::mem::take(&mut run)], &mut best);
                        }
                        if let Some(set) = other {
                            consider(set, &mut best);
                        }
                    }
                }
            }
            if !run.is_empty() {
                consider(vec![run], &mut best);
            }
            best
        }
        HirKind::Alternation(branches) => {
            let mut all = Vec::new();
            for b in branches {
                all.extend(walk(b)?);
            }
            Some(all)
        }
        HirKind::Empty | HirKind::Look(_) => None,
    }
}

fn strength_of(set: &[String]) -> (usize, std::cmp::Reverse<usize>) {
    (
        set.iter()
            .map(|s| split_pieces(s).iter().map(|p| p.len()).max().unwrap_or(0))
            .min()
            .unwrap_or(0),
        std::cmp::Reverse(set.len()),
    )
}

/// Whether a child matches exactly its literal (so it can be glued to its neighbours).
fn is_exact(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Literal(_) => true,
        HirKind::Class(c) => single_letter(c).is_some(),
        HirKind::Capture(c) => is_exact(&c.sub),
        _ => false,
    }
}

/// A class that is one character, or one ASCII letter in both cases.
fn single_letter(c: &Class) -> Option<char> {
    let mut chars: Vec<char> = Vec::new();
    match c {
        Class::Unicode(u) => {
            for r in u.ranges() {
                let (a, b) = (r.start(), r.end());
                if (b as u32).saturating_sub(a as u32) > 2 {
                    return None;
                }
                let mut x = a as u32;
                while x <= b as u32 {
                    chars.push(char::from_u32(x)?);
                    x += 1;
                }
                if chars.len() > 3 {
                    return None;
                }
            }
        }
        Class::Bytes(bc) => {
            for r in bc.ranges() {
                if r.end().saturating_sub(r.start()) > 2 {
                    return None;
                }
                for x in r.start()..=r.end() {
                    chars.push(x as char);
                }
                if chars.len() > 3 {
                    return None;
                }
            }
        }
    }
    let lower: Vec<char> = chars
        .iter()
        .map(|c| c.to_ascii_lowercase())
        .filter(|c| c.is_ascii())
        .collect();
    let first = *lower.first()?;
    // all members fold to one ASCII character (`[sS]`, or the Kelvin sign with `[kK]`)
    if lower.iter().all(|&c| c == first)
        && chars.iter().filter(|c| c.is_ascii()).count() == lower.len()
    {
        Some(first)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn atoms(re: &str) -> Option<AtomSet> {
        necessary(&regex_syntax::parse(re).expect("regex"))
    }

    #[test]
    fn literal_runs() {
        assert_eq!(
            atoms(r"flashinfer-cubin version \((?P<cubin>[^)\s]+)\) does not match"),
            Some(vec!["flashinfer-cubin version (".to_string()])
        );
    }

    #[test]
    fn alternations_need_every_branch() {
        assert_eq!(
            atoms(r"(?:No CUDA GPUs are available|Found no NVIDIA driver)"),
            Some(vec![
                "no cuda gpus are available".into(),
                "found no nvidia driver".into()
            ])
        );
        assert_eq!(atoms(r"(?:abcdef|x)"), None);
    }

    #[test]
    fn case_insensitive_and_optional() {
        assert_eq!(
            atoms(r"(?i)out of memory"),
            Some(vec!["out of memory".into()])
        );
        assert_eq!(
            atoms(r"(?:CUDA )?out of memory"),
            Some(vec!["out of memory".into()])
        );
        assert_eq!(atoms(r"[0-9]+ MiB"), Some(vec![" mib".into()]));
        assert_eq!(atoms(r".*"), None);
    }

    #[test]
    fn split_at_headline_joins() {
        assert_eq!(
            atoms(r"RuntimeError: CUDA error: no kernel image"),
            Some(vec!["no kernel image".into()])
        );
    }
}
