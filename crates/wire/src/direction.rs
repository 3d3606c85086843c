//! The two directions of a conversation.

use std::ops::{Index, IndexMut};

/// A direction of a flow or transaction: to the server (the side the first packet was
/// sent to, or that listens) or to the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    ToServer = 0,
    ToClient = 1,
}

impl Direction {
    /// Both directions, to the server first.
    pub const BOTH: [Direction; 2] = [Direction::ToServer, Direction::ToClient];

    /// 0 to the server, 1 to the client.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The direction at `index` (0 to the server, anything else to the client).
    pub fn from_index(index: usize) -> Direction {
        if index == 0 {
            Direction::ToServer
        } else {
            Direction::ToClient
        }
    }

    /// The other direction.
    pub fn reverse(self) -> Direction {
        match self {
            Direction::ToServer => Direction::ToClient,
            Direction::ToClient => Direction::ToServer,
        }
    }
}

/// One value per direction, indexed by [`Direction`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PerDir<T>([T; 2]);

impl<T> PerDir<T> {
    pub const fn new(to_server: T, to_client: T) -> PerDir<T> {
        PerDir([to_server, to_client])
    }

    /// Each direction with its value, to the server first.
    pub fn iter(&self) -> impl Iterator<Item = (Direction, &T)> {
        Direction::BOTH.into_iter().zip(self.0.iter())
    }

    /// Each direction with its value, mutable.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (Direction, &mut T)> {
        Direction::BOTH.into_iter().zip(self.0.iter_mut())
    }

    /// The values, to the server first.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.0.iter()
    }

    pub fn map<U>(self, f: impl FnMut(T) -> U) -> PerDir<U> {
        PerDir(self.0.map(f))
    }
}

impl<T: Copy> PerDir<T> {
    /// The same value in both directions.
    pub const fn splat(value: T) -> PerDir<T> {
        PerDir([value, value])
    }
}

impl<T> Index<Direction> for PerDir<T> {
    type Output = T;

    fn index(&self, d: Direction) -> &T {
        &self.0[d.index()]
    }
}

impl<T> IndexMut<Direction> for PerDir<T> {
    fn index_mut(&mut self, d: Direction) -> &mut T {
        &mut self.0[d.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_by_direction() {
        let mut p = PerDir::new(1, 2);
        assert_eq!(p[Direction::ToServer], 1);
        p[Direction::ToClient] += 5;
        assert_eq!(p[Direction::ToClient], 7);
        let seen: Vec<_> = p.iter().map(|(d, v)| (d, *v)).collect();
        assert_eq!(seen, [(Direction::ToServer, 1), (Direction::ToClient, 7)]);
        assert_eq!(Direction::ToServer.reverse(), Direction::ToClient);
        for d in Direction::BOTH {
            assert_eq!(Direction::from_index(d.index()), d);
        }
        assert_eq!(PerDir::splat(3).map(|v| v * 2), PerDir::new(6, 6));
    }
}
