# ctest train.flags: gnnc-train rejects malformed and out-of-range numeric
# flags with one error line and exit status 1, and accepts the extremes of
# each range; NaN features need --allow-nonfinite. Every run names a --data
# path (by default one that does not exist), so a value that is wrongly
# accepted ends in a different error instead of a training run.
#
#   cmake -DTRAIN=path/to/gnnc-train -DWORK=scratch/dir -P check_flags.cmake
if(NOT TRAIN OR NOT WORK)
  message(FATAL_ERROR "usage: cmake -DTRAIN=gnnc-train -DWORK=dir -P check_flags.cmake")
endif()
set(missing "${WORK}/no-such-dataset")
set(data "${missing}")

# expect_error(<message> <arguments...>): gnnc-train --data <data>
# <arguments> exits 1 and prints "gnnc-train: error: <message>".
function(expect_error expected)
  execute_process(COMMAND "${TRAIN}" --data "${data}" ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 60)
  string(REPLACE ";" " " args "${ARGN}")
  if(NOT rc EQUAL 1)
    message(SEND_ERROR "gnnc-train ${args}: exit status ${rc}, expected 1\n${err}")
  endif()
  string(FIND "${err}" "gnnc-train: error: ${expected}\n" at)
  if(at EQUAL -1)
    message(SEND_ERROR "gnnc-train ${args}: expected the error\n"
                       "  ${expected}\ngot\n  ${err}")
  endif()
endfunction()

set(range "is out of range (expected an integer in")
expect_error("--epochs: 100000000000000000000 ${range} [1, 1000000])"
             --epochs 100000000000000000000)
expect_error("--epochs: 1000001 ${range} [1, 1000000])" --epochs 1000001)
expect_error("--epochs: 0 ${range} [1, 1000000])" --epochs=0)
expect_error("--epochs: -5 ${range} [1, 1000000])" --epochs -5)
expect_error("--epochs: '12x' is not an integer" --epochs 12x)
expect_error("--epochs: '' is not an integer" --epochs=)
expect_error("--epochs: ' 7' is not an integer" "--epochs= 7")
expect_error("--seeds: 10001 ${range} [1, 10000])" --seeds 10001)
expect_error("--log-every: 99999999999 ${range} [1, 1000000])"
             --log-every 99999999999)
expect_error("--seed: 18446744073709551616 ${range} [0, 18446744073709551615])"
             --seed 18446744073709551616)
expect_error("--seed: '1.5' is not an integer" --seed 1.5)
expect_error("--seed 18446744073709551615 with --seeds 2: the last seed is past 2^64 - 1"
             --seed 18446744073709551615 --seeds 2)
expect_error("--check-min-test-acc: 1.5 is out of range (expected a number in [0, 1])"
             --check-min-test-acc 1.5)
expect_error("--check-min-test-acc: 'nan' is not a number"
             --check-min-test-acc nan)
expect_error("--lr: -0.1 is out of range (expected a finite number >= 0)"
             --lr -0.1)
expect_error("--lr: 1e999 is out of range (expected a finite number >= 0)"
             --lr 1e999)
expect_error("--lr: inf is out of range (expected a finite number >= 0)"
             --lr inf)
expect_error("--weight-decay: '5e-4x' is not a number" --weight-decay 5e-4x)
expect_error("--epochs needs a value" --quiet --epochs)

# The extremes are accepted: the run gets as far as loading the data.
expect_error("${missing}: cannot open: no such file or directory"
             --epochs 1000000 --seeds 10000 --log-every 1000000
             --seed 18446744073709541616 --check-min-test-acc 1 --lr 0
             --weight-decay 0)
expect_error("${missing}: cannot open: no such file or directory"
             --seed 18446744073709551615 --seeds 1 --check-min-test-acc 0)

# NaN and infinite features are an error unless --allow-nonfinite: with it,
# the 2-node folder loads and is refused only for its sizes.
get_filename_component(nonfinite "${CMAKE_CURRENT_LIST_DIR}/testdata/nonfinite"
                       ABSOLUTE)
set(data "${nonfinite}")
expect_error("${nonfinite}/x.npy: element [0, 1] is nan (non-finite values are rejected); --allow-nonfinite accepts them")
expect_error("${nonfinite}: 2 features and 2 classes, but the gcn model for cora was compiled for 1433 and 7"
             --allow-nonfinite)

# The mini-batch flags.
set(data "${missing}")
expect_error("--fanouts: '0' is not a fanout (an integer in [1, 1000000], or -1 for every neighbour)"
             --minibatch --fanouts 25,0)
expect_error("--fanouts: '' is not a fanout (an integer in [1, 1000000], or -1 for every neighbour)"
             --minibatch --fanouts 25,)
expect_error("--eval-fanouts: '-2' is not a fanout (an integer in [1, 1000000], or -1 for every neighbour)"
             --minibatch --eval-fanouts -2,5)
expect_error("--batch-size: 0 ${range} [1, 1073741824])" --minibatch --batch-size 0)
expect_error("--workers: 257 ${range} [0, 256])" --minibatch --workers 257)
expect_error("--prefetch: 0 ${range} [1, 1024])" --minibatch --prefetch 0)
expect_error("--sampler: expected neighbor or labor, got 'uniform'"
             --minibatch --sampler uniform)
expect_error("--minibatch: GraphSAGE2Block has two layers, so --fanouts (and --eval-fanouts) need two values, got '15,10,5'"
             --minibatch --model sage --fanouts 15,10,5)
expect_error("--minibatch: no compiled block model for --model gcn --dataset cora (models: sage, gat (on cora))"
             --minibatch --model gcn)
expect_error("${missing}: cannot open: no such file or directory"
             --minibatch --model gat --workers 0 --prefetch 1024 --batch-size 1073741824)

# The fixed-size flags.
expect_error("--fixed-size: expected bound or fit, got 'max'"
             --minibatch --fixed-size max)
expect_error("--fixed-size: expected bound or fit, got ''"
             --minibatch --fixed-size=)
expect_error("--oversize: expected error, skip or trim, got 'drop'"
             --minibatch --fixed-size bound --oversize drop)
set(caps "expected V0,V1,V2:E0,E1 (vertex capacities, then edge capacities, integers in [1, 2^40])")
expect_error("--capacities: ${caps}, got '4000,1600,257'"
             --minibatch --capacities 4000,1600,257)
expect_error("--capacities: ${caps}, got '4000,0,257:9000,1400'"
             --minibatch --capacities 4000,0,257:9000,1400)
expect_error("--capacities: ${caps}, got '4000,1600,257:9000,'"
             --minibatch --capacities 4000,1600,257:9000,)
expect_error("--capacities: ${caps}, got '4000,1600,257:x'"
             --minibatch --capacities 4000,1600,257:x)
expect_error("--capacities: ${caps}, got '1,1,1:1099511627777,1'"
             --minibatch --capacities 1,1,1:1099511627777,1)
expect_error("--fixed-size and --capacities exclude each other (--capacities gives the capacities explicitly)"
             --minibatch --fixed-size fit --capacities 4000,1600,257:9000,1400)
expect_error("--oversize needs --fixed-size or --capacities"
             --minibatch --oversize trim)
expect_error("--fixed-size needs --minibatch" --fixed-size bound)
expect_error("--capacities needs --minibatch" --capacities 4000,1600,257:9000,1400)
expect_error("--capacities: GraphSAGE2Block has two layers, so it needs 3 vertex and 2 edge capacities (V0,V1,V2:E0,E1), got 2 and 1"
             --minibatch --model sage --capacities 4000,257:9000)
expect_error("--capacities: level 0 has 100 vertices, fewer than level 1 (1600); a block's sources include its destinations"
             --minibatch --model sage --capacities 100,1600,257:9000,1400)
expect_error("--capacities: the seed level has 1 vertex; it needs room for a seed and the padding vertex"
             --minibatch --model sage --capacities 100,10,1:9000,1400)
# Data-parallel training.
expect_error("--comm: expected threads, mpi or nccl, got 'tcp'" --comm tcp)
expect_error("--ranks: 0 ${range} [1, 256])" --comm threads --ranks 0)
expect_error("--ranks is the rank count of --comm threads (with mpi and nccl, mpirun -np sets it)"
             --comm mpi --ranks 2)
set(needs_comm "are options of data-parallel training: they need --comm")
foreach(flag "--ranks;2" "--embeddings;32" "--memory;chunked" "--resume"
             "--no-eval"
             "--max-steps;5" "--no-dropout" "--checkpoint;${WORK}/c"
             "--kill-at;1:1:1")
  execute_process(COMMAND "${TRAIN}" --data "${data}" --minibatch ${flag}
                  RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 60)
  string(FIND "${err}" "${needs_comm}" at)
  if(NOT rc EQUAL 1 OR at EQUAL -1)
    message(SEND_ERROR "gnnc-train --minibatch ${flag}: exit status ${rc}, "
                       "expected 1 and '... ${needs_comm}'\n${err}")
  endif()
endforeach()
expect_error("--memory: expected continuous, chunked or distributed, got 'shared'"
             --comm threads --memory shared)
expect_error("--embeddings: 0 ${range} [1, 65536])" --comm threads --embeddings 0)
expect_error("--emb-optimizer: expected sgd, adam, adagrad or rmsprop, got 'lion'"
             --comm threads --emb-optimizer lion)
expect_error("--emb-lr: 'nan' is not a number" --comm threads --emb-lr nan)
expect_error("--kill-at: expected RANK:EPOCH:STEP, got '1:x'" --comm mpi --kill-at 1:x)
expect_error("--kill-at needs --comm mpi or nccl (it kills the process, which holds every thread rank)"
             --comm threads --kill-at 1:1:1)
expect_error("--resume needs --checkpoint DIR" --comm threads --resume)
expect_error("--oversize skip with --comm: a rank would skip a step that its peers take; use trim or error"
             --comm threads --fixed-size bound --oversize skip)
expect_error("--comm trains the two-block models: --model sage or gat"
             --comm threads --model gcn)
expect_error("--check-blocks runs in one process: drop --comm"
             --comm threads --check-blocks)
# Accepted: every rank gets as far as loading the data.
expect_error("rank 0: ${missing}: cannot open: no such file or directory"
             --comm threads --ranks 3 --model gat --embeddings 32
             --memory continuous --fixed-size bound --no-dropout)
# Accepted: the run gets as far as loading the data.
expect_error("${missing}: cannot open: no such file or directory"
             --minibatch --model sage --fixed-size=bound)
expect_error("${missing}: cannot open: no such file or directory"
             --minibatch --model sage --fixed-size fit --oversize skip)
expect_error("${missing}: cannot open: no such file or directory"
             --minibatch --model sage --capacities 4000,1600,257:9000,1400 --oversize=trim)
