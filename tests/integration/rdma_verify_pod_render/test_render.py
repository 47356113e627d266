# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pod mode, render: runs the role with ansible-playbook against inventories/example and validates
the written manifests with kubernetes-validate (core Kubernetes 1.30 schema, strict).

Run from the repository root after ``make link`` (ansible.cfg resolves gpufabric.roce through .build/collections),
or with ANSIBLE_COLLECTIONS_PATH pointing at a directory holding ansible_collections/gpufabric/roce:
``pytest tests/integration/rdma_verify_pod_render``
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import os
import shutil
import subprocess
import sys

import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def test_render_and_validate(tmp_path):
    beside = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    playbook = beside if os.path.exists(beside) else shutil.which('ansible-playbook')
    kv = pytest.importorskip('kubernetes_validate')
    if not playbook:
        pytest.skip('ansible-playbook not on PATH')
    env = dict(os.environ, RENDER_DIR=str(tmp_path), ANSIBLE_STDOUT_CALLBACK='default')
    run = subprocess.run([playbook, '-i', os.path.join(REPO, 'inventories', 'example', 'hosts.yml'),
                          os.path.join(HERE, 'render.yml')], env=env, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert 'no hosts matched' not in run.stdout
    assert os.path.exists(os.path.join(str(tmp_path), 'rdma-verify-pods.yaml')), run.stdout[-4000:]
    with open(os.path.join(str(tmp_path), 'rdma-verify-pods.yaml')) as f:
        pods = [d for d in yaml.safe_load_all(f) if d]
    assert [p['spec']['nodeSelector']['kubernetes.io/hostname'] for p in pods] == ['node1', 'node2']
    for pod in pods:
        kv.validate(pod, '1.30', strict=True)
        assert pod['metadata']['annotations']['k8s.v1.cni.cncf.io/networks'] == 'roce-' + pod['spec']['nodeSelector']['kubernetes.io/hostname']
        assert pod['spec']['containers'][0]['resources']['requests'] == {'nvidia.com/roce_' + pod['spec']['nodeSelector']['kubernetes.io/hostname']: '1'}
        assert 'IPC_LOCK' in pod['spec']['containers'][0]['securityContext']['capabilities']['add']
