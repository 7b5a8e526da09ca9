#!/usr/bin/env python3
"""Replays a graphfs cache trace (mount option cache_trace=FILE) against eviction policies.

    scripts/bench/cache_sim.py TRACE --budgets 0.10,0.25,0.50 --of BYTES

Each trace line is "ns pid file unit bytes", one per unit lookup (a 1 MiB FUSE request).
Lookups of one unit by one process less than --same-pass seconds apart are one *visit*
(what a cache decides on). For each budget (a fraction of --of bytes) it prints the bytes
loaded from disk by:
  none      no cache: every visit loads its unit;
  lru       least recently used;
  priority  graphfs's policy: visits in the window, a newcomer must outrank a resident;
  min       Belady's MIN with bypass (evict, or refuse, the unit needed furthest in the
            future): no online policy can load fewer bytes with the same budget.
The model has no read-ahead and no sharing of loads in flight; it bounds what eviction alone
can do for a given access sequence.
"""
import argparse
import collections
import heapq


def read_visits(path, same_pass_ns):
    last = {}
    visits = []  # (ns, pid, key, length)
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 5:
                continue
            ns, pid, fid, unit, length = (int(x) for x in parts)
            key = (fid, unit)
            prev = last.get((pid, key))
            last[(pid, key)] = ns
            if prev is not None and ns - prev <= same_pass_ns:
                continue
            visits.append((ns, pid, key, length))
    visits.sort()
    return visits


def sim_lru(visits, cap):
    cache = collections.OrderedDict()
    used = loaded = 0
    for _, _, key, length in visits:
        if key in cache:
            cache.move_to_end(key)
            continue
        loaded += length
        if length > cap:
            continue
        while used + length > cap:
            _, l = cache.popitem(last=False)
            used -= l
        cache[key] = length
        used += length
    return loaded


def sim_priority(visits, cap, window_ns):
    history = collections.defaultdict(collections.deque)  # key -> visit times in the window
    cache = {}  # key -> (length, last_tick)
    used = loaded = tick = 0

    def prio(key, now):
        h = history[key]
        while h and now - h[0] > window_ns:
            h.popleft()
        return len(h)

    for ns, _, key, length in visits:
        tick += 1
        history[key].append(ns)
        if key in cache:
            cache[key] = (cache[key][0], tick)
            continue
        loaded += length
        if length > cap:
            continue
        p = prio(key, ns)
        order = sorted(cache, key=lambda k: (prio(k, ns), cache[k][1]))
        victims, freed = [], 0
        for k in order:
            if used + length - freed <= cap:
                break
            if prio(k, ns) >= p:
                break
            victims.append(k)
            freed += cache[k][0]
        if used + length - freed > cap:
            continue
        for k in victims:
            used -= cache.pop(k)[0]
        cache[key] = (length, tick)
        used += length
    return loaded


def sim_stream(visits, cap, idle_ns=10_000_000_000):
    """Predicted next use from the streams: each process scans a file cyclically at its own
    pace; a unit's next use is when the nearest active process behind it will reach it."""
    pos = {}     # (pid, file) -> (unit index, ns, units per ns)
    units = collections.defaultdict(int)  # file -> units seen
    cache = {}   # key -> length
    used = loaded = 0

    def next_use(key, now):
        fid, idx = key
        n = max(units[fid], idx + 1)
        best = float("inf")
        for (pid, f), (at, ns, rate) in pos.items():
            if f != fid or now - ns > idle_ns or rate <= 0:
                continue
            dist = (idx - at) % n
            if dist == 0:
                dist = n  # it just read it: next pass
            best = min(best, dist / rate)
        return best

    for ns, pid, key, length in visits:
        fid, idx = key
        units[fid] = max(units[fid], idx + 1)
        prev = pos.get((pid, fid))
        rate = 0.0
        if prev is not None:
            at, t, r = prev
            step = (idx - at) % units[fid]
            inst = step / max(ns - t, 1)
            rate = inst if r <= 0 else 0.8 * r + 0.2 * inst
        pos[(pid, fid)] = (idx, ns, rate)
        if key in cache:
            continue
        loaded += length
        if length > cap:
            continue
        mine = next_use(key, ns)
        ranked = sorted(((next_use(k, ns), k) for k in cache), key=lambda x: -x[0])
        victims, freed = [], 0
        for use, k in ranked:
            if used + length - freed <= cap:
                break
            if use <= mine:
                break
            victims.append(k)
            freed += cache[k]
        if used + length - freed > cap:
            continue
        for k in victims:
            used -= cache.pop(k)
        cache[key] = length
        used += length
    return loaded


def sim_min(visits, cap):
    n = len(visits)
    nxt = [n] * n
    seen = {}
    for i in range(n - 1, -1, -1):
        key = visits[i][2]
        nxt[i] = seen.get(key, n)
        seen[key] = i
    cache = {}  # key -> (length, next use)
    heap = []   # (-next use, key)
    used = loaded = 0
    for i, (_, _, key, length) in enumerate(visits):
        if key in cache:
            cache[key] = (length, nxt[i])
            heapq.heappush(heap, (-nxt[i], key))
            continue
        loaded += length
        if length > cap or nxt[i] == n:
            continue
        # Evict units needed later than this one until it fits; refuse it otherwise.

        while used + length > cap and heap:
            neg, k = heapq.heappop(heap)
            if k not in cache or cache[k][1] != -neg:
                continue  # stale heap entry
            if -neg <= nxt[i]:
                heapq.heappush(heap, (neg, k))
                break
            used -= cache.pop(k)[0]

        if used + length > cap:
            continue
        cache[key] = (length, nxt[i])
        heapq.heappush(heap, (-nxt[i], key))
        used += length
    return loaded


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--budgets", default="0.10,0.25,0.50")
    ap.add_argument("--of", type=int, required=True, help="bytes the budgets are fractions of")
    ap.add_argument("--same-pass", type=float, default=2.0)
    ap.add_argument("--window", type=float, default=60.0)
    a = ap.parse_args()
    visits = read_visits(a.trace, int(a.same_pass * 1e9))
    total = sum(v[3] for v in visits)
    print("visits %d, bytes visited %.2f GB" % (len(visits), total / 1e9))
    print("budget\tbytes\tnone_GB\tlru_GB\tpriority_GB\tstream_GB\tmin_GB\tpriority_vs_lru\tstream_vs_lru\tmin_vs_lru")
    for f in (float(x) for x in a.budgets.split(",")):
        cap = int(a.of * f)
        lru = sim_lru(visits, cap)
        pri = sim_priority(visits, cap, int(a.window * 1e9))
        st = sim_stream(visits, cap)
        mn = sim_min(visits, cap)
        print("%.2f\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%+.1f%%\t%+.1f%%\t%+.1f%%" % (
            f, cap, total / 1e9, lru / 1e9, pri / 1e9, st / 1e9, mn / 1e9,
            100.0 * (pri - lru) / lru, 100.0 * (st - lru) / lru, 100.0 * (mn - lru) / lru))


if __name__ == "__main__":
    main()
