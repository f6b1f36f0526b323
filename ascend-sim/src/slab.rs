//! Allocation-free steady state for the hot objects (tensors, executors): a generation-checked
//! slab, and small inline vectors for dims and strides.
//!
//! A slab id is `generation << SLOT_BITS | slot`. A freed slot gets the next generation and
//! keeps the reason it died; free slots are reused first-in first-out and only once
//! [`QUARANTINE`] newer slots have been freed (so a stale handle's precise reason stays
//! known across many later objects, as in a sanitizer's quarantine), and a slot whose
//! generation would wrap is retired instead of reused. A handle is therefore never valid twice: stale or foreign
//! handles are always recognised, exactly as with never-reused ids, while the steady state
//! (create, destroy, create ...) touches no allocator once the slab has grown.

use std::collections::VecDeque;
use std::fmt;
use std::ops::{Deref, DerefMut};

/// Bits of the slot index in an id (16 M live objects per kind).
const SLOT_BITS: u32 = 24;
/// Bits of the generation (the rest of the 48-bit handle payload).
const GEN_BITS: u32 = 24;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;
const GEN_MAX: u32 = (1 << GEN_BITS) - 1;
/// Freed slots that wait before being reused.
pub(crate) const QUARANTINE: usize = 256;

struct Entry<T> {
    generation: u32,
    value: Option<T>,
    /// Why the previous generation died (for stale-handle messages).
    death: &'static str,
}

/// Generation-checked storage of live objects.
pub(crate) struct Slab<T> {
    entries: Vec<Entry<T>>,
    free: VecDeque<u32>,
    live: usize,
}

impl<T> Slab<T> {
    pub const fn new() -> Self {
        Slab {
            entries: Vec::new(),
            free: VecDeque::new(),
            live: 0,
        }
    }

    fn split(id: u64) -> (usize, u32) {
        ((id & SLOT_MASK) as usize, (id >> SLOT_BITS) as u32)
    }

    /// Stores `value` and returns its id (never 0).
    pub fn insert(&mut self, value: T) -> u64 {
        self.live += 1;
        if self.free.len() > QUARANTINE
            && let Some(slot) = self.free.pop_front()
        {
            let e = &mut self.entries[slot as usize];
            e.value = Some(value);
            return (u64::from(e.generation) << SLOT_BITS) | u64::from(slot);
        }
        let slot = self.entries.len() as u64;
        // Generation 1 for fresh slots: no id is 0.
        self.entries.push(Entry {
            generation: 1,
            value: Some(value),
            death: "never created",
        });
        (1 << SLOT_BITS) | slot
    }

    /// The slot `id` names, unless the slot has moved on to a later generation. A retired
    /// slot keeps its last generation without a value, so callers still check the value.
    fn current_slot(&self, id: u64) -> Option<usize> {
        let (slot, generation) = Self::split(id);
        (self.entries.get(slot)?.generation == generation).then_some(slot)
    }

    pub fn get(&self, id: u64) -> Option<&T> {
        self.entries[self.current_slot(id)?].value.as_ref()
    }

    pub fn get_mut(&mut self, id: u64) -> Option<&mut T> {
        let slot = self.current_slot(id)?;
        self.entries[slot].value.as_mut()
    }

    pub fn contains(&self, id: u64) -> bool {
        self.get(id).is_some()
    }

    /// Drops a live object in place; `death` explains later uses of its handle.
    pub fn discard(&mut self, id: u64, death: &'static str) -> bool {
        let Some(slot) = self.current_slot(id) else {
            return false;
        };
        let e = &mut self.entries[slot];
        if e.value.take().is_none() {
            return false;
        }
        self.live -= 1;
        e.death = death;
        if e.generation < GEN_MAX {
            e.generation += 1;
            self.free.push_back(slot as u32);
        }
        true
    }

    /// Why `id` is not live.
    pub fn why_dead(&self, id: u64) -> &'static str {
        let (slot, generation) = Self::split(id);
        match self.entries.get(slot) {
            Some(e) if generation != 0 && generation + 1 == e.generation => e.death,
            Some(e) if generation != 0 && generation < e.generation => {
                "released earlier; its slot has been reused since"
            }
            _ => "never created",
        }
    }

    pub fn len(&self) -> usize {
        self.live
    }
}

/// A short vector kept inline (up to `N` elements) and on the heap beyond: dims, strides
/// and storage shapes of descriptors (the operator accepts at most 8 dims).
#[derive(Clone)]
pub(crate) enum Small<T: Copy + Default, const N: usize> {
    Inline(u8, [T; N]),
    Heap(Vec<T>),
}

impl<T: Copy + Default, const N: usize> Small<T, N> {
    pub fn from_slice(s: &[T]) -> Self {
        if s.len() <= N {
            let mut a = [T::default(); N];
            a[..s.len()].copy_from_slice(s);
            Small::Inline(s.len() as u8, a)
        } else {
            Small::Heap(s.to_vec())
        }
    }

    /// `len` elements of `T::default()`.
    pub fn zeroed(len: usize) -> Self {
        if len <= N {
            Small::Inline(len as u8, [T::default(); N])
        } else {
            Small::Heap(vec![T::default(); len])
        }
    }
}

impl<T: Copy + Default, const N: usize> Default for Small<T, N> {
    fn default() -> Self {
        Small::Inline(0, [T::default(); N])
    }
}

impl<T: Copy + Default, const N: usize> Deref for Small<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Small::Inline(n, a) => &a[..*n as usize],
            Small::Heap(v) => v,
        }
    }
}

impl<T: Copy + Default, const N: usize> DerefMut for Small<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            Small::Inline(n, a) => &mut a[..*n as usize],
            Small::Heap(v) => v,
        }
    }
}

impl<T: Copy + Default + fmt::Debug, const N: usize> fmt::Debug for Small<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: Copy + Default + PartialEq, const N: usize> PartialEq for Small<T, N> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

/// Dims, strides or storage shape of a descriptor.
pub(crate) type Dims64 = Small<i64, 8>;
/// A shape in elements.
pub(crate) type Shape = Small<usize, 8>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generations_make_stale_ids_fail() {
        let mut s = Slab::new();
        let a = s.insert(1);
        assert_eq!(s.get(a), Some(&1));
        assert!(s.discard(a, "gone"));
        assert_eq!(s.get(a), None);
        assert_eq!(s.why_dead(a), "gone");
        let b = s.insert(2);
        assert_ne!(a, b);
        assert_eq!(s.get(a), None);
        assert_eq!(s.get(b), Some(&2));
        assert!(!s.discard(a, "x"));
        assert_eq!(s.len(), 1);
        // Slots come back only after the quarantine, and stale ids stay stale.
        let mut ids = Vec::new();
        for i in 0..3 * QUARANTINE {
            let id = s.insert(i);
            ids.push(id);
            s.discard(id, "churn");
        }
        assert!(s.entries.len() <= QUARANTINE + 3, "{}", s.entries.len());
        assert_eq!(s.get(a), None);
        assert!(ids.iter().all(|&id| s.get(id).is_none()));
        assert_eq!(s.why_dead(*ids.last().unwrap()), "churn");
        assert_eq!(s.why_dead(12345 << SLOT_BITS | 7), "never created");
    }

    #[test]
    fn small_spills() {
        let v = Dims64::from_slice(&[1, 2, 3]);
        assert_eq!(&*v, &[1, 2, 3]);
        assert!(matches!(v, Small::Inline(..)));
        let w = Dims64::from_slice(&[0; 9]);
        assert!(matches!(w, Small::Heap(_)));
        assert_eq!(w.len(), 9);
    }
}

/// Hasher of the simulator's integer keys (sequential ids, addresses): one multiply
/// (Fibonacci hashing) instead of SipHash. The keys are not attacker-controlled.
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

/// A map keyed by ids or addresses.
pub(crate) type IdMap<K, V> =
    std::collections::HashMap<K, V, std::hash::BuildHasherDefault<IdHasher>>;
