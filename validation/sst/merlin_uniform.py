# SST Merlin: one of the cross-check's three networks under uniform random traffic from
# merlin.offered_load endpoints (validation/sst.py, docs/validation/sst.md):
#   torus      2D torus 8x8, 1 host per router, dimension order (merlin.torus, dateline VCs)
#   hyperx     2D HyperX 4x4, 4 hosts per router, "DOR" (1 VC)
#   dragonfly  a=4 routers per group, p=2 hosts per router, h=2 global links per router,
#              9 groups (one global link per pair), 72 hosts, "ugal" or, with
#              --routing adaptive-local, "adaptive-local" (3 VCs each)
# Traffic: uniform random, or with --shift N each host sends to host + N (merlin.targetgen.shift;
# on the dragonfly N = 8 is the same host of the next group, hopsim's adv with adv_offset 1).
# Usage: sst merlin_uniform.py --model-options="--network torus --load 0.5 --stats out.csv"
import sys, argparse
import sst
from sst.merlin.base import *
from sst.merlin.endpoint import *
from sst.merlin.interface import *
from sst.merlin.topology import *
from sst.merlin.targetgen import *

ap = argparse.ArgumentParser()
ap.add_argument("--network", choices=["torus", "hyperx", "dragonfly"], required=True)
ap.add_argument("--routing", choices=["ugal", "adaptive-local"], default="ugal")  # dragonfly only
ap.add_argument("--shift", type=int, default=0)            # 0: uniform random
# dragonfly only: which group each global port leads to; Merlin's default "absolute" is
# hopsim's global_arrangement = "consecutive", "relative" its "palmtree"
ap.add_argument("--global-routes", choices=["absolute", "relative"], default="absolute")
ap.add_argument("--load", type=float, required=True)      # fraction of link_bw
ap.add_argument("--warmup", default="10us")
ap.add_argument("--collect", default="40us")
ap.add_argument("--stats", default="stats.csv")
a = ap.parse_args(sys.argv[1:])

LINK_BW   = "4GB/s"
FLIT      = "8B"
PKT       = "64B"     # 8 flits
LAT       = "20ns"    # router input/output latency and link latency

if a.network == "torus":
    topo = topoTorus()
    topo.shape = "8x8"
    topo.width = "1x1"
    topo.local_ports = 1
elif a.network == "hyperx":
    topo = topoHyperX()
    topo.shape = "4x4"
    topo.width = "1x1"
    topo.local_ports = 4
    topo.algorithm = "DOR"
else:
    topo = topoDragonFly()
    topo.hosts_per_router = 2
    topo.routers_per_group = 4
    topo.intergroup_links = 1      # links between each pair of groups -> 2 global ports/router
    topo.num_groups = 9
    topo.algorithm = a.routing
    topo.global_routes = a.global_routes
    # pymerlin wires the links by global_routes, but merlin.dragonfly builds its routes from
    # a parameter of another name, global_route_mode (absolute unless given): both are set.
    topo._declareParams("main", ["global_route_mode"])
    topo.global_route_mode = a.global_routes
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
if a.shift:
    ep.pattern = ShiftTarget()
    ep.pattern.shift = a.shift
else:
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
