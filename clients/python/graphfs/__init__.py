"""graphfs: a Python client of graphfs's jobs protocol and the grid format, with numpy.

    import numpy as np, graphfs
    with graphfs.Job("/mnt/graphs/twitter", partition_size="64M") as job:
        for lp in job.iteration(np.array([0])):          # active vertices: ids, a bool mask, or None (all)
            for edges in lp.arrays():                     # read-only views of the shared LP memory
                print(lp.seq, edges["source"][:3], edges["target"][:3])

See clients/python/README.md.
"""

from .errors import (
    AccessDeniedError,
    BusyError,
    GraphfsError,
    GridFormatError,
    InvalidArgumentError,
    JobExistsError,
    NotFoundError,
    NotOnMountError,
    NotSupportedError,
    ProtocolError,
    error_for,
)
from .grid import UNWEIGHTED_EDGE, WEIGHTED_EDGE, Grid, GridMeta, edge_dtype, open_grid, partition_bounds, read_meta, read_offsets
from .jobs import Job
from .partition import Partition, Piece
from .protocol import (
    DEFAULT_PARTITION_BYTES,
    MAP_DTYPE,
    PIECE_DTYPE,
    PiecesFile,
    active_bitmap_bytes,
    find_mount,
    parse_map,
    parse_next,
    parse_pieces,
    parse_size,
    parse_status_vertices,
    words_bitmap_bytes,
)

__version__ = "0.1.0"

__all__ = [name for name in dir() if not name.startswith("_")]
