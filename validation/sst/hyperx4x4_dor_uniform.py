# SST Merlin: 2D HyperX 4x4 (full connectivity in each dimension, width 1),
# 4 hosts/router (64 hosts), DOR routing (1 VC), uniform random traffic via
# merlin.offered_load.
# Usage: sst hyperx4x4_dor_uniform.py --model-options="--load 0.5 --stats out.csv"
import sys, argparse
import sst
from sst.merlin.base import *
from sst.merlin.endpoint import *
from sst.merlin.interface import *
from sst.merlin.topology import *
from sst.merlin.targetgen import *

ap = argparse.ArgumentParser()
ap.add_argument("--load", type=float, required=True)      # fraction of link_bw
ap.add_argument("--warmup", default="10us")
ap.add_argument("--collect", default="40us")
ap.add_argument("--stats", default="stats.csv")
a = ap.parse_args(sys.argv[1:])

LINK_BW   = "4GB/s"
FLIT      = "8B"
PKT       = "64B"     # 8 flits
LAT       = "20ns"    # router input/output latency and link latency

topo = topoHyperX()
topo.shape = "4x4"
topo.width = "1x1"
topo.local_ports = 4
topo.algorithm = "DOR"
topo.link_latency = LAT
topo.host_link_latency = LAT

router = hr_router()
router.link_bw = LINK_BW
router.flit_size = FLIT
router.xbar_bw = LINK_BW
router.input_latency = LAT
router.output_latency = LAT
router.input_buf_size = "4kB"    # per VC
router.output_buf_size = "4kB"   # per VC
router.num_vns = 1
router.xbar_arb = "merlin.xbar_arb_lru"
topo.router = router

nif = LinkControl()
nif.link_bw = LINK_BW
nif.input_buf_size = "4kB"
nif.output_buf_size = "4kB"
# Stats pass a single name (string), not a list: in this sst-core version
# buildEnabledStatistics() writes the returned stat objects back into the
# caller's list, which breaks pymerlin when the same list is reused per endpoint.
for s in ("packet_latency", "send_bit_count"):
    nif.enableStatistics(s, {"type": "sst.AccumulatorStatistic", "rate": "0ns", "startat": a.warmup})

ep = OfferedLoadJob(0, topo.getNumNodes())
ep.network_interface = nif
ep.pattern = UniformTarget()
ep.offered_load = a.load
ep.link_bw = LINK_BW
ep.message_size = PKT
ep.warmup_time = a.warmup
ep.collect_time = a.collect
ep.drain_time = "1us"

system = System()
system.setTopology(topo)
system.allocateNodes(ep, "linear")
system.build()

sst.setStatisticLoadLevel(9)
sst.setStatisticOutput("sst.statOutputCSV", {"filepath": a.stats, "separator": ","})
