//! Lua rule scripts of arbitrary text, loaded and run on one packet and through a
//! transform: the sandbox ends every script (errors, the instruction and memory limits)
//! and nothing panics.

#![no_main]

use libfuzzer_sys::fuzz_target;
use netsieve_detect::lua::{Config, Env, Kind, Script};
use netsieve_packet::Packet;

fuzz_target!(|data: &[u8]| {
    // Small limits keep each run short; the limits are what is under test.
    let cfg = Config {
        max_instructions: 20_000,
        max_bytes: 200_000,
        ..Config::default()
    };
    let p = Packet {
        data: data.to_vec(),
        payload: 0..data.len(),
        ..Packet::default()
    };
    if let Ok(s) = Script::from_source("f.lua", data.to_vec(), Kind::Match, cfg.clone()) {
        let mut env = Env {
            packet: Some(&p),
            ..Env::default()
        };
        let _ = s.matches(&mut env);
    }
    if let Ok(s) = Script::from_source("f.lua", data.to_vec(), Kind::Transform, cfg) {
        if let Some(out) = s.transform(data, &["a".to_string()]) {
            assert!(out.len() <= 200_000);
        }
    }
});
