//! Weir SQL functions in Rust, built for wasm32-unknown-unknown (see
//! docs/udf.md and ../build.sh):
//!
//!   CREATE FUNCTION plus  AS 'add' LANGUAGE WASM USING JAR 'rust.wasm';
//!   CREATE FUNCTION shout AS 'shout(STRING) RETURNS STRING' LANGUAGE WASM USING JAR 'rust.wasm';
//!   CREATE FUNCTION words AS 'words(STRING) RETURNS ARRAY<STRING>' LANGUAGE WASM USING JAR 'rust.wasm';
//!   SELECT id, w FROM t, LATERAL TABLE(words(s)) AS x(w);
//!
//! spin loops forever and hog allocates without bound: the tests' proof
//! that Weir stops both.

use std::alloc::{alloc, dealloc, Layout};

/// weir_alloc gives Weir `len` bytes to write a STRING argument into.
#[no_mangle]
pub extern "C" fn weir_alloc(len: u32) -> *mut u8 {
    if len == 0 {
        return std::ptr::NonNull::dangling().as_ptr();
    }
    unsafe { alloc(Layout::from_size_align(len as usize, 1).unwrap()) }
}

/// weir_free takes back an argument's buffer or a returned one.
#[no_mangle]
pub unsafe extern "C" fn weir_free(ptr: *mut u8, len: u32) {
    if len != 0 {
        dealloc(ptr, Layout::from_size_align(len as usize, 1).unwrap());
    }
}

/// str_arg is the STRING argument Weir wrote at ptr.
unsafe fn str_arg<'a>(ptr: *const u8, len: u32) -> &'a str {
    std::str::from_utf8_unchecked(std::slice::from_raw_parts(ptr, len as usize))
}

/// ret hands a STRING result to Weir as pointer<<32 | length; Weir frees
/// it with weir_free.
fn ret(s: String) -> u64 {
    ret_bytes(s.into_bytes())
}

fn ret_bytes(v: Vec<u8>) -> u64 {
    let b = v.into_boxed_slice();
    let len = b.len() as u64;
    let ptr = Box::into_raw(b) as *mut u8 as u64;
    ptr << 32 | len
}

#[no_mangle]
pub extern "C" fn add(a: i64, b: i64) -> i64 {
    a.wrapping_add(b)
}

#[no_mangle]
pub unsafe extern "C" fn shout(ptr: *const u8, len: u32) -> u64 {
    ret(str_arg(ptr, len).to_uppercase() + "!")
}

/// words is a table function: its ARRAY<STRING> result, each element a
/// little-endian u32 length and its bytes, gives one row per word.
#[no_mangle]
pub unsafe extern "C" fn words(ptr: *const u8, len: u32) -> u64 {
    let mut out = Vec::new();
    for w in str_arg(ptr, len).split(' ').filter(|w| !w.is_empty()) {
        out.extend_from_slice(&(w.len() as u32).to_le_bytes());
        out.extend_from_slice(w.as_bytes());
    }
    ret_bytes(out)
}

#[no_mangle]
pub extern "C" fn spin(x: i64) -> i64 {
    let mut n = x;
    loop {
        n = std::hint::black_box(n.wrapping_add(1));
        if std::hint::black_box(false) {
            return n;
        }
    }
}

#[no_mangle]
pub extern "C" fn hog(x: i64) -> i64 {
    let mut kept: Vec<Vec<u8>> = Vec::new();
    loop {
        kept.push(vec![x as u8; 1 << 20]);
        std::hint::black_box(&kept);
    }
}
