# Runs INSIDE a throwaway virtme-ng VM (see README.md): soft-RoCE on a veth + VLAN, then the playbook.
# Needs perftest, rdma-core, iproute2, ansible-core on the (shared) host filesystem, and the collection
# reachable through ANSIBLE_COLLECTIONS_PATH.
OUT=${OUT:-/tmp/h3out}
O=$OUT/e2e; rm -rf "$O"; mkdir -p "$O"
exec > "$O/log" 2>&1
set -x
ulimit -l unlimited
modprobe rdma_rxe; modprobe 8021q
ip link add va type veth peer name vb
ip link set va up; ip link set vb up
ip addr add 192.0.2.1/24 dev va; ip addr add 192.0.2.2/24 dev vb
ip link add link va name va.100 type vlan id 100; ip link set va.100 up
ip addr add 10.255.0.1/30 dev va.100
rdma link add rxe0 type rxe netdev va
sleep 2
export PATH=${ANSIBLE_BIN_DIR:-/tmp/setup/venv/bin}:$PATH
export HOME=${TMPDIR:-/tmp}/perftest-e2e-home
export ANSIBLE_COLLECTIONS_PATH=${ANSIBLE_COLLECTIONS_PATH:-/tmp/h3c}
export ANSIBLE_LOCAL_TEMP=$HOME/tmp ANSIBLE_REMOTE_TEMP=$HOME/rtmp ANSIBLE_ASYNC_DIR=$HOME/async
export ANSIBLE_PYTHON_INTERPRETER=${ANSIBLE_PYTHON_INTERPRETER:-$(command -v python3)}
export ANSIBLE_STDOUT_CALLBACK=default ANSIBLE_CALLBACK_RESULT_FORMAT=yaml OUT
mkdir -p "$HOME"
cd "$(dirname "$0")" && ansible-playbook -i localhost, playbook.yml
echo rc=$?
