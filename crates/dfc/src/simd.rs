//! Initial filter and class bits of 64 windows at once, with AVX2 gathers.
//!
//! The scalar way to start a search spends about ten instructions per window on the initial
//! filter. Here eight windows share each instruction: their 16- or 24-bit indices come from
//! shifted byte loads, one gather fetches the eight 32-bit words holding their bits, and the
//! bits are moved to the sign position and collected with `movemask` ([`df_bits`]).
//!
//! [`block_classes`] goes one step further for the 2-byte filter: it gathers the windows'
//! class cells (see [`ClassTable`]), packs 32 of them into bytes, and one `movemask` per
//! cell bit yields that bit for 32 windows, so that the classes need no per-window work.
//!
//! Measured on an AMD EPYC (Zen 4): see docs/BENCHMARKS.md. AVX-512's 16-lane gather was
//! slower than two 8-lane AVX2 gathers on the same machine, and masked gathers cost as much
//! as full ones, so neither is used.
//!
//! This is the only module with `unsafe` code. Both functions are tested against scalar
//! references below and, through [`crate::Builder::vectorized`], by the whole differential
//! suite.

#![allow(unsafe_code)]

use crate::filter::ClassTable;

/// Whether this CPU can run [`df_bits`] and [`block_classes`].
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The initial-filter bits of windows `0..64` of `block`, for a filter indexed by `W` (2
/// or 3) bytes, stored as `N` 64-bit words. Bit `k` is set when the window at `k` passes.
///
/// Callers must have checked [`available`]; on other targets this is never reached.
#[inline(always)]
pub(crate) fn df_bits<const W: usize, const N: usize>(df: &[u64; N], block: &[u8; 66]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        debug_assert!(available());
        assert!(W == 2 || W == 3);
        assert_eq!(N, 1 << (8 * W - 6));
        // SAFETY: callers only reach this after `available()` returned true (checked once,
        // when the matcher was built), so the CPU supports AVX2.
        unsafe { x86::df_bits_avx2::<W, N>(df, block) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (df, block);
        unreachable!("SIMD filter requested on a target without it")
    }
}

/// Masks of windows `0..64` of `block` for a 2-byte filter: element `b` has bit `k` set when
/// bit `b` of window `k`'s class cell is set.
///
/// Callers must have checked [`available`]; on other targets this is never reached.
#[inline(always)]
pub(crate) fn block_classes(table: &ClassTable, block: &[u8; 66]) -> [u64; 8] {
    #[cfg(target_arch = "x86_64")]
    {
        debug_assert!(available());
        assert_eq!(table.words().len(), (1 << (11 + table.log2_bits())) + 1);
        // SAFETY: callers only reach this after `available()` returned true, so the CPU
        // supports AVX2; the assert above is the size the gathers rely on.
        unsafe { x86::block_classes_avx2(table.words(), table.log2_bits(), block) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (table, block);
        unreachable!("SIMD filter requested on a target without it")
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx2")]
    pub(super) fn df_bits_avx2<const W: usize, const N: usize>(
        df: &[u64; N],
        block: &[u8; 66],
    ) -> u64 {
        let base = df.as_ptr() as *const i32;
        let p = block.as_ptr();
        let mut bits = 0u64;
        let mut k = 0;
        while k < 64 {
            // SAFETY: `k <= 56`, so the 8-byte loads at `k`, `k + 1` and `k + 2` end at
            // most at byte 66, inside `block`; unaligned loads are allowed by
            // `_mm_loadl_epi64`.
            let (b0, b1, b2) = unsafe {
                (
                    _mm_loadl_epi64(p.add(k) as *const __m128i),
                    _mm_loadl_epi64(p.add(k + 1) as *const __m128i),
                    _mm_loadl_epi64(p.add(k + 2) as *const __m128i),
                )
            };
            let mut index = _mm256_or_si256(
                _mm256_cvtepu8_epi32(b0),
                _mm256_slli_epi32::<8>(_mm256_cvtepu8_epi32(b1)),
            );
            if W == 3 {
                index = _mm256_or_si256(index, _mm256_slli_epi32::<16>(_mm256_cvtepu8_epi32(b2)));
            }
            // Word `index >> 5` of the filter seen as 32-bit words, bit `index & 31`.
            let word = _mm256_srli_epi32::<5>(index);
            // SAFETY: `index < 2^(8W)`, so `word < 2^(8W-5)` = `2 * N` 32-bit words: the
            // whole `[u64; N]` filter and nothing past it (`N == 2^(8W-6)`, asserted by the
            // caller); gathers have no alignment requirement beyond the element's.
            let gathered = unsafe { _mm256_i32gather_epi32::<4>(base, word) };
            let bit = _mm256_and_si256(index, _mm256_set1_epi32(31));
            let to_sign = _mm256_sllv_epi32(gathered, _mm256_sub_epi32(_mm256_set1_epi32(31), bit));
            let mask = _mm256_movemask_ps(_mm256_castsi256_ps(to_sign)) as u32 as u64;
            bits |= mask << k;
            k += 8;
        }
        bits
    }

    /// See [`super::block_classes`]; `words` holds 2^16 cells of 2^`log2_bits` bits, and
    /// one word more.
    #[target_feature(enable = "avx2")]
    pub(super) fn block_classes_avx2(words: &[u32], log2_bits: u32, block: &[u8; 66]) -> [u64; 8] {
        if log2_bits == 3 {
            classes_of::<3>(words, block)
        } else {
            classes_of::<2>(words, block)
        }
    }

    /// [`block_classes_avx2`] for cells of 2^`LOG2` bits.
    #[target_feature(enable = "avx2")]
    fn classes_of<const LOG2: u32>(words: &[u32], block: &[u8; 66]) -> [u64; 8] {
        let table = words.as_ptr() as *const i32;
        let p = block.as_ptr();
        let cell_mask = _mm256_set1_epi32((1 << (1 << LOG2)) - 1);
        let mut masks = [0u64; 8];
        for half in 0..2 {
            let mut cells = [_mm256_setzero_si256(); 4];
            for (q, cell) in cells.iter_mut().enumerate() {
                let k = 32 * half + 8 * q;
                // SAFETY: `k <= 56`, so the 8-byte loads at `k` and `k + 1` end at most at
                // byte 65, inside `block`; `_mm_loadl_epi64` allows unaligned loads.
                let (b0, b1) = unsafe {
                    (
                        _mm_loadl_epi64(p.add(k) as *const __m128i),
                        _mm_loadl_epi64(p.add(k + 1) as *const __m128i),
                    )
                };
                let pair = _mm256_or_si256(
                    _mm256_cvtepu8_epi32(b0),
                    _mm256_slli_epi32::<8>(_mm256_cvtepu8_epi32(b1)),
                );
                let gathered = if LOG2 == 3 {
                    // Byte cells: cell `w` is byte `w`, the low byte of the 4 bytes read
                    // from there.
                    // SAFETY: `pair < 2^16`, so the 4 bytes read at byte `pair` end at most
                    // at byte 2^16 + 2, inside the 2^16 bytes of cells and the word after
                    // them (asserted by the caller); gathers need no alignment at scale 1.
                    unsafe { _mm256_i32gather_epi32::<1>(table, pair) }
                } else {
                    // Nibble cells: cell `w` is in byte `w >> 1`, at bit `4 * (w & 1)`.
                    let byte = _mm256_srli_epi32::<1>(pair);
                    let shift =
                        _mm256_slli_epi32::<2>(_mm256_and_si256(pair, _mm256_set1_epi32(1)));
                    // SAFETY: as above, with `byte < 2^15`.
                    let g = unsafe { _mm256_i32gather_epi32::<1>(table, byte) };
                    _mm256_srlv_epi32(g, shift)
                };
                *cell = _mm256_and_si256(gathered, cell_mask);
            }
            // 32 cells (each below 256) to 32 bytes in window order: the packs interleave
            // 128-bit lanes, the permutation undoes it.
            let p01 = _mm256_packus_epi32(cells[0], cells[1]);
            let p23 = _mm256_packus_epi32(cells[2], cells[3]);
            let bytes = _mm256_permutevar8x32_epi32(
                _mm256_packus_epi16(p01, p23),
                _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7),
            );
            for (b, mask) in masks.iter_mut().enumerate().take(1 << LOG2) {
                // Bit `b` of each byte to its top bit (16-bit shifts do not carry into the
                // top bit of a byte from below it), then one bit per byte.
                let top = _mm256_sll_epi16(bytes, _mm_cvtsi32_si128(7 - b as i32));
                *mask |= (_mm256_movemask_epi8(top) as u32 as u64) << (32 * half);
            }
        }
        masks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    fn random_block(rnd: &mut impl FnMut() -> u64) -> [u8; 66] {
        let mut block = [0u8; 66];
        let alphabet = rnd() % 3;
        for b in block.iter_mut() {
            *b = match alphabet {
                0 => rnd() as u8,
                1 => [0u8, 0xff, b'a', b'A'][rnd() as usize % 4],
                _ => 0xff,
            };
        }
        block
    }

    fn check_df<const W: usize, const N: usize>() {
        if !available() {
            eprintln!("AVX2 not available: SIMD filter not tested on this machine");
            return;
        }
        let mut rnd = rng(0x1234_5678_9abc_def1);
        let mut df = vec![0u64; N].into_boxed_slice();
        for fill in [0u32, 1, 3, 6] {
            for w in df.iter_mut() {
                *w = match fill {
                    0 => 0,
                    6 => u64::MAX,
                    f => (0..f).fold(u64::MAX, |a, _| a & rnd()),
                };
            }
            let df: &[u64; N] = (&*df).try_into().unwrap();
            for _ in 0..2000 {
                let block = random_block(&mut rnd);
                let mut want = 0u64;
                for k in 0..64 {
                    let mut index = block[k] as usize | (block[k + 1] as usize) << 8;
                    if W == 3 {
                        index |= (block[k + 2] as usize) << 16;
                    }
                    want |= (df[index >> 6] >> (index & 63) & 1) << k;
                }
                assert_eq!(df_bits::<W, N>(df, &block), want);
            }
        }
    }

    #[test]
    fn avx2_filter_matches_scalar_two_byte() {
        check_df::<2, 1024>();
    }

    #[test]
    fn avx2_filter_matches_scalar_three_byte() {
        check_df::<3, 262_144>();
    }

    #[test]
    fn avx2_class_masks_match_scalar() {
        if !available() {
            eprintln!("AVX2 not available: SIMD class masks not tested on this machine");
            return;
        }
        let mut rnd = rng(77);
        for classes in [1, 3, 4, 7] {
            for density in [0u64, 1, 3, 8] {
                let mut table = ClassTable::new(classes, true);
                let cell = table.cell_bits();
                for w in 0..1usize << 16 {
                    if density == 8 || (density > 0 && rnd() % 8 < density) {
                        table.set(w, rnd() as u8 & ((1u16 << cell) - 1) as u8);
                    }
                }
                for _ in 0..500 {
                    let block = random_block(&mut rnd);
                    let mut want = [0u64; 8];
                    for k in 0..64 {
                        let c = table.get(u16::from_le_bytes([block[k], block[k + 1]]));
                        for (b, m) in want.iter_mut().enumerate() {
                            *m |= ((c >> b & 1) as u64) << k;
                        }
                    }
                    assert_eq!(
                        block_classes(&table, &block),
                        want,
                        "{classes} classes, density {density}"
                    );
                }
            }
        }
    }
}
