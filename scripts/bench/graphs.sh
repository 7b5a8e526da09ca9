# shellcheck shell=bash
# The benchmark graphs of issues 16 and 17 (sourced through lib.sh; needs GRAPHFS_BIN).
#   bench_graph FAMILY SCALE GRID GEN_DIR CHUNK
#                          the graph, made once into GEN_DIR; sets NAME, EDGE_FILE, G, VERTICES,
#                          EDGES, COLUMN, FIRST (below)
#   random_starts SEED [COUNT]
#                          COUNT start vertices with out-edges, drawn from EDGE_FILE
#   first_source EDGE_FILE the source vertex of an edge list's first edge (it has an out-edge)
#   mix_jobs MIX           run-jobs --jobs of a job mix over the graph (below)
#   mix_arrivals MIX       its run-jobs arrival flags (P16's Poisson arrivals; none for the others)
#   mix_work MIX           an estimate of the mix's own memory (vertex state, read buffers)
#   jobs_disk_room JOBS    MiB a disk needs beside the graph for the vertex state files of JOBS
#                          (a run-jobs --jobs list)
#
# bench_graph FAMILY SCALE GRID GEN_DIR CHUNK: generates (once) and preprocesses (once, blocks
# sorted by source, PARTITIONS partitions, default 16) a weighted graph of the family and indexes
# it with chunks of CHUNK. Sets NAME, EDGE_FILE, G (the grid directory), VERTICES, EDGES, COLUMN and FIRST (the
# source of the first edge). Families:
#   rmat        Graph500 R-MAT of 2^SCALE vertices, ids permuted (no locality)
#   rmat-local  the same without the permutation (gen-rmat --no-permute: R-MAT's own ids, hubs low)
#   grid        gen-grid GRID (W x H), 10% of edges dropped: a road-like lattice, row-major ids
# The stripe unit is graphfs-stripe's choice (a grid's block, column / P², caps it: 1M for the
# grid's 45 MB column at 1024 x 1024) unless STRIPE_UNIT says one.
# shellcheck disable=SC2034  # the variables it sets are the callers'
bench_graph() {
  local family=$1 scale=$2 grid=$3 gen_dir=$4 chunk=$5
  local -a gen
  case $family in
    rmat) NAME=rmat$scale; gen=("$GRAPHFS_BIN/gen-rmat" --scale "$scale" --weighted --seed 1); VERTICES=$((1 << scale)) ;;
    rmat-local) NAME=rmat${scale}l; gen=("$GRAPHFS_BIN/gen-rmat" --scale "$scale" --weighted --seed 1 --no-permute)
                VERTICES=$((1 << scale)) ;;
    grid) NAME=grid$grid; gen=("$GRAPHFS_BIN/gen-grid" --width "${grid%x*}" --height "${grid#*x}" --drop 0.1 --weighted --seed 1)
          VERTICES=$(( ${grid%x*} * ${grid#*x} )) ;;
    *) echo "unknown family $family" >&2; exit 2 ;;
  esac
  EDGE_FILE=$gen_dir/$NAME.bin
  local parts=${PARTITIONS:-16}
  G=$gen_dir/${NAME}s$([[ $parts == 16 ]] || echo "-p$parts")
  if [[ ! -f $EDGE_FILE ]]; then
    mkdir -p "$gen_dir"
    "${gen[@]}" -o "$EDGE_FILE"
  fi
  # Blocks sorted by source (preprocess --sort-sources): a chunk then holds the edges of a narrow
  # range of sources, so a few active vertices make a few chunks active, not every chunk of their
  # rows. Every configuration reads the same sorted graph.
  if [[ ! -f $G/meta ]]; then
    "$GRAPHFS_BIN/preprocess" -i "$EDGE_FILE" -o "$G" -v "$VERTICES" -p "$parts" -t 1 --sort-sources
  fi
  "$GRAPHFS_BIN/graphfs-index" -q --chunk-size "$chunk" "$G" ||
    "$GRAPHFS_BIN/graphfs-index" -q --force --chunk-size "$chunk" "$G"
  COLUMN=$(stat -c %s "$G/column")
  EDGES=$(( $(stat -c %s "$EDGE_FILE") / 12 ))
  FIRST=$(first_source "$EDGE_FILE")
}

# first_source EDGE_FILE: the source of the first edge of a binary edge list (gen-rmat's, gen-grid's).
first_source() { od -An -td4 -N4 "$1" | tr -d ' '; }

# random_starts SEED [COUNT]: COUNT (4) start vertices with out-edges: the sources of edges at
# fixed random positions of $EDGE_FILE.
random_starts() {
  python3 - "$EDGE_FILE" "$EDGES" "$1" "${2:-4}" <<'PY'
import random, struct, sys
path, edges, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
with open(path, "rb") as f:
    out = []
    for _ in range(count):
        f.seek(rng.randrange(edges) * 12)
        out.append(str(struct.unpack("<i", f.read(4))[0]))
print(" ".join(out))
PY
}

# mix_jobs MIX: the jobs of a mix over the graph bench_graph made (FIRST, random_starts):
#   W1 {pagerank-delta, wcc, sssp, bfs}    W4 {sssp x 4, random starts}    W5 {bfs x 4, random starts}
#   S1 {bfs} and S2 {pagerank-delta}: a single job; S0 {bfs from vertex 0} (issue 42's grid BFS:
#   on a grid, vertex 0 is a corner, and the frontier a diagonal that sweeps the grid)
#   P16 {16 jobs: 4 each of bfs, sssp, wcc, pagerank-delta}, Poisson arrivals (mix_arrivals)
mix_jobs() {
  local s
  case $1 in
    W1) echo "pagerank-delta,wcc,sssp:$FIRST,bfs:$FIRST" ;;
    W4) read -r -a s <<< "$(random_starts 4)"; echo "sssp:${s[0]},sssp:${s[1]},sssp:${s[2]},sssp:${s[3]}" ;;
    W5) read -r -a s <<< "$(random_starts 5)"; echo "bfs:${s[0]},bfs:${s[1]},bfs:${s[2]},bfs:${s[3]}" ;;
    S1) echo "bfs:$FIRST" ;;
    S0) echo "bfs:0" ;;
    S2) echo "pagerank-delta:0.01" ;;
    P16) read -r -a s <<< "$(random_starts 16 8)"; echo "bfs:${s[0]},sssp:${s[1]},wcc,pagerank-delta:0.01,bfs:${s[2]},sssp:${s[3]},wcc,pagerank-delta:0.01,bfs:${s[4]},sssp:${s[5]},wcc,pagerank-delta:0.01,bfs:${s[6]},sssp:${s[7]},wcc,pagerank-delta:0.01" ;;
    *) echo "unknown mix $1" >&2; exit 2 ;;
  esac
}

mix_arrivals() { if [[ $1 == P16 ]]; then echo "--arrivals poisson:5 --seed 16"; fi; }

# mix_work MIX: vertex state (64 B per vertex) plus each job's read buffers (2 threads x 24 MiB,
# 4 jobs; 16 jobs: 4 times that): a generous memory cgroup limit for the jobs on a mount, where
# the graph's memory is the daemon's.
mix_work() { case $1 in P16) echo $(( VERTICES * 4 * 64 + (2048 << 20) )) ;; *) echo $(( VERTICES * 64 + (512 << 20) )) ;; esac; }

# jobs_disk_room JOBS: MiB of room a disk needs beside the graph for the vertex state files the
# jobs of JOBS (run-jobs --jobs, comma-separated) write next to it — 32 B per vertex and job, more
# than any app writes (pagerank-delta 12) — plus 1 GiB. P16's 16 jobs at scale 24 write ~2 GiB,
# more than a fixed 2 GiB of room held once ext4 took its share.
jobs_disk_room() { local n; n=$(tr ',' '\n' <<< "$1" | wc -l); echo $(( 1024 + ((VERTICES * 32 * n) >> 20) )); }
