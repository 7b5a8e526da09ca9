"""Example engines in numpy: BFS (bfs.py) and PageRank (pagerank.py), each unmodified (reading
``column`` through np.memmap) and integrated (a graphfs job), with the C++ apps' results."""
