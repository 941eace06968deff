# Sourced by the load scripts: with PIN=1 (the default) on a machine of two
# cores or more, sets on_server and on_load to taskset commands that run
# the servers on SERVER_CPUS (default 0) and the load generator on
# LOAD_CPUS (default the other cores), and says so; otherwise leaves both
# empty.
PIN=${PIN:-1}
CPUS=$(nproc)
SERVER_CPUS=${SERVER_CPUS:-0}
LOAD_CPUS=${LOAD_CPUS:-1-$((CPUS - 1))}
on_server=()
on_load=()
if [[ "$PIN" == 1 && "$CPUS" -ge 2 ]] && command -v taskset >/dev/null 2>&1; then
	on_server=(taskset -c "$SERVER_CPUS")
	on_load=(taskset -c "$LOAD_CPUS")
	echo "pinning: servers on CPU ${SERVER_CPUS}, wrk on CPU ${LOAD_CPUS}"
else
	echo "pinning: off (PIN=${PIN}, ${CPUS} CPUs)"
fi
