//! Who may hold one of the hub's slots for a connection that has not proved
//! its token yet. Such a connection costs a descriptor and is the one thing
//! anybody who can reach the port can make, so the slots are bounded per
//! source ([`PER_SOURCE`]) and in all ([`MAX_PENDING`]). A fixed pool taken
//! first come, first served would let one flooder, re-dialling each
//! connection as it is closed, keep every token holder out; here a newcomer
//! from a source that holds few slots takes the oldest slot of the source
//! that holds the most, when that source holds at least two more. A flood
//! from one address holds [`PER_SOURCE`] slots and no more, and a flood from
//! many addresses can keep out a connector that holds `h` slots only by
//! holding the whole pool with at most `h + 1` a source: 64 addresses to
//! keep out a first connection, 32 a second one dialled beside it.
//!
//! A source is an IPv4 address, or an IPv6 address's /64 (one host's
//! share of a network); an IPv4-mapped IPv6 address is its IPv4 address.

use std::collections::{BTreeMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

/// Connections not yet proved, in all.
pub const MAX_PENDING: usize = 64;
/// Connections not yet proved, from one source.
pub const PER_SOURCE: usize = 8;

/// Where a connection comes from, as far as the bounds go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    V4([u8; 4]),
    /// The first 64 bits.
    V6([u16; 4]),
}

impl Source {
    pub fn of(ip: IpAddr) -> Source {
        match ip.to_canonical() {
            IpAddr::V4(v4) => Source::V4(v4.octets()),
            IpAddr::V6(v6) => {
                let s = v6.segments();
                Source::V6([s[0], s[1], s[2], s[3]])
            }
        }
    }
}

/// The slots of a hub.
#[derive(Default)]
pub struct Admission {
    inner: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    /// Each source's slots, oldest first: an id and the signal that takes
    /// the slot back. A `BTreeMap` so that a tie picks the same source each
    /// time.
    by_source: BTreeMap<Source, VecDeque<(u64, CancellationToken)>>,
    total: usize,
    next: u64,
}

/// One slot, given back when dropped.
pub struct Slot {
    admission: Arc<Admission>,
    source: Source,
    id: u64,
    /// Cancelled when a newcomer took the slot: the connection is to close.
    pub evicted: CancellationToken,
}

impl Admission {
    /// A slot for a connection from `ip`, or `None`: it is to be closed
    /// unread.
    pub fn enter(self: &Arc<Self>, ip: IpAddr) -> Option<Slot> {
        let source = Source::of(ip);
        let mut held = self.inner.lock().expect("not poisoned");
        let mine = held.by_source.get(&source).map_or(0, VecDeque::len);
        if mine >= PER_SOURCE {
            return None;
        }
        if held.total >= MAX_PENDING {
            held.evict_for(mine)?;
        }
        let (id, evicted) = (held.next, CancellationToken::new());
        held.next += 1;
        held.total += 1;
        let slots = held.by_source.entry(source).or_default();
        slots.push_back((id, evicted.clone()));
        Some(Slot {
            admission: self.clone(),
            source,
            id,
            evicted,
        })
    }

    /// How many slots are held (for tests).
    pub fn held(&self) -> usize {
        self.inner.lock().expect("not poisoned").total
    }
}

impl Held {
    /// Frees the oldest slot of the source holding the most, if it holds at
    /// least two more than `mine`.
    fn evict_for(&mut self, mine: usize) -> Option<()> {
        let (&most, _) = (self.by_source.iter()).max_by_key(|(source, slots)| {
            // The largest; of equals, the first in order.
            (slots.len(), std::cmp::Reverse(**source))
        })?;
        let slots = self.by_source.get_mut(&most)?;
        if slots.len() < mine + 2 {
            return None;
        }
        let (_, evicted) = slots.pop_front()?;
        evicted.cancel();
        if slots.is_empty() {
            self.by_source.remove(&most);
        }
        self.total -= 1;
        Some(())
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self.admission.inner.lock().expect("not poisoned");
        let Some(slots) = held.by_source.get_mut(&self.source) else {
            return;
        };
        // Not there if a newcomer took it.
        let Some(at) = slots.iter().position(|(id, _)| *id == self.id) else {
            return;
        };
        slots.remove(at);
        if slots.is_empty() {
            held.by_source.remove(&self.source);
        }
        held.total -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    #[test]
    fn one_source_holds_at_most_its_share_and_others_still_get_in() {
        let admission = Arc::new(Admission::default());
        let flood: Vec<Slot> = (0..100).filter_map(|_| admission.enter(v4(1))).collect();
        assert_eq!(flood.len(), PER_SOURCE);
        assert!(admission.enter(v4(2)).is_some(), "another address");
        drop(flood);
        assert_eq!(admission.held(), 0, "every slot given back");
    }

    #[test]
    fn a_full_pool_gives_a_newcomer_the_oldest_slot_of_the_largest_source() {
        let admission = Arc::new(Admission::default());
        let sources = MAX_PENDING / PER_SOURCE;
        let mut flood: Vec<Slot> = Vec::new();
        for round in 0..PER_SOURCE {
            for s in 0..sources {
                flood.push(
                    admission
                        .enter(v4(s as u8))
                        .unwrap_or_else(|| panic!("{round} {s}")),
                );
            }
        }
        assert_eq!(admission.held(), MAX_PENDING);
        // A connector from elsewhere gets in: the first source's oldest goes.
        let connector = admission.enter(v4(200)).expect("a newcomer gets in");
        assert!(flood[0].evicted.is_cancelled());
        assert_eq!(flood.iter().filter(|s| s.evicted.is_cancelled()).count(), 1);
        // The source that lost one cannot take one back from its equals.
        assert!(admission.enter(v4(0)).is_none());
        // Nor can any source take the connector's.
        for s in 0..sources {
            assert!(admission.enter(v4(s as u8)).is_none());
        }
        assert!(!connector.evicted.is_cancelled());
        // A second connection of the connector's takes another flooder's.
        let second = admission.enter(v4(200)).expect("two slots of 64");
        assert_eq!(flood.iter().filter(|s| s.evicted.is_cancelled()).count(), 2);
        drop((flood, connector, second));
        assert_eq!(admission.held(), 0);
    }

    #[test]
    fn a_pool_held_one_slot_a_source_is_the_limit() {
        let admission = Arc::new(Admission::default());
        let flood: Vec<Slot> = (0..MAX_PENDING)
            .map(|s| admission.enter(IpAddr::from([10, 0, 1, s as u8])).unwrap())
            .collect();
        assert!(
            admission.enter(v4(200)).is_none(),
            "64 addresses keep one out"
        );
        drop(flood);
    }

    #[test]
    fn an_ipv6_source_is_its_64_and_a_mapped_address_its_ipv4() {
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(Source::of(a), Source::of(b));
        assert_ne!(Source::of(a), Source::of(c));
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(Source::of(mapped), Source::of(v4(1)));
    }
}
