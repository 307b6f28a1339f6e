//! Typed indices into a compiled library.
//!
//! A signature is named by its id (a string, in files and in the JSON contract) and, once
//! compiled, by its place in [`Signatures`]: a [`SigIndex`]. The engine's hits, ranked
//! causes and links carry indices; the newtype keeps them from being mixed up with line
//! numbers, failure ids or counts, which are `usize` too. [`Signatures`] is indexed by a
//! [`SigIndex`] only; it reads as a slice for iteration.

use std::ops::{Deref, Index};

use serde::{Deserialize, Serialize};

use super::compile::Signature;

/// The place of a signature in its compiled library ([`Signatures`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SigIndex(pub usize);

/// The compiled signatures of a library, sorted by id; indexed by [`SigIndex`].
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Signatures(Vec<Signature>);

impl Signatures {
    /// The signatures, sorted by id (the order [`SigIndex`] refers to).
    pub fn new(mut v: Vec<Signature>) -> Self {
        v.sort_by(|a, b| a.id.cmp(&b.id));
        Signatures(v)
    }

    /// The signature at `i`, if the index is in range.
    pub fn get(&self, i: SigIndex) -> Option<&Signature> {
        self.0.get(i.0)
    }

    /// Every signature with its index.
    pub fn indexed(&self) -> impl Iterator<Item = (SigIndex, &Signature)> {
        self.0.iter().enumerate().map(|(i, s)| (SigIndex(i), s))
    }

    /// Every index, in order.
    pub fn indices(&self) -> impl Iterator<Item = SigIndex> {
        (0..self.0.len()).map(SigIndex)
    }

    /// The index of the signature with this id.
    pub fn position(&self, id: &str) -> Option<SigIndex> {
        self.0.iter().position(|s| s.id == id).map(SigIndex)
    }
}

impl Index<SigIndex> for Signatures {
    type Output = Signature;
    fn index(&self, i: SigIndex) -> &Signature {
        &self.0[i.0]
    }
}

impl Deref for Signatures {
    type Target = [Signature];
    fn deref(&self) -> &[Signature] {
        &self.0
    }
}

impl<'a> IntoIterator for &'a Signatures {
    type Item = &'a Signature;
    type IntoIter = std::slice::Iter<'a, Signature>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}
