;; The test module of sql/wasmudf, in WebAssembly text. wasmudf_test.go
;; assembles the same bytes by hand (testModule), so no toolchain is
;; needed; `wat2wasm udf.wat` (wabt) gives an equal module.
(module
  (memory 1)
  ;; add(a, b) = a + b
  (func (export "add") (param i64 i64) (result i64)
    local.get 0 local.get 1 i64.add)
  ;; spin loops forever: stopped at the time limit.
  (func (export "spin") (param i64) (result i64)
    (loop br 0) i64.const 0)
  ;; grow allocates a page at a time until memory.grow fails, then traps.
  (func (export "grow") (param i64) (result i64)
    (loop i32.const 1 memory.grow i32.const -1 i32.ne br_if 0)
    unreachable))
