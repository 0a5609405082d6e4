# Link profiles of the local emulated cluster: the one place that says how each
# network is shaped. Sourced by scripts/lib/cluster.sh.
#
# A profile is a function cluster_profile_<name> that prints one line per shaped
# network: "<network> <tc qdisc arguments>", where <network> is primary or cop.
# The qdisc goes on both ends of every host's veth on that network (egress of
# each side), so traffic is shaped in both directions. netem does not exist on
# these kernels: only rate shaping (tbf/htb), no delay or loss.
# To add a profile, add a function and its name to CLUSTER_PROFILES.

CLUSTER_PROFILES="native ethernet10"

# Unshaped veths: what the kernel gives.
cluster_profile_native() { :; }

# 10 Mbit/s Ethernet on the primary network, as the thesis's workstation LAN.
# burst is a little over one full frame, so the link never bursts above line rate;
# limit keeps about 50 ms of queue, like a switch port buffer.
cluster_profile_ethernet10() {
  echo "primary tbf rate 10mbit burst 1600 limit 65536"
}
