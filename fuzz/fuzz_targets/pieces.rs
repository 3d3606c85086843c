//! Arbitrary bytes as a conversation in pieces: each piece is a byte whose top bit picks
//! the direction and whose low 7 bits give the length of the bytes that follow. Shared by
//! the targets that feed parsers both directions of a session (`mod pieces;`).

use netsieve_applayer::Direction;

pub fn pieces(data: &[u8]) -> impl Iterator<Item = (Direction, &[u8])> {
    let mut rest = data;
    std::iter::from_fn(move || {
        let (&b, tail) = rest.split_first()?;
        let take = usize::from(b & 0x7f).min(tail.len());
        let dir = if b & 0x80 == 0 {
            Direction::ToServer
        } else {
            Direction::ToClient
        };
        let (piece, after) = tail.split_at(take);
        rest = after;
        Some((dir, piece))
    })
}
