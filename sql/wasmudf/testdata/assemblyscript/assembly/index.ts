// Weir SQL functions in AssemblyScript (see docs/udf.md and ../build.sh):
//
//   npm ci && npm run build
//
//   CREATE FUNCTION plus  AS 'add' LANGUAGE WASM USING JAR 'assemblyscript.wasm';
//   CREATE FUNCTION shout AS 'shout(STRING) RETURNS STRING' LANGUAGE WASM USING JAR 'assemblyscript.wasm';
//   CREATE FUNCTION words AS 'words(STRING) RETURNS ARRAY<STRING>' LANGUAGE WASM USING JAR 'assemblyscript.wasm';
//   SELECT id, w FROM t, LATERAL TABLE(words(s)) AS x(w);
//
// spin loops forever and hog allocates without bound: the tests' proof
// that Weir stops both.

// weir_alloc gives Weir len bytes, outside the garbage collector's
// heap, to write a STRING argument into.
export function weir_alloc(len: u32): usize {
  return heap.alloc(<usize>len);
}

// weir_free takes back an argument's buffer or a returned one.
export function weir_free(ptr: usize, len: u32): void {
  heap.free(ptr);
}

// ret copies s, as UTF-8, into a buffer weir_free takes back, and hands it
// to Weir as pointer<<32 | length.
function ret(s: string): u64 {
  const len = String.UTF8.byteLength(s);
  const ptr = heap.alloc(<usize>len);
  String.UTF8.encodeUnsafe(changetype<usize>(s), s.length, ptr);
  return (<u64>ptr << 32) | <u64>len;
}

export function add(a: i64, b: i64): i64 {
  return a + b;
}

export function shout(ptr: usize, len: u32): u64 {
  return ret(String.UTF8.decodeUnsafe(ptr, <usize>len).toUpperCase() + "!");
}

// words is a table function: its ARRAY<STRING> result, each element a
// little-endian u32 length and its bytes, gives one row per word.
export function words(ptr: usize, len: u32): u64 {
  const parts = String.UTF8.decodeUnsafe(ptr, <usize>len).split(" ");
  let size = 0;
  for (let i = 0; i < parts.length; i++) {
    if (parts[i].length > 0) size += 4 + String.UTF8.byteLength(parts[i]);
  }
  const out = heap.alloc(<usize>size);
  let at = out;
  for (let i = 0; i < parts.length; i++) {
    const w = parts[i];
    if (w.length == 0) continue;
    const n = String.UTF8.byteLength(w);
    store<u32>(at, <u32>n);
    String.UTF8.encodeUnsafe(changetype<usize>(w), w.length, at + 4);
    at += 4 + n;
  }
  return (<u64>out << 32) | <u64>size;
}

export function spin(x: i64): i64 {
  while (true) {
    x++;
  }
  return x;
}

const kept = new Array<ArrayBuffer>();

export function hog(x: i64): i64 {
  while (true) {
    kept.push(new ArrayBuffer(1 << 20));
  }
  return x;
}
