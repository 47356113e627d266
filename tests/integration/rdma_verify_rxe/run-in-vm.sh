# Runs INSIDE a throwaway virtme-ng VM (see README.md).
OUT=${OUT:-/tmp/h3out}
O=$OUT/role; rm -rf "$O"; mkdir -p "$O"
exec > "$O/log" 2>&1
set -x
ulimit -l unlimited
modprobe rdma_rxe; modprobe 8021q
ip link add va type veth peer name vb
ip link set va up; ip link set vb up
ip link add link va name va.100 type vlan id 100; ip link set va.100 up
ip addr add 10.255.0.1/30 dev va.100; ip addr add 10.255.0.5/30 dev va.100
rdma link add rxe0 type rxe netdev va
sleep 2
export PATH=${ANSIBLE_BIN_DIR:-/tmp/setup/venv/bin}:$PATH
export HOME=${TMPDIR:-/tmp}/rdma-verify-e2e-home
export ANSIBLE_COLLECTIONS_PATH=${ANSIBLE_COLLECTIONS_PATH:-/tmp/h3c}
export ANSIBLE_LOCAL_TEMP=$HOME/tmp ANSIBLE_REMOTE_TEMP=$HOME/rtmp ANSIBLE_ASYNC_DIR=$HOME/async
export ANSIBLE_PYTHON_INTERPRETER=${ANSIBLE_PYTHON_INTERPRETER:-$(command -v python3)}
export ANSIBLE_STDOUT_CALLBACK=default ANSIBLE_CALLBACK_RESULT_FORMAT=yaml OUT
mkdir -p "$HOME"
cd "$(dirname "$0")" || exit 1
REPORT=pass ansible-playbook -i inventory.ini playbook.yml
echo "rc pass run=$?"
# a threshold the lab cannot reach must fail the play and say what was measured
REPORT=threshold ansible-playbook -i inventory.ini playbook.yml -e rdma_verify_min_bw_gbps=100 -e rdma_verify_max_lat_us=1
echo "rc threshold run=$?"
