//! Hyperscan in pure-literal mode (`hs_compile_lit_multi`), block mode.
//!
//! The `hyperscan` crate's `Literal` type holds a `String`, which cannot carry the
//! non-UTF-8 bytes of real rule sets (`|a3 16|`), so this calls the crate's own FFI layer,
//! `hyperscan-sys`, directly. Built only with the `hyperscan` feature (needs Debian's
//! `libhyperscan-dev`).

use std::ffi::{CStr, c_char, c_int, c_uint, c_ulonglong, c_void};
use std::ptr;

use hyperscan_sys as ffi;

use crate::engines::{Engine, Searcher, mix};

pub struct Hyperscan;

struct HsSearcher {
    db: *mut ffi::hs_database_t,
    scratch: *mut ffi::hs_scratch_t,
}

impl Engine for Hyperscan {
    fn name(&self) -> String {
        "hyperscan".into()
    }

    fn build(&self, patterns: &[(Vec<u8>, bool)]) -> Result<Box<dyn Searcher>, String> {
        let exprs: Vec<*const c_char> = patterns
            .iter()
            .map(|p| p.0.as_ptr() as *const c_char)
            .collect();
        let lens: Vec<usize> = patterns.iter().map(|p| p.0.len()).collect();
        let flags: Vec<c_uint> = patterns
            .iter()
            .map(|p| if p.1 { ffi::HS_FLAG_CASELESS } else { 0 })
            .collect();
        let ids: Vec<c_uint> = (0..patterns.len() as c_uint).collect();
        let mut db = ptr::null_mut();
        let mut err = ptr::null_mut();
        // SAFETY: the four arrays have `patterns.len()` elements and outlive the call; each
        // expression pointer is valid for its length in `lens` (literal mode reads exactly
        // that many bytes, NULs included); `db` and `err` are valid out-pointers.
        let rc = unsafe {
            ffi::hs_compile_lit_multi(
                exprs.as_ptr(),
                flags.as_ptr(),
                ids.as_ptr(),
                lens.as_ptr(),
                patterns.len() as c_uint,
                ffi::HS_MODE_BLOCK,
                ptr::null(),
                &mut db,
                &mut err,
            )
        };
        if rc != ffi::HS_SUCCESS as c_int {
            let msg = if err.is_null() {
                format!("hs_compile_lit_multi failed: {rc}")
            } else {
                // SAFETY: on failure `err` points to a compile error whose message is a
                // NUL-terminated string; it is freed once, after the message is copied.
                unsafe {
                    let m = CStr::from_ptr((*err).message)
                        .to_string_lossy()
                        .into_owned();
                    ffi::hs_free_compile_error(err);
                    m
                }
            };
            return Err(msg);
        }
        let mut scratch = ptr::null_mut();
        // SAFETY: `db` is the valid database just compiled; `scratch` is a valid out-pointer.
        let rc = unsafe { ffi::hs_alloc_scratch(db, &mut scratch) };
        if rc != ffi::HS_SUCCESS as c_int {
            // SAFETY: `db` was allocated by Hyperscan and is freed once.
            unsafe { ffi::hs_free_database(db) };
            return Err(format!("hs_alloc_scratch failed: {rc}"));
        }
        Ok(Box::new(HsSearcher { db, scratch }))
    }
}

/// Accumulates `(count, checksum)` into the `(u64, u64)` behind `ctx`.
unsafe extern "C" fn on_match(
    id: c_uint,
    _from: c_ulonglong,
    to: c_ulonglong,
    _flags: c_uint,
    ctx: *mut c_void,
) -> c_int {
    // SAFETY: `ctx` is the `&mut (u64, u64)` that `search` passes to `scan`, alive for the scan.
    let acc = unsafe { &mut *(ctx as *mut (u64, u64)) };
    acc.0 += 1;
    acc.1 = acc.1.wrapping_add(mix(id as u64, to));
    0
}

/// Pushes `(id, end)` onto the `Vec<(u32, u64)>` behind `ctx`.
unsafe extern "C" fn on_match_list(
    id: c_uint,
    _from: c_ulonglong,
    to: c_ulonglong,
    _flags: c_uint,
    ctx: *mut c_void,
) -> c_int {
    // SAFETY: `ctx` is the `&mut Vec` that `matches` passes to `scan`, alive for the scan.
    let list = unsafe { &mut *(ctx as *mut Vec<(u32, u64)>) };
    list.push((id, to));
    0
}

/// Hyperscan's name for a scan error code.
fn scan_error(rc: c_int) -> String {
    let name = match rc {
        -1 => "HS_INVALID",
        -2 => "HS_NOMEM",
        -3 => "HS_SCAN_TERMINATED",
        -10 => "HS_SCRATCH_IN_USE",
        -13 => "HS_UNKNOWN_ERROR",
        _ => "error",
    };
    format!("hs_scan aborted with {name} ({rc})")
}

impl HsSearcher {
    /// Scans `haystack`, calling `on` with `ctx` for each match.
    ///
    /// # Safety
    ///
    /// `ctx` must be what `on` expects and stay valid for the call.
    unsafe fn scan(
        &mut self,
        haystack: &[u8],
        on: ffi::match_event_handler,
        ctx: *mut c_void,
    ) -> Result<(), String> {
        // SAFETY: `db` and `scratch` are valid and owned by `self` (exclusive via `&mut`);
        // the haystack pointer is valid for its length; `ctx` is valid per this function's
        // contract.
        let rc = unsafe {
            ffi::hs_scan(
                self.db,
                haystack.as_ptr() as *const c_char,
                haystack.len() as c_uint,
                0,
                self.scratch,
                on,
                ctx,
            )
        };
        if rc == ffi::HS_SUCCESS as c_int {
            Ok(())
        } else {
            Err(scan_error(rc))
        }
    }
}

impl Searcher for HsSearcher {
    fn search(&mut self, haystack: &[u8]) -> Result<(u64, u64), String> {
        let mut acc = (0u64, 0u64);
        // SAFETY: `on_match` expects a `(u64, u64)`, alive for the call.
        unsafe {
            self.scan(
                haystack,
                Some(on_match),
                &mut acc as *mut (u64, u64) as *mut c_void,
            )?
        };
        Ok(acc)
    }

    fn matches(&mut self, haystack: &[u8]) -> Vec<(u32, u64)> {
        let mut list: Vec<(u32, u64)> = Vec::new();
        // SAFETY: `on_match_list` expects a `Vec<(u32, u64)>`, alive for the call.
        if let Err(e) = unsafe {
            self.scan(
                haystack,
                Some(on_match_list),
                &mut list as *mut Vec<(u32, u64)> as *mut c_void,
            )
        } {
            eprintln!("{e}");
        }
        list.sort_unstable();
        list
    }

    fn heap_bytes(&self) -> usize {
        let (mut db, mut scratch) = (0usize, 0usize);
        // SAFETY: valid database and scratch owned by `self`; out-pointers are valid.
        unsafe {
            ffi::hs_database_size(self.db, &mut db);
            ffi::hs_scratch_size(self.scratch, &mut scratch);
        }
        db + scratch
    }
}

impl Drop for HsSearcher {
    fn drop(&mut self) {
        // SAFETY: both were allocated by Hyperscan, are owned by `self` and freed once.
        unsafe {
            ffi::hs_free_scratch(self.scratch);
            ffi::hs_free_database(self.db);
        }
    }
}
