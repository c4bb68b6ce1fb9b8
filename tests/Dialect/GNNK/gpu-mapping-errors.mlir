// The verifier of the `gnnk.gpu` attribute: a dictionary of the entries
// gnnk-map-gpu records, on a kernel.
//
// RUN: gnn-opt %s --split-input-file --verify-diagnostics

// expected-error@+1 {{'gnnk.gpu' belongs on a gnnk.kernel function}}
func.func @not_a_kernel() attributes {gnnk.gpu = {}} {
  return
}

// -----

// expected-error@+1 {{'gnnk.gpu' must be a dictionary {mapping, schedule: strings; keys: array<i64>; lanes, vector, chunks, rows_per_block, shared_bytes: integers; scratch, nests: arrays of strings; optional split_above: integer}}}
func.func @not_a_dictionary(%g: !gnnk.graph, %out: memref<?xf32>)
    attributes {gnnk.gpu = "warp-per-vertex",
                gnnk.kernel = {num_outputs = 1 : i64}} {
  return
}

// -----

// The key shape as an array of integer attributes instead of array<i64>.
// expected-error@+1 {{'gnnk.gpu' must be a dictionary}}
func.func @keys_not_i64_array(%g: !gnnk.graph, %out: memref<?xf32>)
    attributes {gnnk.gpu = {chunks = 1 : i64, keys = [4 : i64], lanes = 1 : i64,
                            mapping = "thread-per-vertex", nests = [],
                            rows_per_block = 256 : i64,
                            schedule = "descending-degree", scratch = [],
                            shared_bytes = 0 : i64, vector = 4 : i64},
                gnnk.kernel = {num_outputs = 1 : i64}} {
  return
}

// -----

// A scratch place that is not a string.
// expected-error@+1 {{'gnnk.gpu' must be a dictionary}}
func.func @place_not_string(%g: !gnnk.graph, %out: memref<?xf32>)
    attributes {gnnk.gpu = {chunks = 1 : i64, keys = array<i64: 4>, lanes = 1 : i64,
                            mapping = "thread-per-vertex", nests = [],
                            rows_per_block = 256 : i64,
                            schedule = "descending-degree", scratch = [1 : i64],
                            shared_bytes = 0 : i64, vector = 4 : i64},
                gnnk.kernel = {num_outputs = 1 : i64}} {
  return
}

// -----

// A missing entry (no vector).
// expected-error@+1 {{'gnnk.gpu' must be a dictionary}}
func.func @missing_entry(%g: !gnnk.graph, %out: memref<?xf32>)
    attributes {gnnk.gpu = {chunks = 1 : i64, keys = array<i64: 4>, lanes = 1 : i64,
                            mapping = "thread-per-vertex", nests = [],
                            rows_per_block = 256 : i64,
                            schedule = "descending-degree", scratch = [],
                            shared_bytes = 0 : i64},
                gnnk.kernel = {num_outputs = 1 : i64}} {
  return
}

// -----

// Well formed: accepted (whether it fits the kernel's body is the CUDA
// printer's check).
func.func @well_formed(%g: !gnnk.graph, %out: memref<?xf32>)
    attributes {gnnk.gpu = {chunks = 1 : i64, keys = array<i64: 4>, lanes = 1 : i64,
                            mapping = "thread-per-vertex", nests = [],
                            rows_per_block = 256 : i64,
                            schedule = "descending-degree", scratch = [],
                            shared_bytes = 0 : i64, vector = 4 : i64},
                gnnk.kernel = {num_outputs = 1 : i64}} {
  return
}
