// The volume as its own files and tests/volume/ see it: volume.h with the definitions of what
// its internals section names — the lower libraries' types (disk set, I/O engine, striped
// files, cache, LP memory, read cost) and the volume's internal services (indexes, schedules,
// extent reads, striped sources, compressed files, extent maps' pieces, run batches).
// A front end includes volume.h only.
#pragma once

#include "cache/chunk_cache.h"
#include "cache/unit_layout.h"
#include "chunkindex/lp_memory.h"
#include "chunkindex/read_cost.h"
#include "striping/disk_set.h"
#include "striping/io_engine.h"
#include "striping/manifest.h"
#include "striping/striped_file.h"
#include "volume/internal/extent_reads.h"
#include "volume/internal/frame_tier.h"
#include "volume/internal/graph_index.h"
#include "volume/internal/graph_schedule.h"
#include "volume/internal/mapped_piece.h"
#include "volume/internal/packed_file.h"
#include "volume/internal/read_cost_model.h"
#include "volume/internal/run_batches.h"
#include "volume/internal/striped_source.h"
#include "volume/volume.h"
