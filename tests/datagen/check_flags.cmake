# ctest datagen.flags: gnnc-gen-sbm refuses bad input with exit status 1,
# one line "gnnc-gen-sbm: error: <message>" on stderr, nothing on stdout,
# and no output folder; it accepts the extremes of each range (checked with
# flags that fail later, on purpose, for a reason of their own).
#
#   cmake -DGEN=path/to/gnnc-gen-sbm -DWORK=scratch/dir -P check_flags.cmake
if(NOT GEN OR NOT WORK)
  message(FATAL_ERROR "usage: cmake -DGEN=gnnc-gen-sbm -DWORK=dir -P check_flags.cmake")
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(out "${WORK}/out")

# expect_error(<message> <arguments...>): gnnc-gen-sbm <arguments> fails
# with exactly that one error line and leaves no ${out}.
function(expect_error expected)
  execute_process(COMMAND "${GEN}" ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE err
                  TIMEOUT 60)
  string(REPLACE ";" " " args "${ARGN}")
  if(NOT rc EQUAL 1)
    message(SEND_ERROR "gnnc-gen-sbm ${args}: exit status ${rc}, expected 1\n${err}")
  endif()
  if(NOT err STREQUAL "gnnc-gen-sbm: error: ${expected}\n")
    message(SEND_ERROR "gnnc-gen-sbm ${args}: expected the one line\n"
                       "  gnnc-gen-sbm: error: ${expected}\ngot\n  ${err}")
  endif()
  if(NOT stdout STREQUAL "")
    message(SEND_ERROR "gnnc-gen-sbm ${args}: printed on stdout:\n${stdout}")
  endif()
  if(EXISTS "${out}")
    message(SEND_ERROR "gnnc-gen-sbm ${args}: left ${out} behind")
    file(REMOVE_RECURSE "${out}")
  endif()
endfunction()

set(int "is out of range (expected an integer in")
# Misspelt and missing flags.
expect_error("unknown flag '--nodse' (see --help)" --out "${out}" --nodse 100)
expect_error("unknown flag '--homophilly' (see --help)"
             --out "${out}" --homophilly=0.5)
expect_error("unexpected argument 'extra' (see --help)" --out "${out}" extra)
expect_error("--out DIR is required (see --help)" --nodes 100)
expect_error("--out: the folder name is empty" --out=)
expect_error("--nodes needs a value" --out "${out}" --nodes)

# Sizes: negative, zero, too large, not integers.
expect_error("--nodes: -5 ${int} [2, 2147483647])" --out "${out}" --nodes -5)
expect_error("--nodes: 0 ${int} [2, 2147483647])" --out "${out}" --nodes 0)
expect_error("--nodes: 2147483648 ${int} [2, 2147483647])"
             --out "${out}" --nodes 2147483648)
expect_error("--nodes: '1e6' is not an integer" --out "${out}" --nodes 1e6)
expect_error("--classes: 1 ${int} [2, 65536])" --out "${out}" --classes 1)
expect_error("--features: 0 ${int} [1, 1048576])" --out "${out}" --features 0)
expect_error("--features: -64 ${int} [1, 1048576])"
             --out "${out}" --features=-64)
expect_error("--threads: 0 ${int} [1, 1024])" --out "${out}" --threads 0)
expect_error("--seed: -1 ${int} [0, 18446744073709551615])" --out "${out}" --seed -1)
expect_error("--seed: 18446744073709551616 ${int} [0, 18446744073709551615])"
             --out "${out}" --seed 18446744073709551616)

# Real numbers: NaN, infinities, signs, ranges.
expect_error("--homophily: 'nan' is not a number" --out "${out}" --homophily nan)
expect_error("--homophily: 1.5 is out of range (expected a number in [0, 1])"
             --out "${out}" --homophily 1.5)
expect_error("--noise: 'NaN' is not a number" --out "${out}" --noise NaN)
expect_error("--noise: -1 is out of range (expected a number in [0, 1000])"
             --out "${out}" --noise -1)
expect_error("--avg-degree: 0 is out of range (expected a finite number > 0)"
             --out "${out}" --avg-degree 0)
expect_error("--avg-degree: -3 is out of range (expected a finite number > 0)"
             --out "${out}" --avg-degree -3)
expect_error("--avg-degree: inf is out of range (expected a finite number > 0)"
             --out "${out}" --avg-degree inf)
expect_error("--avg-degree: 'nan' is not a number" --out "${out}" --avg-degree nan)
expect_error("--power-law-exponent: 2 is out of range (expected a number in (2, 100]: the mean degree is infinite at 2 and below)"
             --out "${out}" --power-law-exponent 2)
expect_error("--power-law-exponent: 1.5 is out of range (expected a number in (2, 100])"
             --out "${out}" --power-law-exponent 1.5)

# Fractions.
expect_error("--train: 1.5 is out of range (expected a fraction in [0, 1])"
             --out "${out}" --train 1.5)
expect_error("--val: -0.1 is out of range (expected a fraction in [0, 1])"
             --out "${out}" --val -0.1)
expect_error("--test: 'nan' is not a number" --out "${out}" --test nan)
expect_error("--train 0.7, --val 0.2 and --test 0.3 add up to 1.2, more than 1"
             --out "${out}" --train 0.7 --val 0.2 --test 0.3)

# Classes given as proportions.
expect_error("--class-proportions: at least two classes need a proportion above 0"
             --out "${out}" --class-proportions 1,0,0)
expect_error("--class-proportions: '-1' is not a proportion (a finite number >= 0)"
             --out "${out}" --class-proportions 1,-1)
expect_error("--class-proportions: 'nan' is not a proportion (a finite number >= 0)"
             --out "${out}" --class-proportions 1,nan)
expect_error("--class-proportions: '' is not a proportion (a finite number >= 0)"
             --out "${out}" --class-proportions 1,,2)
expect_error("--class-proportions lists 2 classes, but --classes is 3"
             --out "${out}" --classes 3 --class-proportions 1,1)

# Sizes that do not fit together.
expect_error("--avg-degree 60 is too large for 100 vertices (at most (N - 1) / 2 = 49.5: half of all vertex pairs)"
             --out "${out}" --nodes 100 --avg-degree 60)
expect_error("--avg-degree 0.1 gives no edge on 4 vertices"
             --out "${out}" --nodes 4 --avg-degree 0.1)
expect_error("50 same-class and 0 cross-class edges do not fit: the classes hold 9 same-class and 181 cross-class vertex pairs (lower --avg-degree, or change --homophily or the classes)"
             --out "${out}" --nodes 20 --avg-degree 5 --homophily 1 --seed 3)

# An --out that cannot be made: below a file, below a missing folder, a file.
file(WRITE "${WORK}/file" "")
expect_error("--out: cannot create folder '${WORK}/file/out': not a directory"
             --out "${WORK}/file/out")
expect_error("--out: cannot create folder '${WORK}/missing/out': no such file or directory"
             --out "${WORK}/missing/out")
if(EXISTS "${WORK}/missing")
  message(SEND_ERROR "gnnc-gen-sbm created ${WORK}/missing")
endif()
set(out_saved "${out}")
set(out "${WORK}/file2")
file(WRITE "${out}" "")
execute_process(COMMAND "${GEN}" --out "${out}" RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT err STREQUAL
   "gnnc-gen-sbm: error: --out: '${out}' exists and is not a folder\n")
  message(SEND_ERROR "--out naming a file: exit ${rc}, ${err}")
endif()
set(out "${out_saved}")

# The extremes are accepted: these runs fail only for the sizes above.
expect_error("--avg-degree 60 is too large for 100 vertices (at most (N - 1) / 2 = 49.5: half of all vertex pairs)"
             --out "${out}" --nodes 100 --avg-degree 60 --classes 65536
             --features 1048576 --threads 1024 --seed 18446744073709551615
             --homophily 0 --noise 1000 --power-law-exponent 100
             --train 1 --val 0 --test 0)
expect_error("--avg-degree 60 is too large for 100 vertices (at most (N - 1) / 2 = 49.5: half of all vertex pairs)"
             --out "${out}" --nodes 100 --avg-degree 60 --homophily 1
             --noise 0 --power-law-exponent 2.0000001 --train 0.25 --val 0.25
             --test 0.5)

# And a small run succeeds, printing its one summary line.
execute_process(COMMAND "${GEN}" --out "${out}" --nodes 2 --avg-degree 0.5
                --homophily 0 --classes 2 --seed 1
                RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT err STREQUAL "" OR
   NOT stdout MATCHES "^gnnc-gen-sbm: [^\n]*: N=2 E=2 classes=2 features=64 [^\n]*\n$")
  message(SEND_ERROR "the 2-vertex run: exit ${rc}\n${stdout}${err}")
endif()
