//! What the category model ([`crate::knowledge::model`]) learns from a signature
//! library, and the embedded model attached to a library. The model itself knows only
//! documents (a class and a text): the signature types stay on this side, so that the
//! library, which carries a model, and the model do not import each other.

use super::compile::Signature;
use super::load::Library;
use super::model::Severity;
use crate::knowledge::model::{Doc, BENIGN};

/// Attaching the embedded model is the loader's ([`super::load`] imports nothing of
/// this module: the two would import each other).
pub use super::load::with_model;

/// The class a signature's documents train: its category, or [`BENIGN`](crate::knowledge::model::BENIGN).
fn class_of(s: &Signature) -> String {
    if s.severity == Severity::Benign {
        BENIGN.to_string()
    } else {
        s.category.as_str().to_string()
    }
}

/// A library's documents: each positive example of each signature, and its necessary
/// literals with its title (a code table's entry has its renderings' texts there) as one
/// more; and each category guide's title and explanation. A wrapper's examples (a
/// signature with `consequence_of`: "see the root cause above") are left out: they hold
/// the root's lines, of another category than the wrapper's, and would teach the model
/// that a root's words mean the wrapper's class; its literals (its own words) stay.
///
/// A title and a guide say what the failure *is* in the class's own words ("the job
/// reached its time limit", "the NVIDIA driver is older than the CUDA build needs"),
/// where an example holds the tool's words and the lines around them. On the knock-out
/// run (each incident diagnosed without the signature that explains it, so by the rest
/// of the library and the model), reading the titles of every signature took the top-1
/// category from 279 to 283 of 415, and the guides too to 285.
pub fn library_docs(lib: &Library) -> Vec<Doc> {
    let mut out = Vec::new();
    for s in &lib.signatures {
        let class = class_of(s);
        let doc = |text: String| Doc {
            class: class.clone(),
            text,
            signature: Some(s.id.clone()),
            incident: None,
            source: None,
        };
        if s.consequence_of.is_empty() {
            for e in &s.examples.matches {
                out.push(doc(e.log.clone()));
            }
        }
        let mut literals = s.atoms.join(" ");
        if !s.title.is_empty() {
            literals.push('\n');
            literals.push_str(&s.title);
        }
        if !literals.trim().is_empty() {
            out.push(doc(literals));
        }
    }
    for g in &lib.guides {
        out.push(Doc {
            class: g.category.as_str().to_string(),
            text: format!("{}\n{}", g.title, g.explain),
            signature: None,
            incident: None,
            source: None,
        });
    }
    out
}
