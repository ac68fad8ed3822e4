//! `Slab`: the installed IBs of one actor by id.

/// Installed IBs by id. An id is a slot index: slots are reused only after
/// the uninstall that frees them ran, and an `IbHandle` (the only holder
/// of an id) uninstalls on drop, so a live id never names another IB. A
/// slot lookup is cheaper than hashing on the replay hot path.
pub(crate) struct Slab<T> {
    slots: Vec<Option<T>>,
    free: Vec<usize>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    pub(crate) fn insert(&mut self, value: T) -> u64 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(value);
                i as u64
            }
            None => {
                self.slots.push(Some(value));
                (self.slots.len() - 1) as u64
            }
        }
    }

    pub(crate) fn get(&self, id: u64) -> Option<&T> {
        self.slots.get(usize::try_from(id).ok()?)?.as_ref()
    }

    pub(crate) fn get_mut(&mut self, id: u64) -> Option<&mut T> {
        self.slots.get_mut(usize::try_from(id).ok()?)?.as_mut()
    }

    pub(crate) fn remove(&mut self, id: u64) -> Option<T> {
        let i = usize::try_from(id).ok()?;
        let value = self.slots.get_mut(i)?.take()?;
        self.free.push(i);
        Some(value)
    }

    pub(crate) fn ids(&self) -> Vec<u64> {
        (0..self.slots.len())
            .filter(|&i| self.slots[i].is_some())
            .map(|i| i as u64)
            .collect()
    }
}
