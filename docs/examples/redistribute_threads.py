import threading, numpy as np, gdap

# Two ranks as threads of one process move a 6 x 4 array from row blocks to column blocks.
def block(size, p, r):  # rank r's block of `size` over p ranks: ceil(size / p) each, as gdap.layout.block
    b = -(-size // p)
    return dict(dist_type="b", size=size, proc_grid_size=p, proc_grid_rank=r, start=min(size, b * r),
                stop=min(size, b * (r + 1)))
rows = lambda r: [block(6, 2, r), block(4, 1, 0)]
cols = lambda r: [block(6, 1, 0), block(4, 2, r)]
src_map, dst_map = gdap.GlobalMap([rows(0), rows(1)]), gdap.GlobalMap([cols(0), cols(1)])
comms, out = gdap.group(2), {}

def rank(r):
    plan = gdap.Plan(src_map, dst_map, np.float64, comms[r])
    section = np.arange(24.0).reshape(6, 4)[3 * r:3 * r + 3]        # this rank's rows
    out[r] = gdap.redistribute(comms[r], plan, section, np.empty(plan.dst_shape))

threads = [threading.Thread(target=rank, args=(r,)) for r in range(2)]
[t.start() for t in threads]; [t.join() for t in threads]
assert (out[1] == np.arange(24.0).reshape(6, 4)[:, 2:]).all()      # columns 2-3 of the whole array
print(out[1])
