"""site.yml ends a node play whose phase the run's --tags / --skip-tags leave out (its first task, a meta end_play),
instead of stepping every node through the end-of-role step of roles whose tasks all skip. The condition is written in
Jinja; here it is held to Ansible's own rule (Taggable.evaluate_tags) for a task carrying only the play's tags."""

import itertools
import os

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play import Play
from ansible.template import Templar, trust_as_template

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))


def _site():
    with open(os.path.join(REPO, 'playbooks', 'site.yml')) as fh:
        return yaml.safe_load(fh)


def _node_plays():
    return [p for p in _site() if p['hosts'] == 'roce_nodes' and p.get('pre_tasks')]


def _ansible_runs(play_tags, run_tags, skip_tags):
    play = Play.load({'hosts': 'all', 'gather_facts': False, 'tags': list(play_tags), 'tasks': [{'meta': 'noop'}]},
                     loader=DataLoader())
    # The play's one task (compile() adds Ansible's implicit flush_handlers tasks, tagged always).
    [task] = [t for b in play.compile() for t in b.block if not t.implicit]
    return task.evaluate_tags(run_tags, skip_tags, {})


def test_every_node_play_of_a_phase_starts_with_the_end_play_check():
    plays = _node_plays()
    assert [p['tags'] for p in plays] == [['preflight'], ['host_network'], ['host_network', 'sriov'], ['verify']]
    for p in plays:
        first = p['pre_tasks'][0]
        assert first['ansible.builtin.meta'] == 'end_play' and first['tags'] == ['always']
        # The condition reads the play's own tags, not a copy.
        assert p['vars']['__site_phase_tags'] == p['tags']


RUN_TAGS = [['all'], ['never'], ['always'], ['tagged'], ['untagged'], ['preflight'], ['host_network'], ['sriov'],
            ['operator', 'sriov'], ['verify'], ['never', 'verify']]
SKIP_TAGS = [[], ['preflight'], ['sriov'], ['tagged'], ['all'], ['verify', 'host_network']]


@pytest.mark.parametrize('play', range(4))
def test_the_condition_ends_the_play_exactly_when_ansible_would_skip_its_tasks(play):
    p = _node_plays()[play]
    cond = p['pre_tasks'][0]['when']
    checked = 0
    for run, skip in itertools.product(RUN_TAGS, SKIP_TAGS):
        templar = Templar(loader=DataLoader(), variables={'ansible_run_tags': run, 'ansible_skip_tags': skip,
                                                          '__site_phase_tags': p['tags']})
        ends = templar.template(trust_as_template('{{ %s }}' % cond))
        assert ends is (not _ansible_runs(p['tags'], run, skip)), (p['tags'], run, skip)
        checked += 1
    assert checked == len(RUN_TAGS) * len(SKIP_TAGS)


def test_the_change_impact_play_reads_the_nodes_exactly_when_the_run_selects_the_host_phase():
    [play] = [p for p in _node_plays() if p['tags'] == ['host_network', 'sriov']]
    expression = play['vars']['__site_host_network_selected']
    for run, skip in itertools.product(RUN_TAGS, SKIP_TAGS):
        templar = Templar(loader=DataLoader(), variables={'ansible_run_tags': run, 'ansible_skip_tags': skip})
        selected = templar.template(trust_as_template(expression.strip()))
        assert selected is _ansible_runs(['host_network'], run, skip), (run, skip)
