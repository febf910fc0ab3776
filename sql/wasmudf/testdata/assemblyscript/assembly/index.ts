// Weir SQL functions in AssemblyScript (see docs/udf.md and ../build.sh):
//
//   npm ci && npm run build
//
//   CREATE FUNCTION plus  AS 'add' LANGUAGE WASM USING JAR 'assemblyscript.wasm';
//   CREATE FUNCTION shout AS 'shout(STRING) RETURNS STRING' LANGUAGE WASM USING JAR 'assemblyscript.wasm';
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
