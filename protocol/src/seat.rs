//! Seats 0-5 clockwise and the three partnerships (team = seat mod 3).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A seat at the table, 0..6, numbered clockwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Seat(u8);

impl Seat {
    pub const COUNT: usize = 6;

    /// Panics if `i >= 6`; use [`Seat::try_new`] for untrusted input.
    #[inline]
    pub const fn new(i: usize) -> Seat {
        assert!(i < Seat::COUNT, "seat out of range");
        Seat(i as u8)
    }

    #[inline]
    pub const fn try_new(i: u64) -> Option<Seat> {
        if i < Seat::COUNT as u64 {
            Some(Seat(i as u8))
        } else {
            None
        }
    }

    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The seat to the left, i.e. the next one clockwise.
    #[inline]
    pub const fn left(self) -> Seat {
        Seat((self.0 + 1) % 6)
    }

    /// The seat `n` places clockwise.
    #[inline]
    pub const fn plus(self, n: usize) -> Seat {
        Seat(((self.0 as usize + n) % 6) as u8)
    }

    #[inline]
    pub const fn team(self) -> Team {
        Team(self.0 % 3)
    }

    /// The partner sits opposite.
    #[inline]
    pub const fn partner(self) -> Seat {
        Seat((self.0 + 3) % 6)
    }

    pub fn all() -> impl Iterator<Item = Seat> {
        (0..6).map(Seat::new)
    }
}

impl fmt::Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "seat {}", self.0)
    }
}

/// One of the three partnerships: team `k` holds seats `k` and `k + 3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Team(u8);

impl Team {
    pub const COUNT: usize = 3;

    #[inline]
    pub const fn new(i: usize) -> Team {
        assert!(i < Team::COUNT, "team out of range");
        Team(i as u8)
    }

    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    #[inline]
    pub const fn seats(self) -> [Seat; 2] {
        [Seat(self.0), Seat(self.0 + 3)]
    }

    pub fn all() -> impl Iterator<Item = Team> {
        (0..3).map(Team::new)
    }
}

impl fmt::Display for Team {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "team {}", self.0)
    }
}

macro_rules! serde_as_small_int {
    ($ty:ident, $max:expr, $what:literal) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_u8(self.0)
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = u64::deserialize(d)?;
                if v < $max {
                    Ok($ty(v as u8))
                } else {
                    Err(serde::de::Error::custom(format!(
                        concat!($what, " {} is out of range 0..{}"),
                        v, $max
                    )))
                }
            }
        }
    };
}

serde_as_small_int!(Seat, 6, "seat");
serde_as_small_int!(Team, 3, "team");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partners_sit_opposite_and_share_a_team() {
        for s in Seat::all() {
            assert_eq!(s.partner().team(), s.team());
            assert_ne!(s.left().team(), s.team());
            assert_eq!(s.partner().partner(), s);
        }
        assert_eq!(Team::new(1).seats(), [Seat::new(1), Seat::new(4)]);
        assert!(serde_json::from_str::<Seat>("6").is_err());
    }
}
